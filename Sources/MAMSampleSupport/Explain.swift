import MAMKit
import MAMPolicy

/// Decisions in plain words: what happened, and when something was stopped, the message the
/// user would see and the rule (docs/SEMANTICS.md) that decided it. The words describe the
/// decision; they never decide anything themselves.
public enum Explain {
    /// `action` is what the user tried, as a phrase ("paste into Mail").
    public static func decision(_ d: SharingDecision, _ action: String) -> String {
        var lines: [String]
        switch d.outcome {
        case .allowed: lines = ["Allowed: \(action)."]
        case .blocked: lines = ["Blocked: \(action)."]
        case .filtered: lines = ["Blocked: \(action) (the target is not offered)."]
        case .encrypted: lines = ["Delivered encrypted: \(action); only an app managed for the same account can read it."]
        case .switched: lines = ["Allowed after an identity switch: \(action)" + (d.detail.isEmpty ? "." : " (now acting as \(d.detail)).")]
        case .rewritten: lines = ["Redirected: \(action)" + (d.detail.isEmpty ? "." : " went as \(d.detail).")]
        }
        if !d.allowed && d.rule == Rule.pasteInBlocked.id {
            // 4.3.3 refuses text that is not the organization's; the placeholder the paste reads
            // (observed) speaks of the organization's data, which is not why.
            lines.append("  Why: this app's policy does not take text pasted from that app (the text is not your organization's).")
            if !d.message.isEmpty { lines.append("  The paste reads instead: \"\(d.message)\"") }
        } else if !d.allowed {
            lines.append("  Why: " + (d.message.isEmpty ? "your organization's policy does not allow it." : d.message))
        }
        lines.append("  Rule: \(d.rule)" + (d.allowed || d.detail.isEmpty ? "" : " (\(d.detail))"))
        return lines.joined(separator: "\n")
    }

    /// A refusal or failure that came as an error (the broker refused the request itself).
    public static func failure(_ error: any Error, _ action: String) -> String {
        if let e = error as? MAMKitError { return "Could not \(action): \(e.detail)" }
        return "Could not \(action): \(error)"
    }

    /// An identity as a person reads it.
    public static func identity(_ identity: Identity?) -> String {
        switch identity {
        case nil: return "no account (none chosen yet)"
        case .personal?: return "personal"
        case let .account(a)?: return a.upn ?? a.name
        }
    }

    /// The policy that applies, in a few lines.
    public static func policy(_ p: AppPolicy) -> String {
        guard p.isManaged else { return "Policy for \(identity(p.identity)): none (unmanaged: nothing is restricted)." }
        let account = p.identity?.account.map { $0.upn ?? $0.name }
        func yes(_ b: Bool) -> String { b ? "yes" : "no" }
        let saves = p.saveToLocations(account: account).filter(\.value).map(\.key.name).sorted()
        let opens = p.openFromLocations(account: account).filter(\.value).map(\.key.name).sorted()
        // The three levels that decide most sharing, as the admin set them (Graph's names).
        let levels = p.party.activePolicy.map {
            "\n  send org data to: \($0.send.rawValue)    receive data from: \($0.receive.rawValue)    clipboard: \($0.clipboard.rawValue)"
                + ($0.clipboardExceptionLength > 0 ? " (up to \($0.clipboardExceptionLength) characters anywhere)" : "")
        } ?? ""
        return """
        Policy for \(identity(p.identity)): managed\(levels)
          PIN required: \(yes(p.isPINRequired))    file encryption: \(yes(p.isFileEncryptionRequired))
          managed browser required: \(yes(p.isManagedBrowserRequired))    printing: \(yes(p.isPrintingAllowed))    backup: \(yes(p.isBackupAllowed))
          notifications: \(p.notificationPolicy.rawValue)    contact sync: \(yes(p.isContactSyncAllowed))
          may save to: \(saves.isEmpty ? "nowhere" : saves.joined(separator: ", "))
          may open from: \(opens.isEmpty ? "nowhere" : opens.joined(separator: ", "))
        """
    }
}
