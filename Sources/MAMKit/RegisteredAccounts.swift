import Foundation
import Glibc

/// The accounts the app registered with the SDK (`registeredAccountIds`): registered by
/// `registerAndEnroll` or an enrollment the service made for the app, whether it succeeded or
/// waits for its 24-hour retry; gone with `deregisterAndUnenroll` or a wipe. The SDK keeps the
/// list on the device, so it is written to the app's container (`.mamkit-registered`, one
/// account a line) and read back at start as hostile input: at most 64 lines of at most 512
/// bytes of UTF-8, anything else dropped.
final class RegisteredAccounts: Sendable {
    static let limit = 64
    static let maximumLength = 512
    let path: String
    private struct List {
        var accounts: [String]
        /// Counts every removal; `removedAt` holds the count at each account's latest one.
        var removals: UInt64 = 0
        var removedAt: [String: UInt64] = [:]
    }
    private let list: Locked<List>

    init(directory: String = FileManager.default.currentDirectoryPath) {
        path = (directory as NSString).appendingPathComponent(".mamkit-registered")
        list = Locked(List(accounts: Self.read(path)))
    }

    var all: [String] { list.current.accounts }

    /// Where the removals stand now: what `add(_:unlessRemovedSince:)` compares with.
    var mark: UInt64 { list.current.removals }

    /// Adds an account (compared without case); false when the list is full. With
    /// `unlessRemovedSince`, not when the account was removed after that mark: a notice handled
    /// across an await (its policy refreshed) must not register an account the app unenrolled
    /// meanwhile.
    @discardableResult
    func add(_ account: String, unlessRemovedSince mark: UInt64? = nil) -> Bool {
        guard Self.isStorable(account) else { return false }
        let (changed, list) = self.list.withLock { state -> (Bool, [String]) in
            if let mark, let removed = state.removedAt[account.lowercased()], removed > mark { return (false, state.accounts) }
            if state.accounts.contains(where: { $0.lowercased() == account.lowercased() }) { return (false, state.accounts) }
            guard state.accounts.count < Self.limit else { return (false, state.accounts) }
            state.accounts.append(account)
            return (true, state.accounts)
        }
        if changed { write(list) }
        return changed || list.contains { $0.lowercased() == account.lowercased() }
    }

    /// Removes an account, and any other spelling of it the caller names with it.
    func remove(_ names: [String]) {
        let lowered = Set(names.map { $0.lowercased() })
        let (changed, list) = self.list.withLock { state -> (Bool, [String]) in
            state.removals += 1
            for name in lowered { state.removedAt[name] = state.removals }
            let before = state.accounts.count
            state.accounts.removeAll { lowered.contains($0.lowercased()) }
            return (state.accounts.count != before, state.accounts)
        }
        if changed { write(list) }
    }

    static func isStorable(_ account: String) -> Bool {
        !account.isEmpty && account.utf8.count <= maximumLength && !account.contains(where: { $0.isNewline })
    }

    static func read(_ path: String) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        let cap = limit * (maximumLength + 1)
        guard let data = try? handle.read(upToCount: cap + 1), data.count <= cap, let text = String(data: data, encoding: .utf8) else { return [] }
        var out: [String] = []
        for line in text.split(separator: "\n") where out.count < limit {
            let account = String(line)
            if isStorable(account), !out.contains(where: { $0.lowercased() == account.lowercased() }) { out.append(account) }
        }
        return out
    }

    /// Written whole to a new file, then renamed over the old: a kill never leaves half a list.
    private func write(_ list: [String]) {
        let temporary = path + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array(list.map { $0 + "\n" }.joined().utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else {
            unlink(temporary)
            return
        }
        _ = rename(temporary, path)
    }
}
