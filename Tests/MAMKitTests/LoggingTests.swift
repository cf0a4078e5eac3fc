import Foundation
import Logging
import MAMKit
import MAMPolicy
import Testing

/// The kit's log honours the manifest's `VerboseLoggingEnabled` and `ValuesToScrubFromLogging`.
@Suite("MAMKit: logging")
struct LoggingTests {
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        func append(_ s: String) { lock.lock(); stored.append(s); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return stored }
    }

    func manifest(verbose: Bool?, scrub: [String]?) -> AppManifest {
        var settings: [(key: String, value: Node)] = [("ADALClientId", Node(.string("x")))]
        if let verbose { settings.append(("VerboseLoggingEnabled", Node(.bool(verbose)))) }
        if let scrub { settings.append(("ValuesToScrubFromLogging", Node(.array(scrub.map { Node(.string($0)) })))) }
        return AppManifest(bundleID: "com.contoso.mail", mamSettings: Node(.object(settings)))
    }

    func logger(_ m: AppManifest, into lines: Lines) -> Logger {
        let base = ScrubbingLogHandler.forManifest(m)
        let handler = ScrubbingLogHandler(label: "mamkit", verbose: base.logLevel == .trace, scrub: base.scrubbedValues) { lines.append($0) }
        return Logger(label: "mamkit", factory: { _ in handler })
    }

    @Test func listedValuesAreScrubbedFromMessagesAndMetadataWhateverTheirCase() {
        let lines = Lines()
        let log = logger(manifest(verbose: nil, scrub: ["adele@contoso.com", "Q3 forecast"]), into: lines)
        log.info("identity switched to adele@contoso.com", metadata: ["text": "the q3 FORECAST is 4.2M", "other": "ben@contoso.com"])
        #expect(lines.all.count == 1)
        #expect(!lines.all[0].lowercased().contains("adele@contoso.com") && !lines.all[0].lowercased().contains("q3 forecast"), "\(lines.all)")
        #expect(lines.all[0].contains("ben@contoso.com") && lines.all[0].contains("<scrubbed>"))
    }

    @Test func verboseLoggingOnlyWhenTheManifestSaysSo() {
        let quiet = Lines(), loud = Lines()
        logger(manifest(verbose: nil, scrub: nil), into: quiet).debug("policy snapshot")
        logger(manifest(verbose: true, scrub: nil), into: loud).debug("policy snapshot")
        #expect(quiet.all.isEmpty && loud.all.count == 1)
    }

    @Test func oneRecordIsOneLine() {
        let lines = Lines()
        logger(manifest(verbose: nil, scrub: nil), into: lines).info("a\nforged line", metadata: ["v": "x\r\ny"])
        #expect(lines.all.count == 1 && !lines.all[0].contains("\n") && !lines.all[0].contains("\r"))
    }
}
