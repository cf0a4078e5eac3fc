import Foundation
import Glibc

/// The root an isolated app gets (spawn.c, `setup_root`): a tmpfs holding only what it runs and
/// reads, bound read-only at the paths it names them by, the top-level links of the host's root
/// (`/lib64 -> usr/lib64`, so the dynamic loader's path holds), its container at
/// `AppRoot.container`, and a /proc of its own. The launcher's root is pivoted away, so the
/// mount table (`/proc/self/mountinfo`, `/proc/mounts`, any process's) names none of the
/// launcher's folders: not the containers, not the broker's.
///
/// The paths are those the Landlock rules name (resolved, so a link planted beside the program
/// never widens what is shown), so the two layers agree on what the app sees; without Landlock
/// this view is what confines reads.
struct AppRoot: Equatable {
    struct Bind: Equatable {
        /// The resolved path in the launcher's view.
        var source: String
        /// Where the app sees it.
        var target: String
        var writable = false
        var device = false
    }

    struct Link: Equatable {
        var path: String
        var target: String
    }

    /// Where every app finds its own container: its working directory, `HOME` and `TMPDIR`, and
    /// the path the supervisor confines writes to (the app's paths are read from its own root).
    static let container = "/container"

    /// System files every app reads (a program's loader cache, the time zone) and the host's
    /// devices it reads. Its /dev/null is its own, made by spawn.c (`setup_root`), never the
    /// host's: one inode shared by every app carried locks and watches between them.
    static let systemFiles = ["/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo", "/sys/devices/system/cpu"]
    static let devices: [(path: String, writable: Bool)] = [("/dev/urandom", false), ("/dev/random", false)]

    var binds: [Bind] = []
    var links: [Link] = []
    /// Folders beneath a bind that the app must not see, covered by an empty tmpfs.
    var hidden: [String] = []

    /// `needed`: paths as the app names them (its program, a script's interpreter, its folder,
    /// libraries, extra read-only paths, `systemFiles`); each is shown at its resolved path, and,
    /// when its last component is a link (`/usr/bin/python3 -> python3.11`, `/etc/localtime`),
    /// under that name in its real folder too. A path inside another shown folder comes with it.
    /// `hidden`: folders the app must not see. `resolve`: realpath(3); `rootLinks`: the host
    /// root's own symbolic links.
    static func plan(needed: [String], hidden: [String], rootLinks: [Link], resolve: (String) -> String? = LandlockPolicy.realPath)
        -> AppRoot {
        var wanted: [Bind] = []
        for path in needed {
            guard let real = resolve(path), real != "/" else { continue }
            wanted.append(Bind(source: real, target: real))
            // The last component a link: shown under that name too, in its real folder (a
            // folder reached through a link is there through the same link in the app's root).
            let folder = (path as NSString).deletingLastPathComponent
            guard path.hasPrefix("/"), let parent = resolve(folder) else { continue }
            let alias = (parent as NSString).appendingPathComponent((path as NSString).lastPathComponent)
            if alias != real, !rootLinks.contains(where: { $0.path == alias }) {
                wanted.append(Bind(source: real, target: alias))
            }
        }
        for device in devices {
            wanted.append(Bind(source: device.path, target: device.path, writable: device.writable, device: true))
        }
        var root = AppRoot()
        for bind in wanted {
            if root.binds.contains(where: { LandlockPolicy.beneath(bind.target, $0.target) }) { continue }
            root.binds.removeAll { LandlockPolicy.beneath($0.target, bind.target) }
            root.binds.append(bind)
        }
        root.binds.sort { $0.target < $1.target }
        // A link never stands where the root already has something (the staging would follow it).
        let firsts = Set((root.binds.map(\.target) + ["/proc", container]).map { $0.split(separator: "/").first.map(String.init) ?? "" })
        root.links = rootLinks.filter { !firsts.contains(String($0.path.dropFirst())) }
        // A folder the app must not see matters only where a shown folder holds it.
        root.hidden = hidden.filter { h in root.binds.contains { LandlockPolicy.beneath(h, $0.target) && h != $0.target } }
        return root
    }

    /// The host root's symbolic links (`/bin`, `/lib`, `/lib64` on a merged-/usr system), read
    /// once: they lead into folders the app root shows at the same paths.
    static let hostRootLinks: [Link] = {
        var links: [Link] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/")) ?? [] {
            let path = "/" + name
            var st = stat()
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFLNK,
                  let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { continue }
            links.append(Link(path: path, target: target))
        }
        return links.sorted { $0.path < $1.path }
    }()
}
