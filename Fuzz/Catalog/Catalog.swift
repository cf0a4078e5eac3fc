import Foundation
import MAMCatalog
import MAMFuzzing
import MAMPolicy

/// An app catalog file (docs/CATALOG.md): its entries become stand-in apps whose manifests the
/// launcher and the broker load, so every entry that loads makes a manifest that loads, under
/// the entry's own bundle id.
@_cdecl("LLVMFuzzerTestOneInput")
public func catalog(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    let loaded: (entries: [CatalogEntry], warnings: [Diagnostic])
    do {
        loaded = try AppCatalogFile.loadWithWarnings(Data(bytes), file: "apps.json")
    } catch {
        FuzzCheck.failure(error, file: "apps.json", in: SourceText(bytes))
        return 0
    }
    FuzzCheck.warnings(loaded.warnings)
    for entry in loaded.entries {
        do {
            let manifest = try AppManifest.load(try entry.manifestData(), file: "stand-in").manifest
            FuzzCheck.require(manifest.bundleID == entry.bundleID, "the stand-in for \(entry.bundleID) loaded as \(manifest.bundleID)")
        } catch {
            FuzzCheck.require(false, "the catalog accepted \(entry.bundleID), whose stand-in manifest does not load: \(error)")
        }
    }
    return 0
}

@main enum CatalogFuzz {
    static func main() { FuzzTarget.main(catalog) }
}
