import Foundation
import MAMConfigurator
import MAMFuzzing
import MAMPolicy

/// The ordered property-list reader and writer mamconfigurator edits an author's Info.plist
/// and entitlements with: what it reads, it writes out and reads back the same.
@_cdecl("LLVMFuzzerTestOneInput")
public func plistDocument(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let document: PlistDocument
    do {
        document = try PlistDocument.read(Data(bytes), file: "Info.plist")
    } catch {
        FuzzCheck.failure(error, file: "Info.plist", in: nil)
        return 0
    }
    guard let written = try? document.data() else {
        // Only a binary list may have no written form (a value the binary writer refuses).
        FuzzCheck.require(document.format == .binary, "an XML document that cannot be written")
        return 0
    }
    do {
        let again = try PlistDocument.read(written, file: "Info.plist")
        FuzzCheck.require(again.format == document.format && same(again.root, document.root),
                          "a document changed on the way back:\n\(String(decoding: written, as: UTF8.self))")
    } catch {
        FuzzCheck.require(false, "what was read does not read back once written: \(error)\n\(String(decoding: written, as: UTF8.self))")
    }
    return 0
}

/// Node equality, with a NaN equal to itself (a `<real>nan</real>` is one value to an author).
func same(_ a: Node, _ b: Node) -> Bool {
    switch (a.value, b.value) {
    case let (.real(x), .real(y)): return x == y || (x.isNaN && y.isNaN)
    case let (.array(x), .array(y)): return x.count == y.count && zip(x, y).allSatisfy(same)
    case let (.object(x), .object(y)): return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && same($0.value, $1.value) }
    default: return a == b
    }
}

@main enum PlistDocumentFuzz {
    static func main() { FuzzTarget.main(plistDocument) }
}
