import Foundation
import Glibc

/// How the app's own uid reaches its files wherever the checkout is. A folder on the way that
/// other users may not enter (mode without o+x: `mktemp -d`, a home of mode 0700) is covered in
/// the app's mount namespace by a tmpfs it may traverse, and the paths it needs beneath are bound
/// back in at their own paths (spawn.c, `reveal`). Everything else in such a folder stays out of
/// the app's sight, which is no loss: it could not enter it on the host either.
struct Reach: Equatable {
    /// The topmost folders the app's uid cannot enter on the way to something it needs.
    var masked: [String] = []
    /// What it needs beneath them, outermost only (a path inside another is bound with it).
    var revealed: [String] = []

    /// `needed`: resolved paths the app reads or runs (bound back); `container`: its container,
    /// which the launcher mounts itself, so only its way is opened.
    static func plan(needed: [String], container: String, mode: (String) -> mode_t? = Reach.mode) -> Reach {
        var reach = Reach()
        func add(masked folder: String) {
            if reach.masked.contains(where: { LandlockPolicy.beneath(folder, $0) }) { return }
            reach.masked.removeAll { LandlockPolicy.beneath($0, folder) }
            reach.masked.append(folder)
        }
        for path in needed + [container] {
            if let folder = blocking(path, mode: mode) { add(masked: folder) }
        }
        for path in needed where reach.masked.contains(where: { LandlockPolicy.beneath(path, $0) && path != $0 }) {
            if reach.revealed.contains(where: { LandlockPolicy.beneath(path, $0) }) { continue }
            reach.revealed.removeAll { LandlockPolicy.beneath($0, path) }
            reach.revealed.append(path)
        }
        return reach
    }

    /// The topmost folder above `path` (itself excluded) that others may not traverse.
    static func blocking(_ path: String, mode: (String) -> mode_t?) -> String? {
        var folder = ""
        let parts = path.split(separator: "/")
        for part in parts.dropLast() {
            folder += "/" + part
            guard let m = mode(folder) else { return nil }
            if m & S_IXOTH == 0 { return folder }
        }
        return nil
    }

    static func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode : nil
    }
}
