import Foundation
import Testing

/// `mamlaunch explain --launch-check`: what happens when an app opens on a device described by
/// flags, under the vendor's levels, through the command as an admin runs it.
@Suite("explain --launch-check")
struct LaunchCheckCommandTests {
    static func level(_ n: Int) throws -> String {
        let folder = CommandRunner.root.appendingPathComponent("Policies/frameworks")
        let file = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first { $0.hasPrefix("level-\(n)-") })
        return folder.appendingPathComponent(file).path
    }

    static func check(_ level: Int, _ device: [String]) throws -> [String: Any] {
        let r = try CommandRunner.run(["explain", "--launch-check", "--policy", try Self.level(level), "--from", "Outlook", "--json"] + device)
        #expect(r.status == 0, "\(r.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    }

    /// (level, device flags, action or nil, the deciding rule's id).
    static let cases: [(Int, [String], String?, String)] = [
        (3, [], nil, "9.0"),
        (3, ["--offline", "12h1m"], "block", "9.7"),
        (3, ["--offline", "12h"], nil, "9.0"),
        (3, ["--offline", "P90DT1M"], "wipe", "9.7"),
        (3, ["--jailbroken"], "wipe", "9.4"),
        (2, ["--jailbroken"], "block", "9.4"),
        (3, ["--os", "12.4.4"], "block", "9.1"),
        (1, ["--os", "12.4.4"], nil, "9.0"),
        (3, ["--threat-level", "medium"], "block", "9.6"),
    ]

    @Test("each level's answer for the device the flags describe", arguments: cases.indices)
    func levels(_ i: Int) throws {
        let (level, flags, action, id) = Self.cases[i]
        let o = try Self.check(level, flags)
        #expect(o["action"] as? String == action, "Level \(level) \(flags): \(o)")
        #expect(o["rule"] as? String == id, "Level \(level) \(flags): \(o)")
        #expect(o["opens"] as? Bool == (action == nil), "\(o)")
    }

    @Test("the text names the rule, each failing check with its settings, and what the user sees")
    func textOutput() throws {
        let r = try CommandRunner.run(["explain", "--launch-check", "--policy", try Self.level(3), "--from", "Outlook", "--jailbroken", "--os", "11"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("WIPED at launch by launchJailbroken (9.4, doc: admin)"), "\(r.stdout)")
        #expect(r.stdout.contains("- block: iOS 11 is older than 12.4.6 (launchOSVersion, set by"), "\(r.stdout)")
        #expect(r.stdout.contains("the account's files and keys are removed from the app"), "\(r.stdout)")
    }

    @Test("check notes each property with no effect, where the file sets it and why; --strict still passes")
    func checkNotesWhatHasNoEffect() throws {
        let r = try CommandRunner.run(["check", "--strict", try Self.level(3)])
        #expect(r.status == 0, "\(r.stdout) \(r.stderr)")
        #expect(r.stdout.contains(": note: $.thirdPartyKeyboardsBlocked: no effect in MAMLab: an OS service MAMLab has no stand-in for"), "\(r.stdout)")
        #expect(r.stdout.contains("level-3-enterprise-high-data-protection-iOS.json:67:33: note: $.thirdPartyKeyboardsBlocked"), "\(r.stdout)")
        #expect(!r.stdout.contains("$.minimumRequiredOsVersion: no effect"), "a launch check's setting is decided")
        #expect(r.stdout.contains("checked 1 file: 0 errors, 0 warnings"))
    }

    @Test("a bad device flag, or a channel beside it, is one clear line and exit 64", arguments: [
        (["--os", "twelve"], "--os twelve: not a version"),
        (["--threat-level", "sky"], "--threat-level sky: expected secured, low, medium or high"),
        (["--offline", "a while"], "--offline a while: not a duration"),
        (["--channel", "send"], "--launch-check answers a launch, not a channel"),
    ])
    func badFlags(_ flags: [String], _ said: String) throws {
        let r = try CommandRunner.run(["explain", "--launch-check", "--from", "Outlook"] + flags)
        #expect(r.status == 64, "\(r.stdout) \(r.stderr)")
        #expect(r.stderr.contains(said), "\(r.stderr)")
    }
}
