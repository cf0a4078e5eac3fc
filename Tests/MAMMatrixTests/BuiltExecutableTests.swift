import MAMCatalog
import MAMPolicy
import Testing

/// The program built for an app is named by its manifest, which its author wrote: the name is
/// one plain file name in the tool folder, never a path that leaves it.
@Suite("The program built for an app")
struct BuiltExecutableTests {
    func app(executable: String?) -> CatalogApp {
        CatalogApp(name: "Mail", manifest: AppManifest(bundleID: "com.contoso.mail", executable: executable), file: "/p/Apps/Mail/Info.plist")
    }

    @Test func theManifestsExecutableOrTheFolderNameIsAFileInTheToolFolder() {
        #expect(app(executable: "MailApp").builtExecutable(in: "/tools") == "/tools/MailApp")
        #expect(app(executable: nil).builtExecutable(in: "/tools") == "/tools/Mail")
    }

    @Test(arguments: ["../../bin/sh", "/bin/sh", "..", ".", "", "a/b", "sh\0x"])
    func anExecutableThatIsNotAPlainFileNameNamesNoBuiltProgram(_ name: String) {
        #expect(app(executable: name).builtExecutable(in: "/tools") == nil)
    }
}
