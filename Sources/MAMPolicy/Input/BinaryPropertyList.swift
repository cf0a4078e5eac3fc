import Foundation

/// A look at a binary property list before Foundation reads it. Foundation's reader crashes the
/// process turning a set (a binary-only type no Info.plist or debug policy holds) into a Swift
/// value, and a manifest is an app author's file that the broker and the launcher, as root,
/// load: a list with a set, or one whose object table points outside it, is refused here.
public enum BinaryPropertyList {
    /// Why `data` must not be handed to `PropertyListSerialization`; nil when it may (any text
    /// that is not a binary list, whatever its content, is left to Foundation).
    public static func problem(_ data: Data) -> String? {
        guard data.starts(with: Array("bplist".utf8)) else { return nil }
        let bytes = [UInt8](data)
        // The last 32 bytes: sizes, the object count, the top object, the offset table's start.
        let trailer = bytes.count - 32
        guard trailer >= 8 else { return "a binary property list shorter than its header and trailer" }
        let offsetSize = Int(bytes[trailer + 6])
        let objects = number(bytes, at: trailer + 8, size: 8)
        let table = number(bytes, at: trailer + 24, size: 8)
        guard (1...8).contains(offsetSize), objects >= 1, table >= 8, table <= trailer,
              objects <= (trailer - table) / offsetSize else {
            return "a binary property list whose object table does not fit in it"
        }
        for i in 0..<objects {
            let offset = number(bytes, at: table + i * offsetSize, size: offsetSize)
            guard offset >= 8, offset < table else { return "a binary property list with an object outside it" }
            if bytes[offset] >> 4 == 0xC { return "a binary property list holding a set, which no app or policy setting is" }
        }
        return nil
    }

    /// A big-endian unsigned number; one too large for an offset reads as Int.max.
    static func number(_ bytes: [UInt8], at start: Int, size: Int) -> Int {
        var n: UInt64 = 0
        for b in bytes[start..<start + size] { n = n << 8 | UInt64(b) }
        return n > UInt64(Int.max) ? Int.max : Int(n)
    }
}
