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

    /// What seed 001 (2023) asks of every app, so that a test's manifest speaks of its own step only.
    static let requiredQueries = ["http-intunemam","https-intunemam","microsoft-edge-http-intunemam","microsoft-edge-https-intunemam","smart-ns","zips","lacoonsecurity","wandera","lookoutwork-ase","skycure","betteractiveshield","smsec","mvisionmobile","scmx"].map { "<string>\($0)</string>" }.joined()
    static let registration = "<key>ADALClientId</key><string>5e1d1a8c-0000-4000-8000-00000000c0de</string><key>ADALRedirectScheme</key><string>msauth</string>"

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
        #expect(r.stdout.contains("there is no LSApplicationQueriesSchemes http-intunemam, https-intunemam, microsoft-edge-http-intunemam, microsoft-edge-https-intunemam, smart-ns, zips, lacoonsecurity, wandera, lookoutwork-ase, skycure, betteractiveshield, smsec, mvisionmobile, scmx (seed 001 (2023 edition) §Build the SDK into your mobile app, step 5"), "\(r.stdout)")
        #expect(r.stdout.contains("there is no NSFaceIDUsageDescription (seed 000 and seed 001 §Build the SDK into your mobile app, step 6"), "\(r.stdout)")
        // Seed 001 (2023) asks every app for its Microsoft Entra registration; seed 000 (2020) asked MSAL apps only.
        #expect(r.stdout.contains("IntuneMAMSettings: IntuneMAMSettings lacks ADALClientId and ADALRedirectUri or ADALRedirectScheme (seed 001 (2023 edition) §Configure settings for the Intune App SDK: ADALClientId, and ADALRedirectUri or ADALRedirectScheme, are required for all apps (the 2020 edition, seed 000, asked them of MSAL apps only)"), "\(r.stdout)")
        #expect(!r.stdout.contains("MainNibFile:"), "MainNibFile is a known key: \(r.stdout)")
        #expect(r.stdout.contains("0 errors, 4 warnings"), "\(r.stdout)")
    }

    @Test func anOpenInExtensionWithoutASharedAppGroupIsReported() throws {
        let app = plist("""
            <key>CFBundleIdentifier</key><string>com.example.pair</string><key>CFBundleDisplayName</key><string>Pair</string>
            <key>NSFaceIDUsageDescription</key><string>Face ID unlocks Pair.</string>
            <key>CFBundleURLTypes</key><array><dict><key>CFBundleURLSchemes</key><array><string>pair</string><string>pair-intunemam</string></array></dict></array>
            <key>LSApplicationQueriesSchemes</key><array>\(Self.requiredQueries)</array>
            <key>IntuneMAMSettings</key><dict><key>AppGroupIdentifiers</key><array><string>group.app</string></array>\(Self.registration)</dict>
            """)
        let ext = plist("""
            <key>CFBundleIdentifier</key><string>com.example.pair.openin</string><key>CFBundleDisplayName</key><string>Open in Pair</string>
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

    /// Seed 000 §'Copy To' actions, steps 4 and 7: the Open-in extension is "Open in <app>" and
    /// its rule takes one item with one file; seeds 000 and 001, step 6: NSFaceIDUsageDescription.
    @Test func anOpenInExtensionNamedOtherwiseOrTakingSeveralFilesAndAnAppWithoutFaceIDTextAreReported() throws {
        let app = plist("""
            <key>CFBundleIdentifier</key><string>com.example.pair</string><key>CFBundleDisplayName</key><string>Pair</string>
            <key>NSFaceIDUsageDescription</key><string>  </string>
            <key>LSApplicationQueriesSchemes</key><array>\(Self.requiredQueries)</array>
            <key>IntuneMAMSettings</key><dict><key>AppGroupIdentifiers</key><array><string>group.app</string></array>\(Self.registration)</dict>
            """)
        func ext(_ name: String, _ counts: String) -> String {
            plist("""
                <key>CFBundleIdentifier</key><string>com.example.pair.openin</string><key>CFBundleDisplayName</key><string>\(name)</string>
                <key>NSExtension</key><dict><key>NSExtensionPointIdentifier</key><string>com.apple.ui-services</string>
                <key>NSExtensionAttributes</key><dict><key>NSExtensionActivationRule</key><string>SUBQUERY(extensionItems, $e, SUBQUERY($e.attachments, $a, ANY $a.registeredTypeIdentifiers UTI-CONFORMS-TO "com.microsoft.intune.mam.public.text").\(counts)</string></dict></dict>
                <key>IntuneMAMSettings</key><dict><key>OpenInActionExtension</key><true/><key>ContainingAppBundleId</key><string>com.example.pair</string>
                <key>AppGroupIdentifiers</key><array><string>group.app</string></array></dict>
                """)
        }
        // The app also opens PDFs, which the extension's rule leaves out (step 7).
        let pdfApp = app.replacingOccurrences(of: "<key>IntuneMAMSettings</key>", with: """
            <key>CFBundleDocumentTypes</key><array><dict><key>LSItemContentTypes</key><array>\
            <string>com.adobe.pdf</string><string>com.microsoft.intune.mam.com.adobe.pdf</string></array></dict></array><key>IntuneMAMSettings</key>
            """)
        let bad = try write(["App/Info.plist": pdfApp, "OpenIn/Info.plist": ext("Send to Pair", "@count >= 1).@count == 1")])
        defer { try? FileManager.default.removeItem(at: bad) }
        let r = try CommandRunner.run(["check", bad.path])
        #expect(r.status == 0, "warnings only: \(r.stdout)")
        #expect(r.stdout.contains("NSFaceIDUsageDescription: an empty NSFaceIDUsageDescription"), "\(r.stdout)")
        #expect(r.stdout.contains("OpenIn/Info.plist: warning: CFBundleDisplayName: the Open-in extension com.example.pair.openin is named \"Send to Pair\", not \"Open in Pair\" (seed 000 §'Copy To' actions, step 4"), "\(r.stdout)")
        #expect(r.stdout.contains("the Open-in extension's rule counts \"@count >= 1\", which accepts more than one file or none (seed 000 §'Copy To' actions, step 7"), "\(r.stdout)")
        #expect(r.stdout.contains("does not accept com.microsoft.intune.mam.com.adobe.pdf of com.example.pair (seed 000 §'Copy To' actions, step 7"), "\(r.stdout)")
        #expect(r.stdout.contains("0 errors, 4 warnings"), "\(r.stdout)")
        // Checked alone, the extension is still told it is not named "Open in ...", once.
        let alone = try CommandRunner.run(["check", bad.path + "/OpenIn/Info.plist"])
        #expect(alone.stdout.contains("OpenIn/Info.plist: warning: CFBundleDisplayName: the Open-in extension is named \"Send to Pair\", not \"Open in\" and its app's name (seed 000 §'Copy To' actions, step 4"), "\(alone.stdout)")
        #expect(alone.stdout.components(separatedBy: "CFBundleDisplayName").count == 2, "\(alone.stdout)")

        // Seed 000's own rule shape, under the right name: nothing to say about the extension.
        let good = try write(["App/Info.plist": app, "OpenIn/Info.plist": ext("Open in Pair", "@count == 1).@count == 1")])
        defer { try? FileManager.default.removeItem(at: good) }
        let clean = try CommandRunner.run(["check", good.path + "/OpenIn/Info.plist", good.path + "/App/Info.plist"])
        #expect(!clean.stdout.contains("OpenIn/Info.plist: warning"), "\(clean.stdout)")
    }
}
