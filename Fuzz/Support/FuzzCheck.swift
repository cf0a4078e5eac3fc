import MAMPolicy

/// The properties fuzz targets assert beyond "no crash". A broken one stops the run as a crash
/// would: libFuzzer keeps the input, and a replay ends non-zero naming it.
public enum FuzzCheck {
    public static func require(_ condition: Bool, _ message: @autoclosure () -> String,
                               file: StaticString = #fileID, line: UInt = #line) {
        if !condition { fatalError("fuzz property broken: \(message())", file: file, line: line) }
    }

    /// A load that failed says why: at least one error, each diagnostic naming a file, and a
    /// position that points into this input when it names this input's file.
    public static func failure(_ failure: LoadFailure, file: String, in text: SourceText?) {
        require(failure.diagnostics.contains { $0.severity == .error }, "a LoadFailure with no error: \(failure.diagnostics)")
        for d in failure.diagnostics {
            require(!d.file.isEmpty && !d.message.isEmpty, "a diagnostic with no file or message: \(d)")
            if d.file == file, let p = d.position, let text { text.requireInside(p, d.description) }
        }
    }

    /// What a successful load may still say: warnings only.
    public static func warnings(_ diagnostics: [Diagnostic]) {
        for d in diagnostics { require(d.severity == .warning, "a load that succeeded returned an error: \(d)") }
    }
}

/// An input's lines, to check that a reported line and column are where the offset is.
public struct SourceText {
    let bytes: [UInt8]
    /// Byte offset of each line's start.
    let lineStarts: [Int]
    /// The JSON reader counts columns after a byte-order mark from the mark's end.
    let byteOrderMark: Bool
    /// Whether positions carry a byte offset (the JSON reader's do; the YAML reader's are 0).
    let offsets: Bool

    public init(_ bytes: [UInt8], offsets: Bool = true) {
        self.bytes = bytes
        var starts = [0]
        for (i, b) in bytes.enumerated() where b == 0x0A { starts.append(i + 1) }
        lineStarts = starts
        byteOrderMark = bytes.starts(with: [0xEF, 0xBB, 0xBF])
        self.offsets = offsets
    }

    public func requireInside(_ p: SourcePosition, _ what: @autoclosure () -> String) {
        FuzzCheck.require(p.line >= 1 && p.line <= lineStarts.count && p.column >= 1,
                          "line \(p.line) column \(p.column) is outside a \(lineStarts.count)-line input: \(what())")
        guard offsets else { return }
        FuzzCheck.require(p.offset >= 0 && p.offset <= bytes.count, "offset \(p.offset) is outside a \(bytes.count)-byte input: \(what())")
        // The line holding the offset, and the column counted from that line's start.
        var low = 0, high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= p.offset { low = mid } else { high = mid - 1 }
        }
        let start = low == 0 && byteOrderMark ? 3 : lineStarts[low]
        FuzzCheck.require(p.line == low + 1 && p.column == p.offset - start + 1,
                          "offset \(p.offset) is line \(low + 1) column \(p.offset - start + 1), reported as \(p.line):\(p.column): \(what())")
    }
}
