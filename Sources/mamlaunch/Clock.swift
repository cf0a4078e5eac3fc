import ArgumentParser
import Foundation
import Glibc
import MAMCatalog
import MAMLauncher
import MAMPolicy
import MAMWire

struct ClockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Move a broker's virtual clock.",
        discussion: """
            A broker started with `mambroker --clock virtual` keeps time that moves only when told; \
            experiments and tests use it to skip the hours the service waits (a failed enrollment is \
            retried after 24 hours, policy is checked in every 8). Everything due in the skipped time \
            happens at once, in order.
            """,
        subcommands: [Advance.self]
    )

    struct Advance: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the broker's virtual clock forward.",
            discussion: "DURATION is a number with a unit: 500ms, 15s, 90m, 24h, 2d."
        )

        @Argument(help: "How far: 500ms, 15s, 90m, 24h or 2d.")
        var duration: String

        @OptionGroup var broker: BrokerSocket

        func run() throws {
            let ms = try Self.milliseconds(duration)
            try broker.send(.advanceClock(milliseconds: ms))
        }

        static func milliseconds(_ text: String) throws -> UInt64 {
            let units: [(String, UInt64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
            for (suffix, factor) in units where text.hasSuffix(suffix) {
                let number = text.dropLast(suffix.count)
                if let n = UInt64(number), n > 0, n <= UInt64.max / factor { return n * factor }
            }
            throw ValidationError("\"\(text)\" is not a duration; write a whole number and a unit: 500ms, 15s, 90m, 24h, 2d")
        }
    }
}

/// `--broker`: the running broker a control command talks to (clock, sync, wipe, signin).
struct BrokerSocket: ParsableArguments {
    @Option(help: ArgumentHelp("The broker's launcher socket.", valueName: "PATH"))
    var broker: String

    /// Sends one control message to the broker and prints its answer.
    func send(_ message: LauncherMessage) throws {
        try checkLauncherSocket(broker)
        let socket: WireSocket
        // Runtime failures, not usage: plain errors (exit 1), not the usage and 64.
        do { socket = try WireSocket.connect(broker) } catch { throw World.Failure(description: "cannot reach the broker at \(broker): \(error.detail)") }
        defer { socket.close() }
        do { try message.send(on: socket) } catch { throw World.Failure(description: "\(broker): \(error.detail)") }
        guard let raw = socket.receiveRaw(), case let .controlReply(ok, detail)? = try? LauncherMessage.decode(raw.bytes) else {
            // A socket that takes the connection and closes it without a reply is most often not
            // the launcher socket (a broker started with its own --socket names).
            throw World.Failure(description: "\(broker): the broker did not answer; --broker must be its launcher socket (DIR/launcher.sock by default), not the one apps connect to")
        }
        print(detail)
        if !ok { throw ExitCode(1) }
    }
}

/// `--broker` must name the broker's launcher socket. The public socket beside it accepts the
/// connection too (as an unknown app's) and then closes it on the first launcher message, so
/// without this the launcher only learns "the connection is closed" and the broker's log alone
/// says why.
func checkLauncherSocket(_ path: String) throws {
    let url = URL(fileURLWithPath: path)
    guard url.lastPathComponent == "mambroker.sock" else { return }
    let launcher = url.deletingLastPathComponent().appendingPathComponent("launcher.sock").path
    throw World.Failure(description: "--broker \(path) is the broker's public socket, where apps connect; "
        + "the launcher talks to its launcher socket: --broker \(launcher)")
}

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Make every running app check in with the MAM service now.",
        discussion: "Apps check in every 8 hours on their own (seed 000); after a tenant reload, `sync` delivers the new policy at once."
    )

    @OptionGroup var broker: BrokerSocket

    func run() throws { try broker.send(.sync) }
}

struct WipeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wipe",
        abstract: "Issue a selective wipe of an account, as an admin would.",
        discussion: """
            The account's data is wiped from the app (or every app it is enrolled in): a running app is told \
            at once, a stopped one when it next starts. Its personal data stays. Once no app holds the account, \
            its key is destroyed, so what was encrypted under it can never be read again.

            A wipe targets the enrollments that exist when it is issued, and names them; an enrollment made \
            later is never wiped by it. With nothing enrolled for the account (in APP), it is refused: \
            "wipe refused: nothing to wipe", exit status 1.
            """
    )

    @Option(help: ArgumentHelp("The account to wipe.", valueName: "ACCOUNT"))
    var user: String

    @Option(help: ArgumentHelp("Only this app: its Apps/ folder name or bundle id, in any case.", valueName: "APP"))
    var app: String?

    @OptionGroup var broker: BrokerSocket

    func run() throws { try broker.send(.wipe(account: user, app: app)) }
}

struct SignInCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signin",
        abstract: "Sign an account in to a running app, as its user, with the account's password.",
        discussion: """
            The emulated identity provider's interactive sign-in: the password is asked for on the terminal \
            (not echoed), or read as one line from standard input, and checked by the broker against the \
            account's credential in the tenant file (`mamlaunch credential` makes one). The app may then \
            enroll the account, and get its key, token and configuration (docs/PROTOCOL.md, "Signed in").
            """
    )

    @Option(help: ArgumentHelp("The account to sign in.", valueName: "ACCOUNT"))
    var user: String

    @Option(help: ArgumentHelp("The app's pid (mamlaunch and the broker's log name it).", valueName: "PID"))
    var pid: Int32

    @OptionGroup var broker: BrokerSocket

    func run() throws { try broker.send(.signIn(pid: pid, account: user, secret: try readPassword("password for \(user): "))) }
}

struct CredentialCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "credential",
        abstract: "Make a tenant user's credential from a password, for the tenant file's \"credential\".",
        discussion: """
            Prints pbkdf2-sha256:<rounds>:<salt>:<derived key>: PBKDF2 with HMAC-SHA-256 over the password \
            and a random 16-byte salt, the rounds stored with it. The password is not kept anywhere. The \
            broker checks a sign-in's password on a worker thread, so more rounds slow the sign-in, not \
            the other apps.
            """
    )

    @Option(help: ArgumentHelp("PBKDF2 rounds, from \(CredentialFormat.rounds.lowerBound) to \(CredentialFormat.rounds.upperBound).",
                               valueName: "N"))
    var rounds = Credential.defaultRounds

    func validate() throws {
        guard CredentialFormat.rounds.contains(rounds) else {
            throw ValidationError("--rounds \(rounds): must be from \(CredentialFormat.rounds.lowerBound) to \(CredentialFormat.rounds.upperBound)")
        }
    }

    func run() throws {
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        print(Credential.make(password: try readPassword("password: "), salt: salt, rounds: rounds))
    }
}

/// A password from the terminal with echo off, or one line from standard input when that is no
/// terminal (scripts and tests).
func readPassword(_ prompt: String) throws -> String {
    var saved = termios()
    let terminal = isatty(0) == 1 && tcgetattr(0, &saved) == 0
    if terminal {
        StandardStreams.writeError(prompt)
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSANOW, &quiet)
    }
    defer {
        if terminal {
            tcsetattr(0, TCSANOW, &saved)
            StandardStreams.writeError("\n")
        }
    }
    guard let line = Swift.readLine(strippingNewline: true), !line.isEmpty else { throw World.Failure(description: "no password given (on the terminal, or as one line on standard input)") }
    return line
}
