import MAMPolicy
import Testing

@Suite("4.3 pasteboard")
struct PasteboardTests {
    func paste(_ lab: Lab, _ text: String, from: Party, into: Party) -> Decision {
        lab.engine.paste(PasteboardItem(source: from, text: text), into: into)
    }

    @Test func sameAppSameIdentityAlwaysPastes() {
        let lab = Lab(settings: .with { $0.clipboard = .blocked })
        let d = paste(lab, "secret", from: lab.party("mail"), into: lab.party("mail"))
        #expect(d.outcome == .allowed && d.rule == .pasteSameParty)
    }

    // The rule, not only its paragraph: five rules share §4.3.2, so a paragraph id cannot tell
    // a managed target from a blocked level.
    @Test(arguments: [
        (ClipboardLevel.allApps, "notes", Outcome.allowed, Rule.pasteOrgAllApps),
        (.managedAppsWithPasteIn, "notes", .blocked, .pasteOrgNotManagedTarget),
        (.managedApps, "notes", .blocked, .pasteOrgNotManagedTarget),
        (.blocked, "notes", .blocked, .pasteOrgBlocked),
        (.allApps, "docs", .allowed, .pasteOrgAllApps),
        (.managedAppsWithPasteIn, "docs", .allowed, .pasteOrgManagedTarget),
        (.managedApps, "docs", .allowed, .pasteOrgManagedTarget),
        (.blocked, "docs", .blocked, .pasteOrgBlocked),
    ])
    func orgDataFollowsTheSourceLevel(level: ClipboardLevel, target: String, expected: Outcome, rule: Rule) {
        let lab = Lab(settings: .with { $0.clipboard = level })
        let d = paste(lab, "quarterly numbers", from: lab.party("mail", Lab.adele), into: lab.party(target))
        #expect(d.outcome == expected && d.rule == rule, "\(level) into \(target): \(d)")
    }

    @Test func personalIdentityInsideAManagedAppIsNotAManagedTarget() {
        let lab = Lab(settings: .with { $0.clipboard = .managedApps })
        let d = paste(lab, "text", from: lab.party("docs"), into: lab.party("mail", "personal"))
        #expect(d.outcome == .blocked && d.rule == .pasteOrgNotManagedTarget && d.tag == .observed)
    }

    @Test func blockedPasteDeliversTheNotice() {
        let lab = Lab(settings: .with { $0.clipboard = .blocked })
        let d = paste(lab, "secret", from: lab.party("mail"), into: lab.party("notes"))
        #expect(d.replacementText == "Your organization's data cannot be pasted here.")
        #expect(d.message == UserMessage.paste)
    }

    // The limit counts UTF-16 code units (FidelityTests has the table at the limit and one past).
    @Test func characterLimitCountsUTF16CodeUnitsNotBytes() {
        let lab = Lab(settings: .with { $0.clipboard = .blocked; $0.clipboardExceptionLength = 5 })
        let src = lab.party("mail"), dst = lab.party("notes")
        #expect(paste(lab, "12345", from: src, into: dst).rule == .pasteUnderCharacterLimit)
        #expect(paste(lab, "123456", from: src, into: dst).outcome == .blocked)
        // Five units, more UTF-8 bytes: still within the limit.
        #expect(paste(lab, "ééééé", from: src, into: dst).outcome == .allowed)
        // A flag is two regional indicators, each two units: three flags are 12.
        #expect(paste(lab, "🇫🇷🇫🇷🇫🇷", from: src, into: dst).outcome == .blocked)
        #expect(paste(lab, "🇫🇷a", from: src, into: dst).outcome == .allowed)
    }

    @Test(arguments: [
        (ClipboardLevel.allApps, Outcome.allowed, Rule.pasteInAllowed), (.managedAppsWithPasteIn, .allowed, .pasteInAllowed),
        (.managedApps, .blocked, .pasteInBlocked), (.blocked, .blocked, .pasteInBlocked),
    ])
    func nonOrgDataIntoAManagedPartyFollowsTheTargetLevel(level: ClipboardLevel, expected: Outcome, rule: Rule) {
        let lab = Lab(settings: .with { $0.clipboard = level })
        let d = paste(lab, "from the web", from: lab.party("notes"), into: lab.party("docs"))
        #expect(d.outcome == expected && d.rule == rule, "\(level): \(d)")
    }

    @Test func personalTextFromAPolicyManagedAppPastesIntoManagedAppsLevel() {
        let lab = Lab(settings: .with { $0.clipboard = .managedApps })
        let d = paste(lab, "x", from: lab.party("mail", "personal"), into: lab.party("docs"))
        #expect(d.outcome == .allowed && d.rule == .pasteInFromManaged && d.tag == .chosen)
    }

    @Test func nonOrgDataIntoAnUnmanagedPartyIsUnrestricted() {
        let lab = Lab(settings: .with { $0.clipboard = .blocked })
        #expect(paste(lab, "x", from: lab.party("notes"), into: lab.party("chat")).outcome == .allowed)
    }
}
