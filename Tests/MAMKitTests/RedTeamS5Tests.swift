import Foundation
import MAMScript
import MAMTestSupport
import Testing

/// Red team, session 5: attacks on who is who (issue 19) and on naming apps (issue 22), each
/// through the real processes (mambroker, mamlaunch, Courier speaking the protocol).
@Suite("Red team s5: identities an app author's files claim", .serialized, .timeLimit(.minutes(2)))
struct RedTeamS5Tests {
    static let adele = "adele@contoso.com"

    /// A project root of its own under /tmp: the real apps (each folder a link to the real
    /// one), the real policies, and `extra` folders of an app author's.
    final class Root {
        let path: String
        init(extra: [String: String]) throws {
            path = "/tmp/mamlab-red5-\(UUID().uuidString.prefix(8))"
            let fm = FileManager.default
            try fm.createDirectory(atPath: path + "/Apps", withIntermediateDirectories: true)
            try fm.createSymbolicLink(atPath: path + "/Policies", withDestinationPath: TestBroker.root + "/Policies")
            for name in try fm.contentsOfDirectory(atPath: TestBroker.root + "/Apps") {
                try fm.createSymbolicLink(atPath: path + "/Apps/" + name, withDestinationPath: TestBroker.root + "/Apps/" + name)
            }
            for (folder, plist) in extra {
                try fm.createDirectory(atPath: path + "/Apps/" + folder, withIntermediateDirectories: true)
                try plist.write(toFile: path + "/Apps/" + folder + "/Info.plist", atomically: true, encoding: .utf8)
            }
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// An app author's manifest for Courier under `com.aaa.thief` (a bundle id that sorts before
    /// every sample app's), no SDK, declaring `keys` (plist `<key>`/value lines) besides.
    static func authorsManifest(declaring keys: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
        \t<key>CFBundleIdentifier</key><string>com.aaa.thief</string>
        \t<key>CFBundleName</key><string>Thief</string>
        \t<key>CFBundleExecutable</key><string>Courier</string>
        \t<key>CFBundleVersion</key><string>1.0</string>
        \t<key>CFBundlePackageType</key><string>APPL</string>
        \(keys)
        </dict>
        </plist>
        """
    }

    /// An app folder of an author's whose manifest gives Mail's own bundle id (exactly as Mail
    /// spells it) and names another built program (Courier): the folder sorts before Mail, so
    /// the broker's installed programs and the engine took it as com.contoso.mail, and the
    /// program, run with no --user, was managed as Adele (Mail enrolls on launch) and got her key.
    @Test(arguments: ["com.contoso.mail", "COM.CONTOSO.MAIL"])
    func anotherFolderClaimingMailsBundleIDGetsNeitherMailsIdentityNorAdelesKey(_ claimed: String) throws {
        var impostor = try String(contentsOfFile: TestBroker.root + "/Apps/Mail/Info.plist", encoding: .utf8)
        let executable = try #require(impostor.range(of: "<key>CFBundleExecutable</key>"))
        let value = try #require(impostor.range(of: "<string>Mail</string>", range: executable.upperBound..<impostor.endIndex))
        impostor.replaceSubrange(value, with: "<string>Courier</string>")
        let identifier = try #require(impostor.range(of: "<key>CFBundleIdentifier</key>"))
        let id = try #require(impostor.range(of: "<string>com.contoso.mail</string>", range: identifier.upperBound..<impostor.endIndex))
        impostor.replaceSubrange(id, with: "<string>\(claimed)</string>")
        let root = try Root(extra: ["Aardvark": impostor])
        let broker = try TestBroker(prefix: "mamlab-red5", apps: root.path + "/Apps")
        defer { broker.stop() }
        let run = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                      ["run", "Aardvark", "--broker", broker.launcherSocket, "--containers", broker.containers,
                                       "--", "hello", "key", Self.adele, "bye"],
                                      environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": root.path]) { _, b in b })
        let lines = run.allLines()
        let hello = lines.first { $0["step"]?.string == "hello" }
        let key = lines.first { $0["step"]?.string == "key" }
        #expect(key?["key"] == nil, "an author's program under Mail's bundle id got Adele's key: \(lines)")
        #expect(hello?["managedAccount"]?.string == nil, "it was welcomed as a managed party: \(String(describing: hello))")
        // Neither folder is installed, and mamlaunch says why.
        #expect(run.standardError.contains("is also given by"), "\(run.standardError)")
    }

    /// A manifest of an author's (no SDK, no policy targets it) that declares Edge's own schemes
    /// under a bundle id that sorts first: a managed link Mail rewrites for the managed browser
    /// (Ben's policy requires Edge) is routed by scheme to the smallest bundle id, so it went to
    /// the author's app, which learned the managed URL.
    @Test func anAppClaimingEdgesSchemesDoesNotReceiveAManagedLink() throws {
        let thief = Self.authorsManifest(declaring: """
        \t<key>CFBundleURLTypes</key>
        \t<array><dict><key>CFBundleURLName</key><string>com.aaa.thief</string>
        \t\t<key>CFBundleURLSchemes</key><array><string>microsoft-edge-http</string><string>microsoft-edge-https</string></array>
        \t</dict></array>
        """)
        let root = try Root(extra: ["Thief": thief])
        let broker = try TestBroker(prefix: "mamlab-red5", apps: root.path + "/Apps")
        defer { broker.stop() }
        let url = "https://contoso.sharepoint.com/sites/finance/q3-forecast.xlsx"
        let mail = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                       ["run", "--manifest", root.path + "/Apps/Mail/Info.plist", "--developer", "--user", "ben@contoso.com",
                                        "--broker", broker.launcherSocket, "--containers", broker.containers,
                                        "--", TestBroker.bin + "/Courier", "hello", "open-url", url, "bye"],
                                       environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": root.path]) { _, b in b })
        let lines = mail.allLines()
        let opened = lines.first { $0["step"]?.string == "open-url" }
        #expect(opened != nil, "\(lines)")
        let stolen = broker.auditRecords.filter { ($0["target"] as? [String: Any])?["app"] as? String == "com.aaa.thief" }
        #expect(stolen.isEmpty, "Ben's managed link went to an author's app that claims Edge's schemes: \(stolen)")
        // It opens in Edge, which the tenant manages (the broker starts it).
        #expect(broker.auditRecord { $0["channel"] as? String == "open-url" && ($0["target"] as? [String: Any])?["app"] as? String == "com.microsoft.msedge" } != nil)
    }

    /// A tenant file (or Graph export) in which one user's object id is another user's UPN:
    /// that name resolved to whichever user was indexed last, so `--user adele@contoso.com`
    /// signed in, enrolled and keyed Ben (and `wipe --user` wiped him). The broker refuses to
    /// start on such a tenant, naming the user.
    @Test(arguments: ["tenant", "export"])
    func aTenantWhoseUserIDIsAnotherUsersUPNIsRefused(_ kind: String) throws {
        let dir = "/tmp/mamlab-red5-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file: String
        if kind == "tenant" {
            try FileManager.default.createSymbolicLink(atPath: dir + "/policies", withDestinationPath: TestBroker.root + "/Policies/contoso/policies")
            let text = try String(contentsOfFile: TestBroker.root + "/Policies/contoso/tenant.json", encoding: .utf8)
            #expect(text.contains("9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"))
            file = dir + "/tenant.json"
            try text.replacingOccurrences(of: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", with: "ADELE@contoso.com").write(toFile: file, atomically: true, encoding: .utf8)
        } else {
            let text = try String(contentsOfFile: TestBroker.root + "/Policies/graph-export/fabrikam-export.json", encoding: .utf8)
            #expect(text.contains("1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f"))
            file = dir + "/export.json"
            try text.replacingOccurrences(of: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f", with: "Megan@fabrikam.com").write(toFile: file, atomically: true, encoding: .utf8)
        }
        do {
            let broker = try TestBroker(prefix: "mamlab-red5", tenant: file)
            broker.stop()
            Issue.record("the broker started on a tenant in which one name is two users")
        } catch {
            #expect("\(error)".lowercased().contains(kind == "tenant" ? "adele@contoso.com" : "megan@fabrikam.com"), "\(error)")
        }
    }

    /// An author's app (bundle id com.aaa.thief, taking plain text) in a folder named
    /// `com.contoso.docs`: the broker resolved a share's target by folder name before bundle
    /// id, so Mail's share to Docs by Docs' own bundle id went to the author's app.
    /// Likewise a folder `DOCS` beside `Docs`: a share to `docs` (as INTEGRATION.md names apps)
    /// went to whichever sorts first, the author's.
    @Test(arguments: [("com.contoso.docs", "com.contoso.docs"), ("DOCS", "docs")])
    func aFolderNamedAsDocsDoesNotTakeDocsShares(_ folder: String, _ target: String) throws {
        let thief = Self.authorsManifest(declaring: """
        \t<key>CFBundleDocumentTypes</key>
        \t<array><dict><key>CFBundleTypeName</key><string>Text</string>
        \t\t<key>LSItemContentTypes</key><array><string>public.plain-text</string></array>
        \t</dict></array>
        """)
        let root = try Root(extra: [folder: thief])
        let broker = try TestBroker(prefix: "mamlab-red5", apps: root.path + "/Apps")
        defer { broker.stop() }
        let mail = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                       ["run", "--manifest", root.path + "/Apps/Mail/Info.plist", "--developer",
                                        "--broker", broker.launcherSocket, "--containers", broker.containers,
                                        "--", TestBroker.bin + "/Courier", "hello", "share", target, "public.plain-text", "memo.txt", "the memo", "bye"],
                                       environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": root.path]) { _, b in b })
        let lines = mail.allLines()
        #expect(lines.contains { $0["step"]?.string == "share" }, "\(lines)")
        let stolen = broker.auditRecords.filter { ($0["target"] as? [String: Any])?["app"] as? String == "com.aaa.thief" }
        #expect(stolen.isEmpty, "a share to \(target) went to the app in the folder \(folder): \(stolen)")
        if folder == "DOCS" {
            // Neither folder is installed: the share names no app.
            #expect(lines.first { $0["step"]?.string == "share" }?["error"]?.string == "unknownTarget", "\(lines)")
        } else {
            #expect(broker.auditRecord { $0["channel"] as? String == "open-in" && ($0["target"] as? [String: Any])?["app"] as? String == "com.contoso.docs" } != nil)
        }
    }

    /// "Every answer is audited" (channel key): an app without the SDK (Notes) asking for Ben's
    /// key was refused before the audit line, so a hostile app probing for keys left no trace.
    @Test func aKeyRequestFromAnAppWithoutTheSDKIsAudited() throws {
        let b = try TestBroker(prefix: "mamlab-red5")
        defer { b.stop() }
        let notes = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                        ["run", "--manifest", "\(TestBroker.root)/Apps/Notes/Info.plist", "--broker", b.launcherSocket,
                                         "--containers", b.containers, "--developer", "--", TestBroker.bin + "/Courier",
                                         "hello", "key", "ben@contoso.com", "key", "ben/../adele", "bye"],
                                        environment: TestBroker.environment).allLines()
        #expect(notes.filter { $0["step"]?.string == "key" && $0["error"] != nil }.count == 2, "\(notes)")
        let audited = b.auditRecords.filter { $0["channel"] as? String == "key" && ($0["source"] as? [String: Any])?["app"] as? String == "com.example.notes" }
        #expect(audited.count == 2 && audited.allSatisfy { $0["outcome"] as? String == "blocked" }, "\(audited)")
    }

    /// The security log (refused keys, identities, sign-ins) is kept apart so that a flood of
    /// decisions cannot push a key theft out; but each of an app's own refused key requests was
    /// a security record, so one app asking for Ben's key 2,000 times (a second's budget)
    /// rotated Docs' refused attempt out of the kept logs (here 16 KiB each, nine of them;
    /// at the default 64 MiB about twelve minutes of such a flood). An app's security records
    /// past its budget are counted, not written one by one.
    @Test func oneAppsFloodOfRefusedKeysDoesNotPushAnotherAppsOutOfTheSecurityLog() throws {
        let b = try TestBroker(prefix: "mamlab-red5", extraArguments: ["--audit-max-bytes", "16384"])
        defer { b.stop() }
        func courier(_ app: String, _ steps: [String]) throws -> [JSONValue] {
            try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                ["run", "--manifest", "\(TestBroker.root)/Apps/\(app)/Info.plist", "--broker", b.launcherSocket,
                                 "--containers", b.containers, "--developer", "--", TestBroker.bin + "/Courier"] + steps,
                                environment: TestBroker.environment).allLines()
        }
        let notes = try courier("Docs", ["hello", "key", "ben@contoso.com", "bye"])
        #expect(notes.first { $0["step"]?.string == "key" }?["error"]?.string == "notAllowed", "\(notes)")
        func notesAttempt(_ r: [String: Any]) -> Bool {
            r["channel"] as? String == "key" && (r["source"] as? [String: Any])?["app"] as? String == "com.contoso.docs"
        }
        #expect(b.auditRecord(matching: notesAttempt) != nil)
        let flood = try courier("Dialer", ["hello"] + Array(repeating: ["key", "ben@contoso.com"], count: 2_000).flatMap { $0 } + ["bye"])
        #expect(flood.filter { $0["step"]?.string == "key" }.count == 2_000)
        #expect(b.auditRecords.contains(where: notesAttempt), "Dialer's flood of refused key requests pushed Docs' refused key request out of the security log")
        // What was not written one by one is counted (at the minute's end, or the broker's).
        b.kill(SIGTERM)
        let counted = b.auditRecords.first { $0["channel"] as? String == "security" && ($0["source"] as? [String: Any])?["app"] as? String == "com.contoso.dialer" }
        #expect((counted?["size"] as? Int ?? 0) > 0, "\(String(describing: counted))")
    }

    /// A wipe signs the account out of the app until the user signs it in again; a remediation
    /// asked for just before (silent, compliant a second later) enrolled the account again when
    /// it ended, without the user. (Mail, signed out of Ben, no longer hears the remediation's
    /// end: the wait gives it three seconds to happen.)
    @Test func aRemediationEndingAfterAWipeDoesNotEnrollTheAccountAgain() throws {
        let b = try TestBroker(prefix: "mamlab-red5")
        defer { b.stop() }
        let ben = "ben@contoso.com", benOID = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
        let mail = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                       ["run", "--manifest", "\(TestBroker.root)/Apps/Mail/Info.plist", "--broker", b.launcherSocket,
                                        "--containers", b.containers, "--developer", "--user", ben, "--", TestBroker.bin + "/Courier",
                                        "hello", "remediate", benOID, "silent", "unenroll", ben, "wipe", "wait-compliance", "3", "sleep", "500", "bye"],
                                       environment: TestBroker.environment).allLines()
        #expect(mail.contains { $0["step"]?.string == "wait-compliance" }, "\(mail)")
        let records = b.auditRecords.filter { ($0["source"] as? [String: Any])?["app"] as? String == "com.contoso.mail" || $0["app"] as? String == "com.contoso.mail" }
        let unenrolled = try #require(records.lastIndex { $0["channel"] as? String == "enrollment" && ($0["detail"] as? String)?.hasSuffix(": 104") == true }, "\(records)")
        let after = records[(unenrolled + 1)...].filter { $0["channel"] as? String == "enrollment" }
        #expect(after.isEmpty, "enrolled again after the wipe: \(after)\n\(mail)")
    }

    /// Ben under a policy whose phone links go to a custom dialer (managed-os-sharing:
    /// contosodial, which the tenant's Dialer takes): an author's app declaring contosodial
    /// under a bundle id that sorts first got the phone number.
    @Test func anAppClaimingTheCustomDialersSchemeDoesNotReceiveAPhoneLink() throws {
        let thief = Self.authorsManifest(declaring: """
        \t<key>CFBundleURLTypes</key>
        \t<array><dict><key>CFBundleURLName</key><string>com.aaa.thief</string>
        \t\t<key>CFBundleURLSchemes</key><array><string>contosodial</string></array>
        \t</dict></array>
        """)
        let root = try Root(extra: ["Thief": thief])
        // The custom-dialer policy assigned to Ben's group (finance), locked-down to its pilot group.
        let tenantText = try String(contentsOfFile: TestBroker.root + "/Policies/contoso/tenant.json", encoding: .utf8)
        #expect(tenantText.contains("\"groupId\": \"finance\"") && tenantText.contains("\"groupId\": \"pilot-os-sharing\""))
        let tenant = root.path + "/tenant.json"
        try tenantText.replacingOccurrences(of: "\"groupId\": \"finance\"", with: "\"groupId\": \"swap\"")
            .replacingOccurrences(of: "\"groupId\": \"pilot-os-sharing\"", with: "\"groupId\": \"finance\"")
            .replacingOccurrences(of: "\"groupId\": \"swap\"", with: "\"groupId\": \"pilot-os-sharing\"")
            .write(toFile: tenant, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: root.path + "/policies", withDestinationPath: TestBroker.root + "/Policies/contoso/policies")
        let broker = try TestBroker(prefix: "mamlab-red5", tenant: tenant, apps: root.path + "/Apps")
        defer { broker.stop() }
        let mail = try ScriptedProcess(TestBroker.bin + "/mamlaunch",
                                       ["run", "--manifest", root.path + "/Apps/Mail/Info.plist", "--developer", "--user", "ben@contoso.com",
                                        "--broker", broker.launcherSocket, "--containers", broker.containers,
                                        "--", TestBroker.bin + "/Courier", "hello", "open-url", "tel:+15550100", "bye"],
                                       environment: ProcessInfo.processInfo.environment.merging(["MAMLAB_ROOT": root.path]) { _, b in b }).allLines()
        #expect(mail.contains { $0["step"]?.string == "open-url" }, "\(mail)")
        let stolen = broker.auditRecords.filter { ($0["target"] as? [String: Any])?["app"] as? String == "com.aaa.thief" }
        #expect(stolen.isEmpty, "Ben's phone link went to an author's app that claims the custom dialer's scheme: \(stolen)")
        #expect(broker.auditRecord { $0["channel"] as? String == "open-url" && ($0["target"] as? [String: Any])?["app"] as? String == "com.contoso.dialer" } != nil)
    }
}
