import Foundation
import Testing

@Suite("mamlaunch check")
struct CheckCommandTests {
    @Test func theSampleProjectIsClean() throws {
        let r = try CommandRunner.run(["check"])
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("0 errors, 0 warnings"))
    }

    /// Each bad file and the line `check` must print for it (after the file name).
    static let badFiles: [(name: String, content: String, line: String)] = [
        ("syntax.json", "{\n  \"displayName\": \"x\",\n  \"saveAsBlocked\": tru\n}", ":3:20: error: invalid literal; expected 'true'"),
        ("wrong-type.json", "{\"displayName\": \"x\", \"printBlocked\": \"no\"}", ":1:38: error: $.printBlocked: expected a boolean, found string \"no\""),
        ("unknown-enum.json", "{\"allowedOutboundClipboardSharingLevel\": \"managed\"}",
         ":1:42: error: $.allowedOutboundClipboardSharingLevel: unknown value \"managed\"; allowed values: allApps, managedAppsWithPasteIn, managedApps, blocked"),
        ("coupling.json", "{\"allowedInboundDataTransferSources\": \"none\", \"protectInboundDataFromUnknownSources\": true}",
         ": error: $.protectInboundDataFromUnknownSources: valid only with allowedInboundDataTransferSources = allApps (it is none)"),
        ("tenant-group.json", "{\"users\": [{\"upn\": \"a@c.com\", \"groups\": [\"g\"]}], \"policies\": [{\"apps\": [\"com.contoso.mail\"], \"assignments\": [{\"target\": {\"groupId\": \"h\"}}]}]}",
         ": error: $.policies[0].assignments[0].target.groupId: unknown group \"h\"; the tenant's groups are: g"),
        ("tenant-user.json", "{\"users\": [{\"upn\": \"a@c.com\"}], \"device\": {\"mdmUser\": \"b@c.com\"}}",
         ": error: $.device.mdmUser: unknown user \"b@c.com\"; the tenant's users are: a@c.com"),
        ("tenant-app.json", "{\"users\": [{\"upn\": \"a@c.com\", \"groups\": [\"g\"]}], \"policies\": [{\"displayName\": \"P\", \"apps\": [\"com.nowhere.app\"], \"assignments\": [{\"target\": {\"groupId\": \"g\"}}]}]}",
         ": error: $.policies[0].apps[0]: policy \"P\" targets unknown app com.nowhere.app"),
        ("tenant-conflict.json", "{\"users\": [{\"upn\": \"a@c.com\", \"groups\": [\"g\"]}], \"policies\": [{\"displayName\": \"P1\", \"apps\": [\"com.contoso.mail\"], \"assignments\": [{\"target\": {\"groupId\": \"g\"}}]}, {\"displayName\": \"P2\", \"apps\": [\"com.contoso.mail\"], \"assignments\": [{\"target\": {\"groupId\": \"g\"}}]}]}",
         "both target user a@c.com for app com.contoso.mail"),
        ("debug-level.plist", "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>AppSharingFromLevel</key><integer>9</integer></dict></plist>",
         ": error: AppSharingFromLevel: unknown level 9; allowed values: 0 (none), 1 (managedApps), 2 (allApps)"),
        ("Info.plist", "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>CFBundleIdentifier</key><string>com.x</string><key>IntuneMAMSettings</key><dict><key>AutoEnrollOnLaunch</key><string>YES</string></dict></dict></plist>",
         ": error: IntuneMAMSettings.AutoEnrollOnLaunch: expected a boolean, found string \"YES\""),
        ("broken.plist", "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key></dict></plist>", ": error: not a valid property list"),
    ]

    @Test("rejects", arguments: badFiles.indices)
    func rejects(_ i: Int) throws {
        let bad = Self.badFiles[i]
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent(bad.name)
        try Data(bad.content.utf8).write(to: file)
        let before = try Data(contentsOf: file)
        let r = try CommandRunner.run(["check", file.path])
        #expect(r.status == 1, "\(bad.name): \(r.stdout)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix(file.path) && $0.contains(bad.line) }, "\(bad.name): \(r.stdout)")
        #expect(lines.last?.contains("1 error") == true, "\(bad.name): \(r.stdout)")
        // Checking never touches the file.
        #expect(try Data(contentsOf: file) == before)
    }

    @Test func warningsDoNotFailTheCheck() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-warn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("d.plist")
        try Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>Whatever</key><true/></dict></plist>".utf8).write(to: file)
        let r = try CommandRunner.run(["check", file.path])
        #expect(r.status == 0)
        #expect(r.stdout.contains("warning: Whatever: unknown debug setting"))
        #expect(r.stdout.contains("0 errors, 1 warning"))
    }

    @Test func aMissingPathIsAnError() throws {
        let r = try CommandRunner.run(["check", "/no/such/file.json"])
        #expect(r.status == 1)
        #expect(r.stdout.contains("/no/such/file.json: error: no such file or folder"))
    }
}

