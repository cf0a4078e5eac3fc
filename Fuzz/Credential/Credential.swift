import MAMFuzzing
import MAMPolicy

/// A tenant user's stored credential (`pbkdf2-sha256:<rounds>:<salt hex>:<key hex>`), which the
/// broker (root) parses before it spends a PBKDF2 run on a sign-in. What parses is within the
/// bounds the format sets, and is written in exactly the hex it was read from.
@_cdecl("LLVMFuzzerTestOneInput")
public func credential(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = String(decoding: FuzzTarget.bytes(data, size), as: UTF8.self)
    switch CredentialFormat.parse(text) {
    case let .failure(problem):
        FuzzCheck.require(!problem.message.isEmpty, "a refusal with no reason")
    case let .success((rounds, salt, key)):
        FuzzCheck.require(CredentialFormat.rounds.contains(rounds) && salt.count >= 16 && key.count == 32,
                          "parsed rounds \(rounds), a \(salt.count)-byte salt and a \(key.count)-byte key")
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        FuzzCheck.require(parts.count == 4 && parts[2].lowercased() == hex(salt) && parts[3].lowercased() == hex(key),
                          "\(text.debugDescription) is not the hex of what it parsed to")
    }
    return 0
}

func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
}

@main enum CredentialFuzz {
    static func main() { FuzzTarget.main(credential) }
}
