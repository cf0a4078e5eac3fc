import Foundation
import MAMConfigurator
import MAMPolicy
import Testing

struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state ^ (state >> 29)
    }
}

@Suite("mamconfigurator properties and validation")
struct PropertyAndValidationTests {
    static let schemes = ["alpha", "Beta", "mailto", "tel", "zips", "alpha-intunemam", "https", "$(PRODUCT_NAME)", "x.y+z"]
    static let types = ["public.text", "com.adobe.pdf", "com.microsoft.intune.mam.public.text", "public.image", "Com.Example.Doc"]

    static func manifest(_ g: inout Seeded) -> Node {
        func pick(_ from: [String]) -> [String] { from.filter { _ in Bool.random(using: &g) } }
        var pairs: [(key: String, value: Node)] = [("CFBundleIdentifier", Node(.string("com.gen.app\(Int.random(in: 0..<9, using: &g))")))]
        if Bool.random(using: &g) {
            pairs.append(("CFBundleURLTypes", Node(.array((0..<Int.random(in: 1...2, using: &g)).map { _ in
                Node(.object([("CFBundleURLSchemes", .strings(pick(schemes)))]))
            }))))
        }
        if Bool.random(using: &g) { pairs.append(("LSApplicationQueriesSchemes", .strings(pick(schemes)))) }
        if Bool.random(using: &g) {
            pairs.append(("CFBundleDocumentTypes", Node(.array([Node(.object([("LSItemContentTypes", .strings(pick(types)))]))]))))
        }
        if Bool.random(using: &g) {
            let rule: Node = Bool.random(using: &g)
                ? Node(.string(pick(types).map { "ANY $attachment.registeredTypeIdentifiers UTI-CONFORMS-TO \"\($0)\"" }.joined(separator: " || ")))
                : Node(.object([("NSExtensionActivationSupportsImageWithMaxCount", Node(.integer(Int.random(in: 0...3, using: &g))))]))
            pairs.append(("NSExtension", Node(.object([
                ("NSExtensionPointIdentifier", Node(.string(Bool.random(using: &g) ? "com.apple.share-services" : "com.apple.ui-services"))),
                ("NSExtensionAttributes", Node(.object([("NSExtensionActivationRule", rule)]))),
            ]))))
        }
        var settings: [(key: String, value: Node)] = [("ADALClientId", Node(.string("id"))), ("ADALRedirectScheme", Node(.string("msauth")))]
        if pairs.contains(where: { $0.key == "NSExtension" }) { settings.append(("ContainingAppBundleId", Node(.string("com.gen")))) }
        pairs.append(("IntuneMAMSettings", Node(.object(settings))))
        return Node(.object(pairs))
    }

    static func entitlements(_ g: inout Seeded) -> Node {
        var pairs: [(key: String, value: Node)] = []
        if Bool.random(using: &g) { pairs.append(("keychain-access-groups", .strings(["$(AppIdentifierPrefix)com.gen.app1", "ABCDE12345.com.microsoft.intune.mam"].filter { _ in Bool.random(using: &g) }))) }
        if Bool.random(using: &g) { pairs.append(("com.apple.security.application-groups", .strings(["group.a", "group.b"]))) }
        return Node(.object(pairs))
    }

