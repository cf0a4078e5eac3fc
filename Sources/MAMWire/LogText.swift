/// Text from an app or a manifest made safe for a log line: every control character (C0, DEL,
/// C1, and the Unicode line and paragraph separators) becomes a visible escape, so no value can
/// end a log line, start a forged one, or move a terminal's cursor.
public enum LogText {
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for s in text.unicodeScalars {
            switch s {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\\": out += "\\\\"
            default:
                if needsEscape(s) {
                    let hex = String(s.value, radix: 16, uppercase: false)
                    out += s.value <= 0xFF ? "\\x" + String(repeating: "0", count: 2 - hex.count) + hex : "\\u{\(hex)}"
                } else {
                    out.unicodeScalars.append(s)
                }
            }
        }
        return out
    }

    static func needsEscape(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7F...0x9F).contains(s.value) || s.value == 0x2028 || s.value == 0x2029 || s == "\\"
    }
}
