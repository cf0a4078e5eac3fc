import MAMWire

/// The rules every name an app gives must keep before the broker uses it: file names, content
/// types, target and source bundle ids. A name is one path component of at most 255 bytes of
/// valid UTF-8 (the decoder already refused anything else) with no NUL, no `/` and no control
/// character, and is neither `.` nor `..`.
public enum NameRules {
    public static let maximumBytes = 255

    public static func check(_ value: String, field: String) -> WireError? {
        if value.isEmpty { return WireError(.fieldOutOfRange, "\(field) is empty") }
        if value.utf8.count > maximumBytes {
            return WireError(.fieldOutOfRange, "\(field) is \(value.utf8.count) bytes; the limit is \(maximumBytes)")
        }
        if value == "." || value == ".." { return WireError(.fieldOutOfRange, "\(field) \"\(value)\" is not a name") }
        for (i, s) in value.unicodeScalars.enumerated() {
            if s == "/" { return WireError(.fieldOutOfRange, "\(field) has a / at character \(i); a name is one path component") }
            // C0, DEL and C1 controls (NUL included), and the Unicode line and paragraph separators.
            if s.value < 0x20 || (0x7F...0x9F).contains(s.value) || s.value == 0x2028 || s.value == 0x2029 {
                return WireError(.fieldOutOfRange, "\(field) has control character U+\(String(s.value, radix: 16, uppercase: true)) at character \(i)")
            }
        }
        return nil
    }

    /// A bundle id as the launcher may hand over: reverse-DNS letters, digits, `-` and `.`.
    public static func isBundleID(_ value: String) -> Bool {
        !value.isEmpty && value.utf8.count <= maximumBytes && value.first != "." && !value.contains("..")
            && value.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D || $0 == 0x2E }
    }
}
