#if canImport(Glibc)
import CMAMProtect
import Glibc

/// Who owns a file, kept in the extended attribute `user.mamlab.owner` (docs/PROTECTION.md,
/// "File owners"). The kit sets it from the effective identity when an app creates or truncates
/// a file; a selective wipe removes the files it names.
///
/// The attribute is UTF-8 text of three lines: the format version `1`, the owner's object id and
/// the owner's UPN, at most `maximumAttributeLength` bytes. Any app in the container can write
/// the attribute, so what is read back is checked like any hostile input. A file with no
/// attribute belongs to no user; setting `DataOwner.nobody` removes the attribute.
///
/// Paths are opened with O_NOFOLLOW: a symbolic link as the last component is refused, never
/// followed to a file outside the container.
public enum FileOwnership {
    public static let attributeName = "user.mamlab.owner"
    public static let maximumAttributeLength = 512

    /// The owner of the file at `path`, or `nobody` when it has no owner attribute.
    public static func owner(ofFileAt path: String) throws(FileProtectionError) -> DataOwner {
        let fd = try SystemCall.open(path, O_RDONLY)
        defer { close(fd) }
        _ = try SystemCall.requireRegular(fd, path)
        return try owner(of: fd, path: path)
    }

    /// Sets (or, for `nobody`, removes) the owner of the file at `path`.
    public static func setOwner(_ owner: DataOwner, ofFileAt path: String) throws(FileProtectionError) {
        let fd = try SystemCall.open(path, O_RDONLY)
        defer { close(fd) }
        _ = try SystemCall.requireRegular(fd, path)
        try setOwner(owner, of: fd, path: path)
    }

    /// The owner of the open file `fd`; `path` only names it in errors.
    static func owner(of fd: Int32, path: String = "(descriptor)") throws(FileProtectionError) -> DataOwner {
        var value = [UInt8](repeating: 0, count: maximumAttributeLength + 1)
        let n = value.withUnsafeMutableBytes { fgetxattr(fd, attributeName, $0.baseAddress, $0.count) }
        if n < 0 {
            switch errno {
            case ENODATA: return .nobody
            case ERANGE: throw .invalidOwnerAttribute(path: path, detail: "longer than \(maximumAttributeLength) bytes")
            default: throw SystemCall.failure("fgetxattr", path)
            }
        }
        return try parse(value[0..<n], path: path)
    }

    /// Sets (or, for `nobody`, removes) the owner of the open file `fd`.
    static func setOwner(_ owner: DataOwner, of fd: Int32, path: String = "(descriptor)") throws(FileProtectionError) {
        if owner.isNobody {
            if fremovexattr(fd, attributeName) != 0 && errno != ENODATA { throw SystemCall.failure("fremovexattr", path) }
            return
        }
        let value = encoded(owner)
        let status = value.withUnsafeBytes { fsetxattr(fd, attributeName, $0.baseAddress, $0.count, 0) }
        if status != 0 { throw SystemCall.failure("fsetxattr", path) }
    }

    /// Creates the file at `path` (or truncates it) for `owner` and returns it open for reading
    /// and writing: what the kit does when an app creates or truncates a file under an identity.
    /// A symbolic link at `path` is refused.
    static func createFile(at path: String, for owner: DataOwner, permissions: mode_t = 0o600) throws(FileProtectionError) -> Int32 {
        let fd = try SystemCall.open(path, O_RDWR | O_CREAT | O_TRUNC, mode: permissions)
        do throws(FileProtectionError) {
            _ = try SystemCall.requireRegular(fd, path)
            try setOwner(owner, of: fd, path: path)
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    static func encoded(_ owner: DataOwner) -> [UInt8] {
        Array("1\n\(owner.objectID)\n\(owner.upn)".utf8)
    }

    static func parse(_ value: ArraySlice<UInt8>, path: String) throws(FileProtectionError) -> DataOwner {
        guard value.count <= maximumAttributeLength else {
            throw .invalidOwnerAttribute(path: path, detail: "longer than \(maximumAttributeLength) bytes")
        }
        let lines = value.split(separator: 0x0a, maxSplits: 2, omittingEmptySubsequences: false)
        guard lines.count == 3, Array(lines[0]) == [0x31] else {
            throw .invalidOwnerAttribute(path: path, detail: "not the three lines \"1\", object id, UPN")
        }
        do throws(DataProtectionError) {
            let objectID = try DataOwner.field(lines[1], named: "object id", limit: DataOwner.maximumObjectIDLength)
            let upn = try DataOwner.field(lines[2], named: "UPN", limit: DataOwner.maximumUPNLength)
            let owner = DataOwner(uncheckedUPN: upn, objectID: objectID)
            guard !owner.isNobody else { throw .malformedHeader("names no owner; a file with no owner has no attribute") }
            return owner
        } catch {
            throw .invalidOwnerAttribute(path: path, detail: error.detail)
        }
    }
}
#endif
