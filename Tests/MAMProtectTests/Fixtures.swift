import Crypto
import Foundation
import MAMProtect
import MAMTestSupport

/// What the protection tests share: two accounts with their keys, a personal owner, seeded
/// bytes and scratch folders.
enum Fixture {
    static let alice = try! DataOwner(upn: "alice@contoso.com", objectID: "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f")
    static let bob = try! DataOwner(upn: "bob@contoso.com", objectID: "0b0b0b0b-1111-4222-8333-444455556666")
    static let personal = try! DataOwner(upn: "carol@outlook.com", objectID: "")
    static let aliceKey = try! ProtectionKey(SymmetricKey(size: .bits256))
    static let bobKey = try! ProtectionKey(SymmetricKey(size: .bits256))

    static func bytes(_ count: Int, seed: UInt64 = 1) -> [UInt8] {
        var g = SplitMix64(state: seed)
        var out = [UInt8](repeating: 0, count: count)
        var i = 0
        while i < count {
            let word = g.next()
            for b in 0..<min(8, count - i) { out[i + b] = UInt8(truncatingIfNeeded: word >> (8 * b)) }
            i += 8
        }
        return out
    }
}

/// A fresh folder under the system's temporary folder, removed when the test is done with it.
final class ScratchFolder {
    let path: String

    init(_ name: String = #function) {
        let base = FileManager.default.temporaryDirectory.path
        path = "\(base)/mamprotect-\(name.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(8))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    func write(_ name: String, _ bytes: [UInt8]) -> String {
        let p = file(name)
        _ = FileManager.default.createFile(atPath: p, contents: Data(bytes))
        return p
    }

    func read(_ name: String) -> [UInt8] {
        Array(FileManager.default.contents(atPath: file(name)) ?? Data())
    }
}
