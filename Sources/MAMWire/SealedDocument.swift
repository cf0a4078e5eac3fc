import CMAMWire
import Glibc
import SystemPackage

/// A document as it travels: a memfd sealed against any change, so what the broker decided on
/// is what the receiver reads, and the broker never copies the bytes.
public enum SealedDocument {
    static let allSeals: Int32 = 0x0001 | 0x0002 | 0x0004 | 0x0008  // F_SEAL_SEAL, SHRINK, GROW, WRITE

    /// A sealed memfd holding `bytes`, the caller's to own (closed when it lets go).
    public static func create(_ bytes: [UInt8], name: String = "mamlab-document") throws(WireError) -> Descriptor {
        let document: Descriptor
        do { document = try unsealed(bytes, name: name) } catch { throw WireError(.internalError, error.description) }
        guard seal(FileDescriptor(rawValue: document.rawValue)) else { throw WireError(.internalError, "sealing the document failed") }
        return document
    }

    /// A sealed memfd of `count` zero bytes that takes no memory until read (a hole): what an
    /// app claiming a huge document costs itself.
    public static func zeros(_ count: Int, name: String = "mamlab-document") throws(WireError) -> Descriptor {
        let document: Descriptor
        do { document = try sized(count, name: name) } catch { throw WireError(.internalError, error.description) }
        guard seal(FileDescriptor(rawValue: document.rawValue)) else { throw WireError(.internalError, "sealing the document failed") }
        return document
    }

    private static func sized(_ count: Int, name: String) throws(SystemCallError) -> Descriptor {
        let document = Descriptor(adopting: try systemCall("memfd_create") { mam_memfd_sealable(name) })
        _ = try systemCall("ftruncate") { ftruncate(document.rawValue, off_t(count)) }
        return document
    }

    /// A memfd holding `bytes`, still open to seals; closed again if a write fails.
    private static func unsealed(_ bytes: [UInt8], name: String) throws(SystemCallError) -> Descriptor {
        let document = Descriptor(adopting: try systemCall("memfd_create") { mam_memfd_sealable(name) })
        var written = 0
        while written < bytes.count {
            written += try systemCall("write") { bytes[written...].withUnsafeBytes { write(document.rawValue, $0.baseAddress, $0.count) } }
        }
        return document
    }

    /// Seals a memfd; false when it cannot be sealed (not a memfd, or sealing not allowed).
    /// Here and below the descriptor is borrowed: used during the call, left open.
    public static func seal(_ document: FileDescriptor) -> Bool {
        fcntlInt(document.rawValue, F_ADD_SEALS, allSeals) == 0
    }

    /// Whether `document` is a memfd that can no longer change.
    public static func isSealed(_ document: FileDescriptor) -> Bool {
        let seals = fcntlInt(document.rawValue, F_GET_SEALS, 0)
        return seals >= 0 && seals & allSeals == allSeals
    }

    public static func size(_ document: FileDescriptor) -> Int {
        var st = stat()
        return fstat(document.rawValue, &st) == 0 ? Int(st.st_size) : -1
    }

    /// Reads the whole document (for receivers; the broker never calls this).
    public static func read(_ document: FileDescriptor) -> [UInt8] {
        let n = size(document)
        guard n > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: n)
        let got = out.withUnsafeMutableBytes { pread(document.rawValue, $0.baseAddress, n, 0) }
        return got == n ? out : []
    }

    private static let F_ADD_SEALS: Int32 = 1033
    private static let F_GET_SEALS: Int32 = 1034
}

private func fcntlInt(_ fd: Int32, _ cmd: Int32, _ arg: Int32) -> Int32 { fcntl(fd, cmd, arg) }
