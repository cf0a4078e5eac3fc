import CMAMSandbox
import Foundation

/// Whether Landlock's rules hold on the file system a folder is on. A rule holds an inode, so
/// where every lookup of a path makes a new one (9p mounted without a cache, some FUSE file
/// systems) a grant on the app's folder does not match its program a moment later, and every
/// app there fails its exec with EACCES. Tried for real: a child restricted to reading the folder
/// reads a file in it.
public enum LandlockInodes: Sendable, Equatable {
    case hold(fileSystem: String)
    case doNotHold(fileSystem: String)
    /// No Landlock here, or the probe itself failed (the reason).
    case unknown(String)

    public static func probe(folder: String, file: String) -> LandlockInodes {
        var type = 0
        let result = mam_landlock_rules_hold(folder, file, &type)
        let name = fileSystemName(type)
        switch result {
        case 1: return .hold(fileSystem: name)
        case 0: return .doNotHold(fileSystem: name)
        default: return .unknown(String(cString: strerror(-result)))
        }
    }

    /// statfs(2) magic numbers of the file systems a checkout is commonly on.
    static func fileSystemName(_ type: Int) -> String {
        switch UInt32(truncatingIfNeeded: type) {
        case 0x0102_1997: return "9p"
        case 0x6573_5546: return "FUSE"
        case 0xEF53: return "ext4"
        case 0x0102_1994: return "tmpfs"
        case 0x794C_7630: return "overlay"
        case 0x9123_683E: return "btrfs"
        case 0x5846_5342: return "xfs"
        case 0x6969: return "NFS"
        default: return String(format: "file system 0x%x", type)
        }
    }
}
