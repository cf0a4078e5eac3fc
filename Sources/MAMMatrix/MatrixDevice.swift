import MAMPolicy
import MAMScript

/// A device the matrix performs cells on: one broker and the apps it serves, each app driven
/// through its scripted mode (docs/SCRIPTING.md). Apps are keyed by lowercased bundle id; a
/// second process of an app by its key with `CellPerformer.secondInstance`.
///
/// Two shells implement it, as the broker has two: the live one (sandboxed processes and a
/// `mambroker`) and the embedded one (the broker's core in memory, the apps modelled on the
/// kit's answers). The cell's logic (CellPerformer) is the same on both.
public protocol MatrixDevice: AnyObject {
    /// The accounts the app runs with; nil when it does not run.
    func accounts(of key: String) -> [String]?
    /// Makes the apps of `wanted` run with the accounts given (those running with others are
    /// stopped, the missing started, greeted and signed in to their other accounts); the other
    /// running apps keep running.
    func ensure(_ wanted: [String: [String]]) throws
    func stop(_ key: String)
    /// A scripted command's result (an `error` field when the app refused it).
    func call(_ key: String, _ command: ScriptCommand) throws -> JSONValue
    /// The user signs the account in to the running app, as the launcher does.
    func signIn(_ key: String, _ account: String) throws
    /// The app's next event of `kind`: waited for when `wait`, else only one already there.
    func event(_ key: String, _ kind: String, wait: Bool) -> JSONValue?
    /// Every event the app has not been asked for, taken.
    func drainEvents(_ key: String) -> [JSONValue]
    /// The identity the runner last set on the app (nil: its launch identity).
    func identity(of key: String) -> String?
    func setIdentity(_ identity: String?, of key: String)
    /// Where the broker's decision records end now.
    func recordMark() -> UInt64
    /// The app the broker's last open-url record since `mark` names as the receiver.
    func urlReceiver(since mark: UInt64) -> String?
}
