import Foundation
import Testing

/// A descriptor crosses a module boundary as an owned `Descriptor` (MAMWire), never as a bare
/// `Int32`. These read every public and package declaration in Sources/ (both are seen from
/// other modules) and find the ones that still take,
/// hold or give a bare number: each is on the list below, which may only shrink (a seam
/// converted is struck off; a new bare one fails here, naming its file).
@Suite("No bare descriptor crosses a module boundary")
struct DescriptorSeamTests {
    /// The public seams not yet converted, as `file: name` (a returned one as `name →`): none
    /// left, and none may come back.
    static let notYetOwned: Set<String> = []

    /// Public functions that answer an `Int32` that is no descriptor.
    static let notDescriptors: Set<String> = [
        "MAMBrokerCore/BrokerCore.swift: pid →",  // a process id
        "MAMSampleSupport/Session.swift: main →",  // an exit status
        "MAMSandbox/Sandbox.swift: wait →",  // an exit status
    ]

    /// Every public or package declaration's signature in `text`: from `public` (or `package`)
    /// to its body, its value or the end of its line, parameter lists across lines included.
    static func publicSignatures(_ text: String) -> [String] {
        var out: [String] = []
        var rest = Substring(text)
        while let start = [rest.range(of: "public "), rest.range(of: "package ")].compactMap({ $0 }).min(by: { $0.lowerBound < $1.lowerBound }) {
            var depth = 0, end = start.lowerBound
            scan: while end < rest.endIndex {
                switch rest[end] {
                case "(", "[": depth += 1
                case ")", "]": depth -= 1
                case "{": break scan
                case "=" where depth == 0: break scan
                case "\n" where depth == 0: break scan
                default: break
                }
                end = rest.index(after: end)
            }
            out.append(String(rest[start.lowerBound..<end]))
            rest = rest[end...]
        }
        return out
    }

    /// The bare descriptors in one signature: parameters and properties named for a descriptor
    /// (`fd`, `…descriptor`, or what it is: `input`, `output`, `socket`, `control`, a standard
    /// stream, a pseudo-terminal's or a pair's `…Side`) typed `Int32` (or a list or map of them),
    /// and functions that answer an `Int32`.
    static func bareDescriptors(in signature: String) -> [String] {
        let ns = signature as NSString
        var out: [String] = []
        let named = try! NSRegularExpression(pattern: #"\b(fd|fds|input|output|socket|control|standardError|[A-Za-z]*(?:[Dd]escriptors?|Input|Output|Side))\s*:\s*(?:consuming\s+|borrowing\s+)?\[?(?:Int:\s*)?Int32\b"#)
        for m in named.matches(in: signature, range: NSRange(location: 0, length: ns.length)) {
            out.append(ns.substring(with: m.range(at: 1)))
        }
        let returning = try! NSRegularExpression(pattern: #"func\s+([A-Za-z_]+)[^>]*->\s*\(?Int32\b"#)
        for m in returning.matches(in: signature, range: NSRange(location: 0, length: ns.length)) {
            out.append(ns.substring(with: m.range(at: 1)) + " →")
        }
        return out
    }

    static func found() throws -> Set<String> {
        let sources = ModuleMapTests.root.appendingPathComponent("Sources")
        var found: Set<String> = []
        let files = FileManager.default.enumerator(atPath: sources.path)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        // The owned type itself is where the raw number lives, and is given up on purpose.
        for file in files where file != "MAMWire/Descriptor.swift" {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for signature in publicSignatures(text) {
                for name in bareDescriptors(in: signature) { found.insert("\(file): \(name)") }
            }
        }
        return found.subtracting(notDescriptors)
    }

    @Test func everyBareDescriptorAtAPublicSeamIsOnTheShrinkingList() throws {
        let found = try Self.found()
        let new = found.subtracting(Self.notYetOwned)
        #expect(new.isEmpty, "a public declaration takes, holds or gives a bare Int32 descriptor: take or give a Descriptor (MAMWire) instead: \(new.sorted())")
        let gone = Self.notYetOwned.subtracting(found)
        #expect(gone.isEmpty, "converted, so strike them off notYetOwned: \(gone.sorted())")
    }

    /// The scanner finds what it is for: a parameter, a property, a map and a returned number.
    @Test func theScannerFindsEachKindOfBareDescriptor() {
        let text = """
            public func send(_ frame: Frame, descriptor: Int32? = nil) {}
            public static func open(adopting fd: Int32,
                                    path: String) -> Thing {}
            package var descriptors: [Int: Int32] = [:]
            public static func create(_ bytes: [UInt8]) throws(WireError) -> Int32 {}
            public init(connection: consuming Descriptor) {}
            public var standardInput: Int32?
            public let appSide: Int32
            """
        let found = Self.publicSignatures(text).flatMap(Self.bareDescriptors)
        #expect(found == ["descriptor", "fd", "descriptors", "create →", "standardInput", "appSide"], "\(found)")
    }
}