/// For pipelines: a misspelled key is a warning (its setting falls to its default, often the
/// permissive one), which `check --strict` fails on; without it, warnings pass.
@Suite("mamlaunch check --strict")
struct CheckStrictTests {
    @Test func aWarningFailsOnlyTheStrictCheck() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-strict-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("typo.json").path
        try Data(#"{"displayName": "P", "saveAsBlockd": true}"#.utf8).write(to: URL(fileURLWithPath: file))
        let lenient = try CommandRunner.run(["check", file])
        #expect(lenient.status == 0, "\(lenient.stdout)")
        #expect(lenient.stdout.contains("did you mean \"saveAsBlocked\"") && lenient.stdout.contains("0 errors, 1 warning"), "\(lenient.stdout)")
        let strict = try CommandRunner.run(["check", "--strict", file])
        #expect(strict.status == 1, "\(strict.stdout)")
        // Clean files pass either way.
        #expect(try CommandRunner.run(["check", "--strict"]).status == 0)
    }
}

/// Apps are taken by any name they go by: an installed app's folder or bundle id, a catalog
/// entry's name or short name ("Gmail" for "Gmail (personal mail)"), and a typo is answered with
/// the nearest name.
@Suite("App names")
struct AppNameTests {
    @Test(arguments: ["Gmail", "gmail", "Gmail (personal mail)", "com.google.gmail", "WhatsApp", "Safari"])
    func aCatalogAppIsKnownByItsNames(_ name: String) throws {
        let r = try CommandRunner.run(["explain", "--from", "Outlook:adele@contoso.com", "--to", name, "--channel", "send"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains(" → ") && r.stdout.hasPrefix("ALLOWED"), "\(r.stdout)")
    }

    @Test func aTypoIsAnsweredWithTheNearestName() throws {
        let explain = try CommandRunner.run(["explain", "--from", "Outlok", "--to", "Notes", "--channel", "send"])
        #expect(explain.status == 64 && explain.stderr.contains("unknown app \"Outlok\" (did you mean \"Outlook\"?)"), "\(explain.stderr)")
        #expect(explain.stderr.contains("Gmail (com.google.gmail, catalog)"), "the catalog's apps are among the known ones: \(explain.stderr)")
        let run = try CommandRunner.run(["run", "Maill"])
        #expect(run.status == 64 && run.stderr.contains("unknown app \"Maill\" (did you mean \"Mail\"?)"), "\(run.stderr)")
    }
}

/// `check` reads a matrix experiment as `mamlaunch matrix` does, JSON or YAML: the project's
/// examples pass (they were read as tenants, or not at all), and a wrong one says where.
@Suite("mamlaunch check: experiment files")
struct CheckExperimentTests {
    @Test func theExamplesPassAndAWrongOneSaysWhere() throws {
        let examples = try CommandRunner.run(["check", "docs/examples"])
        #expect(examples.status == 0 && examples.stdout.contains("checked 2 files: 0 errors, 0 warnings"), "\(examples.stdout)")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mamlab-check-exp-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let yaml = dir.appendingPathComponent("pilot.yaml").path
        try Data("# a pilot\nparties:\n  - name: A\n    app: Mail\n  - name: B\n    app: Gmail\nchannels: [open-in, fax]\npolicies: [no-such-policy]\n".utf8)
            .write(to: URL(fileURLWithPath: yaml))
        let r = try CommandRunner.run(["check", yaml])
        #expect(r.status == 1)
        #expect(r.stdout.contains("pilot.yaml:7:20: error: $.channels[1]: unknown channel \"fax\""), "\(r.stdout)")
        #expect(r.stdout.contains("no policy file \"no-such-policy\""), "\(r.stdout)")
        #expect(!r.stdout.contains("unknown app \"Gmail\""), "a catalog app by its short name: \(r.stdout)")
    }
}
