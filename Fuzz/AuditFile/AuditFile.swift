import Foundation
import MAMFuzzing
import MAMWire

/// An audit file as its readers meet it (docs/PROTOCOL.md, "The audit log"): the header's
/// committed length, then the committed records, in a file a crash may have left half-written.
@_cdecl("LLVMFuzzerTestOneInput")
public func auditFile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let committed = AuditFile.committed(bytes)
    if let n = committed {
        FuzzCheck.require(bytes.count >= AuditFile.headerSize && n >= AuditFile.headerSize && n <= AuditFile.largest,
                          "a header read as committing \(n) bytes")
    }
    // The writer's header and the word the broker stores into it say the same length, and the
    // reader reads that length back, for a length taken from the input.
    let length = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) } % (AuditFile.largest + 1)
    let header = AuditFile.header(committed: length)
    FuzzCheck.require(header.count == AuditFile.headerSize && header.last == 0x0A, "the header for \(length) is not one 64-byte line")
    let word = withUnsafeBytes(of: AuditFile.committedWord(length).littleEndian) { Array($0) }
    FuzzCheck.require(Array(header[AuditFile.committedOffset..<AuditFile.committedOffset + 8]) == word,
                      "the stored word for \(length) is not the header's field")
    FuzzCheck.require(AuditFile.committed(header) == (length >= AuditFile.headerSize ? length : nil),
                      "the header for \(length) reads back as \(String(describing: AuditFile.committed(header)))")

    // The file readers, on the input as a file: only committed bytes, whole lines.
    let path = AuditScratch.path
    // (Written in place: FileManager.createFile writes a copy and renames it, a hundred times slower.)
    try? Data(bytes).write(to: URL(fileURLWithPath: path))
    let from = bytes.count > 4 ? Int(bytes[4]) * 7 : 0
    let records = AuditFile.records(atPath: path, from: from)
    let end = AuditFile.end(atPath: path)
    FuzzCheck.require(end == (committed ?? bytes.count), "end is \(end); the header commits \(String(describing: committed)) of \(bytes.count) bytes")
    // (Scalars, not UTF-8: a byte that is not UTF-8 reads as one replacement character.)
    let read = records.reduce(0) { $0 + $1.unicodeScalars.count }
    if let n = committed {
        FuzzCheck.require(read <= max(0, min(n, bytes.count) - max(from, AuditFile.headerSize)), "read \(read) bytes past a header committing \(n)")
    }
    FuzzCheck.require(records.allSatisfy { !$0.isEmpty && !$0.contains("\n") }, "a record that is empty or spans lines")
    return 0
}

/// One file per process, rewritten for each input.
enum AuditScratch {
    static let path = (NSTemporaryDirectory() as NSString).appendingPathComponent("mamlab-fuzz-audit-\(getpid()).jsonl")
}

@main enum AuditFileFuzz {
    static func main() {
        atexit { unlink(AuditScratch.path) }
        FuzzTarget.main(auditFile)
    }
}
