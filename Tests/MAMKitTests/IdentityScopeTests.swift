import Foundation
import MAMScript
import Testing

/// Scoped identities (SEMANTICS §1) in a real app process: inherited by child tasks when they
/// are created, not by detached tasks, and what the broker decides under them.
@Suite("MAMKit: identity scopes", .serialized, .timeLimit(.minutes(2)))
struct IdentityScopeTests {
    @Test func childTasksInheritTheScopeAndDetachedTasksDoNot() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        let seen = try mail.send("scopes", "adele@contoso.com")
        mail.finish()
        for child in ["scope", "asyncLet", "taskGroup", "task"] {
            #expect(seen[child]?["identity"]?.string == "adele@contoso.com", "\(child): \(seen)")
            #expect(seen[child]?["managed"]?.bool == true, "\(child)")
        }
        // Detached: no scope; Mail (multi-identity) has no UI identity set: unmanaged.
        #expect(seen["detached"]?["scoped"]?.isNull == true && seen["detached"]?["identity"]?.isNull == true, "\(seen)")
        #expect(seen["detached"]?["managed"]?.bool == false)
        #expect(seen["nestedNil"]?["identity"]?.isNull == true)
        #expect(seen["outside"]?["identity"]?.isNull == true && seen["outside"]?["managed"]?.bool == false)
    }

    /// Seed 000 and seed 002 §Thread queues: queued work keeps the identity of the code that
    /// queued it, through the plain Dispatch and OperationQueue calls as through MAMKit's own;
    /// it may set another while it runs, and leaves the queue's thread as it found it. A work
    /// item keeps the identity of the code that made it, not of the code that dispatches it.
    @Test func queuedWorkKeepsTheIdentityOfTheCodeThatQueuedIt() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        let seen = try mail.send("queues", "adele@contoso.com")
        mail.finish()
        #expect(seen["carriesIntoPlainQueues"]?.bool == true, "the sample app's executable interposes libdispatch")
        func adele(_ v: JSONValue?) -> Bool { v?["identity"]?.string == "adele@contoso.com" && v?["managed"]?.bool == true }
        let kept = ["async", "plainAsync", "asyncAfter", "plainAsyncAfter", "sync", "plainSync", "barrier", "groupAsync",
                    "groupNotify", "sourceHandler", "operation", "plainOperation", "workItem", "plainWorkItem", "workItemMadeInScope"]
        for channel in kept { #expect(adele(seen[channel]), "\(channel): \(seen[channel] ?? .null)") }
        let performed = seen["concurrentPerform"]?.array ?? []
        #expect(performed.count == 4 && performed.allSatisfy(adele), "concurrentPerform: \(performed)")
        for changed in ["changedInside", "plainChangedInside"] {
            #expect(seen[changed]?["identity"]?.string == "", "work may set its own identity: \(changed)")
        }
        // A serial OperationQueue starts each operation from the thread the one before ran on;
        // each still runs under the identity it was added with.
        let serial = seen["serialOperations"]
        #expect(serial?["first"]?["scoped"]?.isNull == true, "\(serial ?? .null)")
        #expect(adele(serial?["second"]), "\(serial ?? .null)")
        #expect(serial?["third"]?["scoped"]?.string == "" && serial?["third"]?["managed"]?.bool == false, "\(serial ?? .null)")
        // Made outside any scope: none, though dispatched inside adele's. Queued after the scope
        // ended: none (Mail has no process identity: unmanaged).
        for none in ["workItemMadeOutside", "afterWork"] {
            #expect(seen[none]?["scoped"]?.isNull == true && seen[none]?["managed"]?.bool == false, "\(none): \(seen[none] ?? .null)")
        }
    }

    /// The broker decides work queued the plain way under the identity of the code that queued
    /// it: org data copied from a background block inside adele's scope stays in.
    @Test func aPlainlyQueuedActionIsDecidedUnderTheQueuingIdentity() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        #expect(try mail.send("in", "adele@contoso.com", "queued", "copy", "queued org data")["ok"]?.bool == true)
        let blocked = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(blocked?.outcome == "blocked", "\(String(describing: blocked))")
        #expect(try mail.send("queued", "copy", "queued personal data")["ok"]?.bool == true)
        let allowed = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(allowed?.outcome == "allowed" && allowed?["text"]?.string == "queued personal data", "\(String(describing: allowed))")
        mail.finish()
    }

    @Test func anActionInAScopeIsDecidedUnderTheScopedIdentityAndTheUIIdentityComesBack() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail")
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        #expect(try mail.send("in", "adele@contoso.com", "policy")["managed"]?.bool == true)
        #expect(try mail.send("policy")["managed"]?.bool == false)
        // Copied under adele's scope: org data, kept from Notes.
        #expect(try mail.send("in", "adele@contoso.com", "copy", "scoped org data")["ok"]?.bool == true)
        let first = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(first?.outcome == "blocked")
        // Copied outside it: the personal identity again.
        #expect(try mail.send("copy", "personal data")["ok"]?.bool == true)
        let second = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(second?.outcome == "allowed" && second?["text"]?.string == "personal data")
        // A UI switch to another account than the scope's is not allowed.
        #expect(try mail.send("in", "adele@contoso.com", "identity", "ben@contoso.com")["result"]?.string == "notAllowed")
        mail.finish()
    }
}

