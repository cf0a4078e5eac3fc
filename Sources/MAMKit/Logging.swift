import Foundation
import Logging
import MAMPolicy

/// The kit's log: standard error (stdout belongs to the app), one line per record, at `info`
/// unless the manifest's `IntuneMAMSettings` says `VerboseLoggingEnabled`, and with every value
/// listed in `ValuesToScrubFromLogging` replaced before the line is written.
public struct ScrubbingLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level
    let label: String
    let scrub: [String]
    /// The values this handler replaces, longest first.
    public var scrubbedValues: [String] { scrub }
    let write: @Sendable (String) -> Void

    public init(label: String, verbose: Bool, scrub: [String],
                write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }) {
        self.label = label
        self.logLevel = verbose ? .trace : .info
        // Longest first, so a value that contains another is replaced whole.
        self.scrub = scrub.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, b in b } }
        let fields = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var line = "\(label) \(event.level): \(event.message)" + (fields.isEmpty ? "" : " " + fields)
        for value in scrub { line = line.replacingOccurrences(of: value, with: "<scrubbed>", options: .caseInsensitive) }
        // One record, one line: nothing an app or a peer sent may start a forged one.
        // (Looked for first: Foundation's replacing, for a line break almost no line has, was 5%
        // of the scripted apps' CPU in a matrix run.)
        if line.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) {
            line = line.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
        }
        write(line)
    }

    /// The handler the manifest asks for.
    public static func forManifest(_ app: AppManifest, label: String = "mamkit") -> ScrubbingLogHandler {
        var values: [String] = []
        if case let .array(items)? = app.mamSettings?["ValuesToScrubFromLogging"]?.value {
            // The manifest is the app author's: at most 256 values of at most 1,024 bytes each,
            // so scrubbing a line stays cheap whatever the list holds.
            for item in items.prefix(256) { if case let .string(s) = item.value, s.utf8.count <= 1024 { values.append(s) } }
        }
        return ScrubbingLogHandler(label: label, verbose: app.sdkFlag("VerboseLoggingEnabled"), scrub: values)
    }
}
