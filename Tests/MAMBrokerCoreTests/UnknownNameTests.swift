@testable import MAMBroker
import MAMWire
import Testing

/// "Not running" means not running (issue 22: `send docs.contoso …` answered "docs.contoso is not
/// running" while Docs ran): a name no installed app has is answered as unknown, with the
/// installed app it looks like; only an installed app that is not running is "not running".
@Suite("Broker: an unknown app name is not an app that is not running")
struct UnknownNameTests {
    static func detail(_ delivered: [CoreLab.Delivered]) -> String? {
        for d in delivered { if case let .error(_, detail) = d.frame.message { return detail } }
        return nil
    }

    @Test(arguments: [
        ("docs.contoso", "no installed app has the bundle id docs.contoso; did you mean com.contoso.docs (Contoso Docs)?"),
        ("Docs", "no installed app has the bundle id Docs; did you mean com.contoso.docs (Contoso Docs)?"),
        ("com.example.nowhere", "no installed app has the bundle id com.example.nowhere"),
    ])
    func anUnknownNameIsSaidToBeUnknown(_ name: String, _ expected: String) {
        var lab = CoreLab()
        let n = lab.launch("com.example.notes")
        let shared = lab.send(n, .share(target: name, contentType: "com.adobe.pdf", name: "a.pdf"), lab.document("a"))
        #expect(shared.error == .unknownTarget)
        #expect(Self.detail(shared)?.hasPrefix(expected) == true, "\(Self.detail(shared) ?? "no detail")")
        let imported = lab.send(n, .importRequest(source: name, contentType: "com.adobe.pdf"), frameID: 7)
        #expect(imported.error == .unknownTarget)
        #expect(Self.detail(imported)?.hasPrefix(expected) == true, "\(Self.detail(imported) ?? "no detail")")
    }

    /// Names resolve as `mamlaunch run` resolves them: an `Apps/` folder name or a bundle id, in
    /// any case, is the installed app (its own spelling, so no impostor answers to it).
    @Test(arguments: ["Docs", "docs", "COM.CONTOSO.DOCS", "com.contoso.docs"])
    func aFolderNameOrABundleIDInAnyCaseIsTheInstalledApp(_ name: String) {
        var lab = CoreLab()
        lab.core.appNames = ["docs": "com.contoso.docs"]
        let impostor = lab.launch("COM.CONTOSO.DOCS")
        let n = lab.launch("com.contoso.mail", account: "adele@contoso.com"), d = lab.launch("com.contoso.docs", account: "adele@contoso.com")
        let shared = lab.send(n, .share(target: name, contentType: "com.adobe.pdf", name: "a.pdf"), lab.document("a"))
        #expect(shared.error == nil, "\(Self.detail(shared) ?? "")")
        #expect(lab.received(d).contains { if case .document = $0.frame.message { return true } else { return false } })
        #expect(!lab.received(impostor).contains { if case .document = $0.frame.message { return true } else { return false } })
        lab.run(lab.core.handle(.disconnected(d)))
        #expect(Self.detail(lab.send(n, .importRequest(source: name, contentType: "com.adobe.pdf"), frameID: 9)) == "com.contoso.docs is not running")
    }

    @Test func anInstalledAppThatIsNotRunningIsNotRunning() {
        var lab = CoreLab()
        let n = lab.launch("com.example.notes")
        let imported = lab.send(n, .importRequest(source: "com.contoso.docs", contentType: "com.adobe.pdf"), frameID: 7)
        #expect(Self.detail(imported) == "com.contoso.docs is not running")
    }
}
