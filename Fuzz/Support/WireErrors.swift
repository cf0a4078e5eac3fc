import MAMWire

/// What a refusal of the wire decoders must say: why, and where within the input.
public enum WireErrors {
    public static func check(_ error: WireError, in bytes: [UInt8]) {
        FuzzCheck.require(!error.detail.isEmpty, "a refusal with no detail (\(error.code))")
        // Every byte offset a detail names ("at byte 17", "byte 3: ...") lies within the input.
        for offset in offsets(in: error.detail) {
            FuzzCheck.require(offset <= bytes.count, "\"\(error.detail)\" names byte \(offset) of a \(bytes.count)-byte input")
        }
    }

    static func offsets(in detail: String) -> [Int] {
        var out: [Int] = []
        var rest = Substring(detail)
        while let r = rest.range(of: "byte ") {
            rest = rest[r.upperBound...]
            if let n = Int(rest.prefix { $0.isASCII && $0.isNumber }) { out.append(n) }
        }
        return out
    }
}