    @Test func configuringIsIdempotentOverGeneratedManifests() throws {
        var g = Seeded(state: 42)
        for round in 0..<300 {
            let binary = round % 5 == 0
            let info = try PlistDocument(root: Self.manifest(&g), format: binary ? .binary : .xml).data()
            let ent = try PlistDocument(root: Self.entitlements(&g), format: .xml).data()
            let first = try configure(info: info, entitlements: ent)
            #expect(!first.diagnostics.contains { $0.severity == .error }, "round \(round): \(first.diagnostics)")
            let once = first.info ?? info, onceEnt = first.entitlements ?? ent
            let second = try configure(info: once, entitlements: onceEnt)
            #expect(second.changes.isEmpty, "round \(round): \(second.changes)")
            #expect(second.info == nil && second.entitlements == nil, "round \(round)")
            // Whatever was configured reads back as a manifest whose twins are all there.
            let m = try AppManifest.load(once, file: "Info.plist").manifest
            for s in m.urlSchemes where !s.hasSuffix("-intunemam") { #expect(m.handles(scheme: s + "-intunemam")) }
            for t in m.contentTypeSet where !ContentType.isTwin(t) { #expect(m.contentTypeSet.contains(ContentType.twin(of: t).lowercased())) }
        }
    }

    func problems(_ settings: [(key: String, value: Node)], extra: [(key: String, value: Node)] = []) -> [String] {
        var c = Configurator(info: Node(.object([("CFBundleIdentifier", Node(.string("com.x"))), ("IntuneMAMSettings", Node(.object(settings)))] + extra)),
                             infoFile: "Info.plist", entitlements: nil, entitlementsFile: "")
        c.run()
        return c.diagnostics.items.map(\.description)
    }

    @Test func settingsAreValidatedLikeACompiler() {
        let id: (key: String, value: Node) = ("ADALClientId", Node(.string("c")))
        let uri: (key: String, value: Node) = ("ADALRedirectUri", Node(.string("msauth.com.x://auth")))
        #expect(problems([id]).contains("Info.plist: error: IntuneMAMSettings: ADALClientId needs ADALRedirectUri or ADALRedirectScheme"))
        #expect(problems([id, uri, ("MAMPolicyRequired", Node(.bool(true)))]).contains(
            "Info.plist: warning: IntuneMAMSettings: MAMPolicyRequired is YES but AutoEnrollOnLaunch is not; the SDK expects both"))
        #expect(problems([id, uri, ("BackgroundColor", Node(.string("red")))]).contains {
            $0.hasPrefix("Info.plist: error: IntuneMAMSettings.BackgroundColor: \"red\" is not a colour") })
        #expect(problems([id, uri, ("ForegroundColor", Node(.string("#00ff7F")))]).allSatisfy { !$0.contains("error") })
        #expect(problems([id, uri, ("SplashDuration", Node(.string("2")))]).contains(
            "Info.plist: error: IntuneMAMSettings.SplashDuration: expected a number, found string \"2\""))
        #expect(problems([id, uri, ("Telemetry", Node(.bool(true)))]).contains(
            "Info.plist: warning: IntuneMAMSettings.Telemetry: unknown IntuneMAMSettings key \"Telemetry\"; the SDK ignores it"))
        let ext: [(key: String, value: Node)] = [("NSExtension", Node(.object([("NSExtensionPointIdentifier", Node(.string("com.apple.share-services")))])))]
        #expect(problems([], extra: ext).contains("Info.plist: error: IntuneMAMSettings: an extension must name its app in ContainingAppBundleId"))
    }

    @Test func keychainGroupsRespectAnOverrideAndTeamPrefixes() throws {
        var c = Configurator(
            info: Node(.object([("CFBundleIdentifier", Node(.string("com.x"))),
                                ("IntuneMAMSettings", Node(.object([("ADALClientId", Node(.string("c"))), ("ADALRedirectScheme", Node(.string("m"))),
                                                                    ("ADALCacheKeychainGroupOverride", Node(.string("com.x.cache")))])))])),
            infoFile: "Info.plist",
            entitlements: Node(.object([("keychain-access-groups", .strings(["ABCDE12345.com.x", "ABCDE12345.com.microsoft.intune.mam"]))])),
            entitlementsFile: "app.entitlements")
        c.run()
        #expect(c.entitlements?["keychain-access-groups"] == .strings(["ABCDE12345.com.x", "ABCDE12345.com.microsoft.intune.mam", "$(AppIdentifierPrefix)com.x.cache"]))
    }

    @Test func malformedXMLIsRejectedWithItsLine() {
        do {
            _ = try PlistDocument.read(Data("<?xml version=\"1.0\"?>\n<plist>\n<dict>\n<key>a</key>\n<strin>x</strin>\n</dict></plist>".utf8), file: "bad.plist")
            Issue.record("accepted")
        } catch {
            #expect(error.diagnostics.first?.description.hasPrefix("bad.plist:5:") == true, "\(error.diagnostics)")
            #expect(error.diagnostics.first?.description.contains("unknown element <strin>") == true)
        }
    }
}
