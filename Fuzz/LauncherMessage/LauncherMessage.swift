import MAMFuzzing
import MAMWire

/// A packet on the broker's launcher socket (docs/PROTOCOL.md, "Launcher hand-off"). Signing in
/// takes a credential rather than root, so these bytes are not the launcher's alone.
@_cdecl("LLVMFuzzerTestOneInput")
public func launcherMessage(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let message: LauncherMessage
    do {
        message = try LauncherMessage.decode(bytes)
    } catch {
        WireErrors.check(error, in: bytes)
        return 0
    }
    FuzzCheck.require(message.encode() == bytes, "accepted bytes that re-encode differently: \(message)")
    // What reaches the broker's log from a message is one line, whatever its text held.
    for text in texts(of: message) {
        let shown = LogText.escaped(text)
        FuzzCheck.require(!shown.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0 == "\u{2028}" || $0 == "\u{2029}" },
                          "LogText left a control character in \(shown.debugDescription)")
    }
    return 0
}

func texts(of message: LauncherMessage) -> [String] {
    switch message {
    case let .adopt(a): return [a.bundleID] + [a.account, a.manifestDigest, a.executableDigest].compactMap { $0 }
    case let .violation(v): return [v.bundleID, v.syscall, v.time] + [v.detail].compactMap { $0 }
    case let .wipe(account, app): return [account] + [app].compactMap { $0 }
    case let .signIn(_, account, secret): return [account] + [secret].compactMap { $0 }
    case let .controlReply(_, detail): return [detail]
    case let .setDevice(change): return [change]
    case .advanceClock, .sync, .restart, .ended, .reloadTenant: return []
    }
}

@main enum LauncherMessageFuzz {
    static func main() { FuzzTarget.main(launcherMessage) }
}
