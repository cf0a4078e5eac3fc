import Foundation
import MAMCatalog

/// The apps folder a broker loads when a run has stand-ins (catalog apps no `Apps/` folder
/// provides, docs/CATALOG.md): the project's `Apps/` as it is when there are none; else a folder
/// of the run's own holding each installed app's `Info.plist` (the same bytes) and each
/// stand-in's generated one. A stand-in's bundle id is never an installed app's
/// (Catalog.standIns), so the broker never takes a stand-in for an installed app. `run` and the
/// live matrix both start their brokers on it.
package enum StandInApps {
    /// `folder` is the caller's and root's alone (a broker's device folder).
    package static func folder(_ apps: [CatalogApp], installed: URL, in folder: String) throws -> String {
        let standIns = apps.filter { $0.standIn != nil }
        guard !standIns.isEmpty else { return installed.path }
        let fm = FileManager.default
        for a in apps {
            // Stand-ins are named by bundle id (checked: letters, digits, '-', '.'; no "..").
            let name = a.standIn == nil ? a.name : "standin." + a.manifest.bundleID.lowercased()
            let dir = folder + "/" + name
            try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let data: Data
            if let entry = a.standIn {
                data = try entry.manifestData()
            } else {
                guard let d = fm.contents(atPath: installed.appendingPathComponent(a.name).appendingPathComponent("Info.plist").path) else { continue }
                data = d
            }
            try data.write(to: URL(fileURLWithPath: dir + "/Info.plist"))
        }
        return folder
    }
}
