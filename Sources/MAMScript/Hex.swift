/// Lower-case hex of bytes, as the scripted lines carry digests (`sha256`). Written by table:
/// `String(format: "%02x")` per byte went through Foundation's formatter for each of a digest's
/// 32 bytes, at every document and every cell of a live matrix.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    public static func lowercase<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
