import MAMScript
import Testing

/// A command line read once into `Script`, as both interpreters (MAMKitScripting, Notes) take it.
@Suite struct ScriptTests {
    func script(_ name: String, _ arguments: String...) throws(Script.UsageError) -> Script {
        try Script(ScriptCommand(name, arguments))
    }

    @Test func wordsBecomeTheirMeaning() throws {
        #expect(try script("save", "localDrive", "-", "n.txt", "hi") == .save(location: "localDrive", account: nil, name: "n.txt", content: "hi"))
        #expect(try script("unenroll", "adele@contoso.com", "keep") == .unenroll("adele@contoso.com", wipe: false))
        #expect(try script("remediate", "adele@contoso.com", "interactive") == .remediate("adele@contoso.com", silent: false))
        #expect(try script("wait", "url") == .wait(kind: "url", seconds: 5))
        #expect(try script("in", "personal", "copy", "x") == .within(account: "personal", .copy("x")))
        #expect(try script("delegate", "switch", "refuse") == .delegate(.switchIdentity(allow: false)))
        #expect(try script("unprotect", "aGk=") == .unprotect(Array("hi".utf8)))
    }

    @Test(arguments: [
        (["unenroll", "a", "maybe"], "usage: unenroll ACCOUNT wipe|keep"),
        (["remediate", "a", "loudly"], "usage: remediate ACCOUNT silent|interactive"),
        (["paste", "extra"], "usage: paste "),
        (["in", "a", "in", "b", "c"], "in takes one command other than in and bye"),
        (["in", "a", "remediate", "b"], "usage: remediate ACCOUNT silent|interactive"),
        (["wait", "url", "3601"], "SECONDS is a number from 0 to 3600"),
        (["read-at", "f", "a", "0", "2000000"], "COUNT is from 0 to 2^20 bytes"),
        (["unprotect", "%%"], "not base64"),
        (["launch-rockets"], "unknown command launch-rockets"),
    ])
    func aWrongLineIsRefusedWithWhatIsWrong(_ words: [String], _ message: String) {
        #expect(throws: Script.UsageError(message)) { try Script(ScriptCommand(words[0], Array(words.dropFirst()))) }
    }
}
