import Foundation
import Testing

/// `check` reports each step of the developer guides a manifest leaves out, quoting the seed.
@Suite("mamlaunch check: manifest requirements")
struct CheckRequirementsTests {
    func write(_ files: [String: String]) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-req-\(UUID().uuidString)")
        for (name, content) in files {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(content.utf8).write(to: url)
        }
        return dir
    }

    func plist(_ body: String) -> String {
        "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict>\(body)</dict></plist>"
    }

    @Test func missingStepsAreWarningsWithTheirSeed() throws {
        let dir = try write(["App/Info.plist": """
            <?xml version="1.0"?>
            <plist version="1.0"><dict>
            <key>CFBundleIdentifier</key><string>com.example.half</string>
            <key>CFBundleURLTypes</key><array><dict><key>CFBundleURLSchemes</key><array>
            <string>half</string>
            </array></dict></array>
            <key>IntuneMAMSettings</key><dict><key>MainNibFile</key><string>Main</string></dict>
            </dict></plist>
            """])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CommandRunner.run(["check", dir.appendingPathComponent("App/Info.plist").path])
        #expect(r.status == 0, "warnings only: \(r.stdout)")
        #expect(r.stdout.contains("App/Info.plist: warning: CFBundleURLTypes[0].CFBundleURLSchemes[0]: URL scheme \"half\" has no twin \"half-intunemam\" (seed 004 §Build the SDK into your mobile app, step 8"), "\(r.stdout)")
        #expect(r.stdout.contains("there is no LSApplicationQueriesSchemes http-intunemam and https-intunemam (seed 001 §Build the SDK into your mobile app, step 5"), "\(r.stdout)")
        #expect(!r.stdout.contains("MainNibFile"), "MainNibFile is a known key: \(r.stdout)")
        #expect(r.stdout.contains("0 errors, 2 warnings"), "\(r.stdout)")
    }

    @Test func anOpenInExtensionWithoutASharedAppGroupIsReported() throws {
        let app = plist("""
            <key>CFBundleIdentifier</key><string>com.example.pair</string>
            <key>CFBundleURLTypes</key><array><dict><key>CFBundleURLSchemes</key><array><string>pair</string><string>pair-intunemam</string></array></dict></array>
            <key>LSApplicationQueriesSchemes</key><array><string>http-intunemam</string><string>https-intunemam</string></array>
            <key>IntuneMAMSettings</key><dict><key>AppGroupIdentifiers</key><array><string>group.app</string></array></dict>
            """)
        let ext = plist("""
            <key>CFBundleIdentifier</key><string>com.example.pair.openin</string>
            <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key><string>com.apple.ui-services</string></dict>
            <key>IntuneMAMSettings</key><dict><key>OpenInActionExtension</key><true/><key>ContainingAppBundleId</key><string>com.example.pair</string>
            <key>AppGroupIdentifiers</key><array><string>group.other</string></array></dict>
            """)
        let dir = try write(["App/Info.plist": app, "OpenIn/Info.plist": ext])
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try CommandRunner.run(["check", dir.path])
        #expect(r.stdout.contains("OpenIn/Info.plist: warning: IntuneMAMSettings.AppGroupIdentifiers: the Open-in extension com.example.pair.openin shares no App Group with com.example.pair"), "\(r.stdout)")
        #expect(r.stdout.contains("seed 000 §'Copy To' actions, step 2"))
        #expect(r.stdout.contains("0 errors, 1 warning"), "\(r.stdout)")
    }
}
