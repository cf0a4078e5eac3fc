import Foundation
import Testing

/// docs/MODULES.md is the map of who may import whom; these hold Package.swift and the source
/// files to it, so an import that crosses a layer fails here, with the file that made it.
@Suite("The module map holds")
struct ModuleMapTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A target as Package.swift declares it.
    struct Target: Equatable {
        var name: String
        var isTest: Bool
        var path: String
        var dependencies: Set<String>
    }

    /// The map's table: each module and what it may import.
    static func map(_ markdown: String) -> [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for line in markdown.split(separator: "\n") where line.hasPrefix("| ") && !line.hasPrefix("| Module") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            out[cells[1]] = Set(cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        }
        return out
    }

    /// Every target in a manifest: its name, path and the targets and products it depends on.
    static func targets(_ manifest: String) -> [Target] {
        let declaration = try! NSRegularExpression(pattern: #"\.(target|executableTarget|testTarget|systemLibrary)\("#)
        let ns = manifest as NSString
        var out: [Target] = []
        for match in declaration.matches(in: manifest, range: NSRange(location: 0, length: ns.length)) {
            // The declaration's text, to its closing parenthesis.
            var depth = 0, end = match.range.location + match.range.length - 1
            repeat {
                let c = ns.character(at: end)
                if c == 0x28 { depth += 1 } else if c == 0x29 { depth -= 1 }
                end += 1
            } while depth > 0 && end < ns.length
            let text = ns.substring(with: NSRange(location: match.range.location, length: end - match.range.location))
            let kind = ns.substring(with: match.range(at: 1))
            guard let name = firstCapture(#"name:\s*"([^"]+)""#, in: text) else { continue }
            var dependencies: Set<String> = []
            if let deps = text.range(of: "dependencies:") {
                let rest = String(text[deps.upperBound...])
                // Products are named by `name:`; targets by a bare string. A path or an exclude
                // list comes after the dependencies and is cut off.
                let list = rest.components(separatedBy: "path:")[0].components(separatedBy: "exclude:")[0]
                for quoted in allCaptures(#""([^"]+)""#, in: list) where !quoted.contains(".") && !quoted.contains("-") {
                    dependencies.insert(quoted)
                }
            }
            let isTest = kind == "testTarget"
            let path = firstCapture(#"path:\s*"([^"]+)""#, in: text) ?? (isTest ? "Tests/" : "Sources/") + name
            out.append(Target(name: name, isTest: isTest, path: path, dependencies: dependencies))
        }
        return out
    }

    /// The modules a Swift file imports (`import X`, `@testable import X`, `import struct X.Y`).
    static func imports(_ source: String) -> Set<String> {
        Set(allCaptures(#"(?m)^\s*(?:@\w+\s+)*import\s+(?:(?:struct|class|enum|protocol|func|var|typealias)\s+)?(\w+)"#, in: source))
    }

    static func firstCapture(_ pattern: String, in text: String) -> String? { allCaptures(pattern, in: text).first }

    static func allCaptures(_ pattern: String, in text: String) -> [String] {
        let regex = try! NSRegularExpression(pattern: pattern)
        let ns = text as NSString
        return regex.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { ns.substring(with: $0.range(at: 1)) }
    }

    static func read(_ relative: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    static func swiftFiles(under relative: String) -> [String] {
        let base = root.appendingPathComponent(relative)
        guard let walk = FileManager.default.enumerator(atPath: base.path) else { return [] }
        return walk.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map { relative + "/" + $0 }
    }

    @Test func everyModuleIsOnTheMapAndLinksOnlyWhatItMayImport() throws {
        let map = Self.map(try Self.read("docs/MODULES.md"))
        let targets = Self.targets(try Self.read("Package.swift")).filter { !$0.isTest }
        #expect(targets.count > 30, "Package.swift's targets were not read: \(targets.map(\.name))")
        for t in targets {
            guard let allowed = map[t.name] else {
                Issue.record("\(t.name) (Package.swift) is not on docs/MODULES.md's map")
                continue
            }
            for d in t.dependencies.subtracting(allowed).sorted() {
                Issue.record("Package.swift: \(t.name) depends on \(d); docs/MODULES.md does not let it import \(d)")
            }
        }
        for name in Set(map.keys).subtracting(targets.map(\.name)).sorted() {
            Issue.record("docs/MODULES.md names \(name), which Package.swift does not declare")
        }
    }

    @Test func noSourceFileImportsAcrossTheMap() throws {
        let map = Self.map(try Self.read("docs/MODULES.md"))
        let manifest = try Self.read("Package.swift")
        let targets = Self.targets(manifest).filter { !$0.isTest }
        // Only modules of this package and its dependencies' products are held to the map; the
        // system's (Foundation, Glibc, …) are anyone's.
        let products = Self.allCaptures(#"\.product\(name:\s*"([^"]+)""#, in: manifest)
        #expect(Set(products).isSuperset(of: ["ArgumentParser", "Logging", "GRDB", "Crypto"]), "\(products)")
        let governed = Set(targets.map(\.name)).union(products)
        var files = 0
        for t in targets {
            let allowed = map[t.name] ?? []
            for file in Self.swiftFiles(under: t.path) {
                files += 1
                for module in Self.imports(try Self.read(file)).intersection(governed).subtracting(allowed).subtracting([t.name]).sorted() {
                    Issue.record("\(file): imports \(module), which docs/MODULES.md does not let \(t.name) import")
                }
            }
        }
        #expect(files > 100, "only \(files) source files were read")
    }

    /// The readers themselves: a crossing import is found, wherever it hides.
    @Test func theCheckFindsACrossingImport() {
        let manifest = """
            .target(name: "MAMBrokerCore", dependencies: ["MAMPolicy", .product(name: "GRDB", package: "GRDB.swift")]),
            .executableTarget(name: "Hostile", dependencies: ["CHostileProbes"], path: "Apps/Hostile", exclude: ["Info.plist"]),
            """
        let targets = Self.targets(manifest)
        #expect(targets == [Target(name: "MAMBrokerCore", isTest: false, path: "Sources/MAMBrokerCore", dependencies: ["MAMPolicy", "GRDB"]),
                            Target(name: "Hostile", isTest: false, path: "Apps/Hostile", dependencies: ["CHostileProbes"])])
        let source = "import Foundation\n@testable import MAMBroker\n  import struct GRDB.Row\n// import Logging\n"
        #expect(Self.imports(source) == ["Foundation", "MAMBroker", "GRDB"])
        #expect(Self.map("| Module | May import |\n|---|---|\n| MAMBrokerCore | MAMPolicy, MAMWire |\n| MAMPolicy | |\n")
            == ["MAMBrokerCore": ["MAMPolicy", "MAMWire"], "MAMPolicy": []])
    }
}
