import Foundation
import MAMTestSupport
import Testing

/// The `mamconfigurator` executable, run as a process on copies of the golden files.
@Suite("mamconfigurator command")
struct CommandTests {
    static var tool: URL {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: exe).deletingLastPathComponent()
        for _ in 0..<4 {
            if FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("mamconfigurator").path) { break }
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("mamconfigurator")
    }

    func run(_ args: [String]) throws -> (status: Int32, out: String, err: String) {
        try ChildProcess.run(Self.tool.path, args, timeout: 60)
    }

    func scratch(_ golden: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamcfg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for f in ["Info.plist", "app.entitlements"] {
            try FileManager.default.copyItem(at: Paths.golden.appendingPathComponent(golden).appendingPathComponent(f), to: dir.appendingPathComponent(f))
        }
        return dir
    }

    @Test func editsInPlaceThenChangesNothing() throws {
        let dir = try scratch("document-types")
        defer { try? FileManager.default.removeItem(at: dir) }
        let info = dir.appendingPathComponent("Info.plist").path, ent = dir.appendingPathComponent("app.entitlements").path
        let first = try run(["-i", info, "-e", ent])
        #expect(first.status == 0 && first.out.contains("changed \(info): CFBundleDocumentTypes[0].LSItemContentTypes: added com.microsoft.intune.mam.com.adobe.pdf"))
        let expected = try Data(contentsOf: Paths.golden.appendingPathComponent("document-types/Info.expected.plist"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: info)) == expected)
        let before = try Data(contentsOf: URL(fileURLWithPath: info)), beforeEnt = try Data(contentsOf: URL(fileURLWithPath: ent))
        let second = try run(["-i", info, "-e", ent])
        #expect(second.status == 0 && second.out.contains("already configured"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: info)) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: ent)) == beforeEnt)
    }

    @Test func outputOptionLeavesTheInputAlone() throws {
        let dir = try scratch("plain-app")
        defer { try? FileManager.default.removeItem(at: dir) }
        let info = dir.appendingPathComponent("Info.plist"), out = dir.appendingPathComponent("Out.plist")
        let original = try Data(contentsOf: info)
        let r = try run(["-i", info.path, "-e", dir.appendingPathComponent("app.entitlements").path, "-o", out.path])
        #expect(r.status == 0)
        #expect(try Data(contentsOf: info) == original)
        #expect(try Data(contentsOf: out) == Data(contentsOf: Paths.golden.appendingPathComponent("plain-app/Info.expected.plist")))
    }

    @Test func checkReportsAndChangesNothing() throws {
        let dir = try scratch("extension-dictionary")
        defer { try? FileManager.default.removeItem(at: dir) }
        let info = dir.appendingPathComponent("Info.plist")
        let original = try Data(contentsOf: info)
        let r = try run(["-i", info.path, "--check"])
        #expect(r.status == 1)
        #expect(r.out.contains("would change \(info.path): NSExtension.NSExtensionAttributes.NSExtensionActivationRule: converted the dictionary form"))
        #expect(try Data(contentsOf: info) == original)
        let configured = try scratch("configured")
        defer { try? FileManager.default.removeItem(at: configured) }
        let ok = try run(["-i", configured.appendingPathComponent("Info.plist").path, "-e", configured.appendingPathComponent("app.entitlements").path, "--check"])
        #expect(ok.status == 0, "\(ok.out)")
    }

    @Test func errorsExitNonZeroAndWriteNothing() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamcfg-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let info = dir.appendingPathComponent("Info.plist")
        let text = "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>CFBundleIdentifier</key><string>com.x</string><key>CFBundleURLTypes</key><array><dict><key>CFBundleURLSchemes</key><array><string>x</string></array></dict></array><key>IntuneMAMSettings</key><dict><key>ADALClientId</key><string>c</string></dict></dict></plist>"
        try Data(text.utf8).write(to: info)
        let r = try run(["-i", info.path])
        #expect(r.status == 1)
        #expect(r.err.contains("\(info.path): error: IntuneMAMSettings: ADALClientId needs ADALRedirectUri or ADALRedirectScheme"))
        #expect(try String(contentsOf: info, encoding: .utf8) == text)
        let missing = try run(["-i", dir.appendingPathComponent("nope.plist").path])
        #expect(missing.status != 0 && missing.err.contains("no such file"))
    }

    @Test func helpNamesTheFlags() throws {
        let r = try run(["--help"])
        #expect(r.out.contains("-i <INFO.plist>") && r.out.contains("-e <APP.entitlements>") && r.out.contains("-o <OUT.plist>"))
    }
}
