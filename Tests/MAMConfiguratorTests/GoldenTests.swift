import Foundation
import MAMConfigurator
import MAMPolicy
import MAMTestSupport
import Testing

enum Paths {
    static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let golden = here.appendingPathComponent("Golden")
    static let root = here.deletingLastPathComponent().deletingLastPathComponent()
}

/// Runs the configurator on two files' bytes and returns the new bytes (nil when unchanged).
func configure(info: Data, entitlements: Data?) throws -> (info: Data?, entitlements: Data?, changes: [Change], diagnostics: [Diagnostic]) {
    let i = try PlistDocument.read(info, file: "Info.plist")
    let e = try entitlements.map { try PlistDocument.read($0, file: "app.entitlements") }
    var c = Configurator(info: i.root, infoFile: "Info.plist", entitlements: e?.root, entitlementsFile: "app.entitlements")
    c.run()
    let newInfo = c.info == i.root ? nil : try PlistDocument(root: c.info, format: i.format).data()
    var newEnt: Data?
    if let e, let n = c.entitlements, n != e.root { newEnt = try PlistDocument(root: n, format: e.format).data() }
    return (newInfo, newEnt, c.changes, c.diagnostics.items)
}

@Suite("mamconfigurator golden files")
struct GoldenTests {
    static let cases = ["plain-app", "document-types", "extension-predicate", "extension-dictionary", "configured", "binary"]

    @Test("before and after", arguments: cases)
    func goldenCase(_ name: String) throws {
        let dir = Paths.golden.appendingPathComponent(name)
        let info = try Data(contentsOf: dir.appendingPathComponent("Info.plist"))
        let ent = try Data(contentsOf: dir.appendingPathComponent("app.entitlements"))
        let expectedInfo = try Data(contentsOf: dir.appendingPathComponent("Info.expected.plist"))
        let expectedEnt = try Data(contentsOf: dir.appendingPathComponent("app.expected.entitlements"))
        let out = try configure(info: info, entitlements: ent)
        #expect(!out.diagnostics.contains { $0.severity == .error }, "\(out.diagnostics)")
        let gotInfo = out.info ?? info, gotEnt = out.entitlements ?? ent
        if name == "binary" {
            // Binary plists keep their format; their dictionaries have no order to compare.
            #expect(gotInfo.starts(with: Array("bplist00".utf8)) && gotEnt.starts(with: Array("bplist00".utf8)))
            #expect(try PlistDocument.read(gotInfo, file: "x").root == PlistDocument.read(expectedInfo, file: "y").root)
        } else {
            #expect(String(decoding: gotInfo, as: UTF8.self) == String(decoding: expectedInfo, as: UTF8.self))
            #expect(String(decoding: gotEnt, as: UTF8.self) == String(decoding: expectedEnt, as: UTF8.self))
        }
        if name == "configured" { #expect(out.changes.isEmpty && out.info == nil && out.entitlements == nil) }
        // A second run changes nothing.
        let again = try configure(info: gotInfo, entitlements: gotEnt)
        #expect(again.changes.isEmpty, "\(again.changes)")
        #expect(again.info == nil && again.entitlements == nil)
    }

    @Test func placeholdersPassThroughUntouched() throws {
        let dir = Paths.golden.appendingPathComponent("plain-app")
        let out = try #require(try configure(info: Data(contentsOf: dir.appendingPathComponent("Info.plist")), entitlements: Data(contentsOf: dir.appendingPathComponent("app.entitlements"))).info)
        let text = String(decoding: out, as: UTF8.self)
        #expect(text.contains("<string>$(PRODUCT_BUNDLE_IDENTIFIER)</string>"))
        #expect(text.contains("<string>$(PRODUCT_BUNDLE_IDENTIFIER)-intunemam</string>"))
        #expect(text.contains("<string>$(CURRENT_PROJECT_VERSION)</string>"))
    }

    @Test func whatTheSeedsAskForIsAdded() throws {
        let dir = Paths.golden.appendingPathComponent("plain-app")
        let out = try configure(info: Data(contentsOf: dir.appendingPathComponent("Info.plist")),
                                entitlements: Data(contentsOf: dir.appendingPathComponent("app.entitlements")))
        let info = try PlistDocument.read(try #require(out.info), file: "i").root
        let queries = try #require(info["LSApplicationQueriesSchemes"]?.value)
        guard case let .array(items) = queries else { Issue.record("no queries"); return }
        let list = items.compactMap { if case let .string(s) = $0.value { s } else { nil } }
        for wanted in Configurator.fixedQueries + ["mailto-intunemam", "contosodocs-intunemam", "ms-outlook-intunemam"] {
            #expect(list.contains(wanted), "\(wanted)")
        }
        let ent = try PlistDocument.read(try #require(out.entitlements), file: "e").root
        guard case let .array(groups)? = ent["keychain-access-groups"]?.value else { Issue.record("no groups"); return }
        #expect(groups.map(\.value) == [.string("$(AppIdentifierPrefix)$(PRODUCT_BUNDLE_IDENTIFIER)"),
                                         .string("$(AppIdentifierPrefix)com.microsoft.intune.mam"),
                                         .string("$(AppIdentifierPrefix)com.microsoft.adalcache")])
        // Other keys keep their order.
        guard case let .object(pairs) = info.value else { Issue.record("the Info.plist written is not a dictionary: \(info.value)"); return }
        #expect(pairs.map(\.key) == ["CFBundleIdentifier", "CFBundleName", "CFBundleVersion", "CFBundleURLTypes",
                                     "LSApplicationQueriesSchemes", "IntuneMAMSettings", "UILaunchStoryboardName"])
    }

    static let plistutil = ["/usr/bin/plistutil", "/usr/local/bin/plistutil"].first { FileManager.default.isExecutableFile(atPath: $0) }

    // A second reader of what mamconfigurator writes: without it the test says it was skipped
    // and why, rather than passing having read nothing.
    @Test(.enabled(if: plistutil != nil, "plistutil is not installed (apt-get install -y libplist-utils; scripts/test installs it)"))
    func outputReadsBackWithPlistutil() throws {
        let plistutil = try #require(Self.plistutil)
        for name in Self.cases {
            let file = Paths.golden.appendingPathComponent(name).appendingPathComponent("Info.expected.plist")
            let r = try ChildProcess.run(plistutil, ["-i", file.path, "-f", "bin", "-o", "/dev/null"], timeout: 30)
            #expect(r.status == 0, "plistutil could not read \(name): \(r.err)")
        }
    }

    @Test func everySDKAppInAppsIsConfigured() throws {
        let apps = Paths.root.appendingPathComponent("Apps")
        var checked = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: apps.path).sorted() {
            let info = apps.appendingPathComponent(name).appendingPathComponent("Info.plist")
            guard let data = try? Data(contentsOf: info), try PlistDocument.read(data, file: name).root["IntuneMAMSettings"] != nil else { continue }
            let ent = try Data(contentsOf: apps.appendingPathComponent(name).appendingPathComponent("\(name).entitlements"))
            let out = try configure(info: data, entitlements: ent)
            #expect(out.changes.isEmpty, "Apps/\(name) is not configured: \(out.changes)")
            #expect(!out.diagnostics.contains { $0.severity == .error }, "\(out.diagnostics)")
            checked += 1
        }
        #expect(checked >= 4)
    }
}
