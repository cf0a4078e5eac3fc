import Foundation
import MAMFuzzing
import MAMPolicy

/// An app's Info.plist (XML or binary), as the launcher and the broker load it: the author's
/// bytes, read by Foundation's property-list reader and then by the manifest's checks.
@_cdecl("LLVMFuzzerTestOneInput")
public func manifest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = FuzzTarget.bytes(data, size)
    do {
        let (manifest, warnings) = try AppManifest.load(Data(bytes), file: "Info.plist")
        FuzzCheck.warnings(warnings)
        // The launcher names files after a bundle id: a loaded one is always a safe name.
        FuzzCheck.require(!manifest.bundleID.isEmpty && AppManifest.bundleIDProblem(manifest.bundleID) == nil,
                          "a manifest loaded with bundle id \(manifest.bundleID.debugDescription)")
    } catch {
        FuzzCheck.failure(error, file: "Info.plist", in: nil)
    }
    return 0
}

@main enum ManifestFuzz {
    static func main() { FuzzTarget.main(manifest) }
}
