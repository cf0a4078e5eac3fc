import ArgumentParser
import Foundation
import MAMConfigurator
import MAMPolicy

@main
struct MAMConfiguratorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mamconfigurator",
        abstract: "Configure an app's Info.plist and entitlements for the app-protection SDK.",
        discussion: """
            Adds what the SDK needs and the vendor's configurator would add: an -intunemam twin for \
            every URL scheme the app registers and every scheme it queries; the fixed queried \
            schemes (the browsers' twins and the threat-defence apps), and ms-outlook-intunemam \
            when the app queries mailto; a com.microsoft.intune.mam. twin for every document \
            content type; twins in a share or action extension's activation rule (a dictionary \
            rule is first turned into a predicate); the SDK's keychain groups; and the app groups \
            mirrored into IntuneMAMSettings.AppGroupIdentifiers.

            It checks IntuneMAMSettings against the SDK's settings table and prints problems like \
            a compiler. It keeps every other key, the key order of XML files, the file's format \
            (XML or binary) and $(VARIABLE) placeholders. Running it twice changes nothing the \
            second time. A file that needs no change is not rewritten.

            Exit status: 0 on success; 1 on an error in the files, or with --check when something \
            would change.
            """
    )

    @Option(name: .customShort("i"), help: ArgumentHelp("The app's Info.plist.", valueName: "INFO.plist"))
    var input: String

    @Option(name: .customShort("e"), help: ArgumentHelp("The app's entitlements file.", valueName: "APP.entitlements"))
    var entitlements: String?

    @Option(name: .customShort("o"), help: ArgumentHelp("Write the Info.plist here instead of in place.", valueName: "OUT.plist"))
    var output: String?

    @Flag(help: "Report what would change and change nothing; exit 1 when something would change.")
    var check = false

    func run() throws {
        let infoData = try read(input)
        let info = try parse(infoData, input)
        var entData: Data?
        var ent: PlistDocument?
        if let entitlements {
            entData = try read(entitlements)
            ent = try parse(entData!, entitlements)
        }
        var configurator = Configurator(info: info.root, infoFile: input, entitlements: ent?.root, entitlementsFile: entitlements ?? "")
        configurator.run()
        for d in configurator.diagnostics.items { printError(d.description) }
        if configurator.diagnostics.hasErrors { throw ExitCode(1) }
        for c in configurator.changes { print(check ? "would change \(c)" : "changed \(c)") }
        if check {
            if !configurator.changes.isEmpty { throw ExitCode(1) }
            return
        }
        // Write only what changed: an unchanged file keeps its bytes (and an -o copy gets them).
        let newInfo = PlistDocument(root: configurator.info, format: info.format)
        let infoOut = newInfo.root == info.root ? infoData : try newInfo.data()
        if output != nil || newInfo.root != info.root { try write(infoOut, to: output ?? input) }
        if let entitlements, let ent, let newEnt = configurator.entitlements, newEnt != ent.root {
            try write(try PlistDocument(root: newEnt, format: ent.format).data(), to: entitlements)
        }
        if configurator.changes.isEmpty { print("\(input): already configured") }
    }

    private func read(_ path: String) throws -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ValidationError("\(path): cannot read: \(FileManager.default.fileExists(atPath: path) ? error.localizedDescription : "no such file")")
        }
    }

    private func parse(_ data: Data, _ path: String) throws -> PlistDocument {
        do {
            return try PlistDocument.read(data, file: path)
        } catch {
            for d in error.diagnostics { printError(d.description) }
            throw ExitCode(1)
        }
    }

    /// Replaces the file atomically so an interrupted run leaves the old file whole.
    private func write(_ data: Data, to path: String) throws {
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw ValidationError("\(path): cannot write: \(error.localizedDescription)")
        }
    }

    private func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
