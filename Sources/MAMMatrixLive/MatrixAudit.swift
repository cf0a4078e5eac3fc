import MAMLauncher
import MAMMatrix
import MAMWire
import Synchronization

/// The broker's decision records as a live run follows them: each committed line of a decision
/// channel read and decoded once, however many cells running side by side look at it (a cell
/// reading the log since it began decoded its neighbours' records too: a fifth of a run's CPU).
/// Only the latest records are kept, so a campaign of any length holds a bounded number.
final class AuditTail: Sendable {
    struct Entry: Sendable {
        /// Where the line starts in the file.
        let offset: Int
        let record: BrokerRecord
    }

    private struct State {
        /// Where the lines read so far end.
        var end = AuditFile.headerSize
        /// In file order.
        var entries: [Entry] = []
        /// Records before this offset are no longer kept.
        var keptFrom = 0
    }

    let path: String
    private let state = Mutex(State())
    /// How many records are kept at least (cells in flight look back a few each).
    static let kept = 4096

    /// The channels whose records a cell is judged by; the others (`identity`, the most
    /// numerous, and the enrollment's) are passed over unread. The broker writes each record's
    /// keys sorted, `channel` first, so the start of its line names it.
    static let decisionChannels = ["open-in", "import", "paste", "open-url", "save-to", "open-from"]
    private static let prefixes = decisionChannels.map { Array("{\"channel\":\"\($0)\"".utf8) }

    init(path: String) { self.path = path }

    /// The decision records committed at or after `offset`, in order; nil when they are no
    /// longer kept (the caller reads the file itself). A line that does not decode is kept as a
    /// record of channel `malformed`, its problem in `detail`: a check that skipped it would
    /// pass on a log it cannot read.
    func records(from offset: Int) -> [Entry]? {
        state.withLock { s in
            let read = AuditFile.lines(atPath: path, from: s.end)
            for line in read.lines where Self.prefixes.contains(where: { line.starts(with: $0) }) {
                let at = read.start + line.startIndex
                do {
                    s.entries.append(Entry(offset: at, record: try BrokerRecord(line: line)))
                } catch {
                    let broker = BrokerRecord.Party(app: "mambroker", identity: "", managed: false)
                    s.entries.append(Entry(offset: at, record: BrokerRecord(channel: "malformed", source: broker, target: nil,
                                                                           outcome: "-", rule: "-", detail: "\(error)")))
                }
            }
            s.end = max(s.end, read.end)
            if s.entries.count > 2 * Self.kept {
                let dropped = s.entries.count - Self.kept
                s.keptFrom = s.entries[dropped].offset
                s.entries.removeFirst(dropped)
            }
            guard offset >= s.keptFrom else { return nil }
            // The first entry at or after `offset`, by bisection: the kept entries are in order.
            var low = 0, high = s.entries.count
            while low < high {
                let mid = (low + high) / 2
                if s.entries[mid].offset < offset { low = mid + 1 } else { high = mid }
            }
            return Array(s.entries[low...])
        }
    }
}