@Suite("MAMKit: the launch state", .serialized, .timeLimit(.minutes(2)))
struct LaunchStateTests {
    @Test func whatAMultiIdentityAppDoesBeforeItShowsAnIdentityIsNotOrgData() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        #expect(try mail.send("hello")["identity"]?.isNull == true)
        #expect(try mail.send("copy", "before any identity")["ok"]?.bool == true)
        let paste = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(paste?.outcome == "allowed" && paste?["text"]?.string == "before any identity", "\(String(describing: paste))")
        // Once it shows adele, her data is kept in.
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        #expect(try mail.send("copy", "adele's data")["ok"]?.bool == true)
        let blocked = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(blocked?.outcome == "blocked")
        mail.finish()
    }
}

/// Seed 002 §Exit criteria, "Managed pause" and "Unmanaged pause": a paused app comes back on the
/// same identity, its policy still applied or still not; a managed one runs conditional launch
/// again, and a user who cancels it is the delegate's to handle.
@Suite("MAMKit: pause and resume", .serialized, .timeLimit(.minutes(2)))
struct PauseResumeTests {
    @Test func aPausedAppResumesOnTheIdentityItShowed() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        #expect(try mail.send("pause")["ok"]?.bool == true)
        let managed = try mail.send("resume")
        #expect(managed["result"]?.string == "success" && managed["identity"]?.string == "adele@contoso.com" && managed["managed"]?.bool == true, "\(managed)")
        #expect(try mail.send("identity", "personal")["result"]?.string == "success")
        _ = try mail.send("pause")
        let unmanaged = try mail.send("resume")
        #expect(unmanaged["identity"]?.string == "" && unmanaged["managed"]?.bool == false, "\(unmanaged)")
        // Back on adele, the user cancels the PIN on resume: the delegate lets the app leave the
        // account, and nothing managed is on screen; refused, the account stays locked.
        #expect(try mail.send("identity", "adele@contoso.com")["result"]?.string == "success")
        _ = try mail.send("delegate", "conditional-launch", "cancel")
        _ = try mail.send("delegate", "switch", "refuse")
        _ = try mail.send("pause")
        #expect(try mail.send("resume")["result"]?.string == "failed")
        _ = try mail.send("delegate", "switch", "allow")
        _ = try mail.send("pause")
        let left = try mail.send("resume")
        #expect(left["result"]?.string == "cancelled" && left["managed"]?.bool == false, "\(left)")
        mail.finish()
    }
}

/// SDK-API §2 and §3: the UI identity is per window or scene; UI work acts under the key
/// window's, and a window keeps its own until it comes to the front.
@Suite("MAMKit: a UI identity per window", .serialized, .timeLimit(.minutes(2)))
struct WindowIdentityTests {
    @Test func eachWindowHasItsIdentityAndUIWorkTakesTheKeyWindows() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        let inbox = try mail.send("window", "inbox", "identity", "adele@contoso.com")
        #expect(inbox["result"]?.string == "success" && inbox["key"]?.string == "inbox" && inbox["identity"]?.string == "adele@contoso.com", "\(inbox)")
        let notes = try mail.send("window", "notes", "identity", "personal")
        #expect(notes["result"]?.string == "success" && notes["window"]?.string == "" && notes["windowManaged"]?.bool == false, "\(notes)")
        // The key window is still the inbox: a copy is adele's org data, kept from Notes.
        #expect(notes["key"]?.string == "inbox" && notes["identity"]?.string == "adele@contoso.com", "\(notes)")
        #expect(try mail.send("copy", "inbox text")["ok"]?.bool == true)
        let first = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(first?.outcome == "blocked")
        // The personal window comes to the front: its copy is personal data.
        let front = try mail.send("window", "notes", "key")
        #expect(front["result"]?.string == "success" && front["identity"]?.string == "", "\(front)")
        #expect(try mail.send("copy", "notes text")["ok"]?.bool == true)
        let second = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(second?.outcome == "allowed" && second?["text"]?.string == "notes text")
        let back = try mail.send("window", "inbox")
        #expect(back["window"]?.string == "adele@contoso.com" && back["windowManaged"]?.bool == true, "\(back)")
        mail.finish()
    }

    /// SDK-API §2: a nil UI identity is "unset", and UI work falls back to the process identity;
    /// Mail (multi-identity) has none, so it is back in its launch state, unmanaged. The broker
    /// hears it at once: it used to go on acting under the account the window had shown, so a
    /// copy made after the window was cleared was still adele's org data.
    @Test func clearingTheKeyWindowsIdentityLeavesItsAccountInTheBrokerToo() throws {
        let b = try KitBroker()
        defer { b.stop() }
        let mail = try b.launch("Mail", user: "adele@contoso.com")
        #expect(try mail.send("window", "inbox", "identity", "adele@contoso.com")["result"]?.string == "success")
        let cleared = try mail.send("window", "inbox", "identity", "none")
        #expect(cleared["result"]?.string == "success" && cleared["window"]?.isNull == true && cleared["identity"]?.isNull == true
                && cleared["windowManaged"]?.bool == false, "\(cleared)")
        // The broker's last identity switch for Mail left adele for the unmanaged launch state.
        let switches = b.auditRecords.filter { $0["channel"] as? String == "identity" && $0["outcome"] as? String == "allowed" }
        let last = switches.last?["target"] as? [String: Any]
        #expect(last?["managed"] as? Bool == false && last?["identity"] as? String != "adele@contoso.com", "\(switches)")
        // And UI work acts so: a copy now is not org data, and pastes into Notes.
        #expect(try mail.send("copy", "after clearing")["ok"]?.bool == true)
        let paste = try b.courier("Notes", ["hello", "paste", "bye"]).courierLines().first { $0["step"]?.string == "paste" }
        #expect(paste?.outcome == "allowed" && paste?["text"]?.string == "after clearing", "\(String(describing: paste))")
        mail.finish()
    }
}
