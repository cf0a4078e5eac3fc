/// Each app's share of the kept decision logs, so one app cannot push the others' records out.
///
/// The decision log rotates by size, keeping `AuditLog.keptLogs` files beside the current one,
/// and every app's decisions share them. An app at its request budget (an unmanaged app
/// pasting as fast as the broker answers) used to fill all nine in minutes and take every other
/// app's records with it. Now an app holds at most `share` bytes of the kept files: past it,
/// its further decisions go to a log of its own (`audit/apps/<app>.jsonl`, an eighth of the
/// size, rotated on its own, so its flood pushes out only its own records) until its older
/// records have rotated out of the shared ones. One app's flood can so take at most one share
/// of the others' history.
///
/// Apps are counted as the broker's request budget knows them: by bundle id for an app the
/// launcher handed over, and all processes that connected by themselves as one (`unknown`), so
/// that a local user's many processes are one share, not many. The counts live in memory: a
/// restarted broker counts afresh.
struct AuditShares {
    /// Bytes an app may hold in the kept decision logs.
    let share: Int
    /// Bytes by app in the current log (first) and each kept one, newest first.
    private var generations: [[String: Int]] = [[:]]
    private var totals: [String: Int] = [:]

    init(share: Int) {
        self.share = share
    }

    /// The app a request budget names, as counted here.
    static func key(forBudget app: String) -> String {
        app.hasPrefix("unknown.") ? "unknown" : app
    }

    func isOverShare(_ app: String) -> Bool { (totals[app] ?? 0) >= share }

    /// `bytes` of `app`'s stored in the current log.
    mutating func add(_ app: String, bytes: Int) {
        generations[0][app, default: 0] += bytes
        totals[app, default: 0] += bytes
    }

    /// The log was set aside `times` times: the oldest generations' bytes are gone.
    mutating func rotated(times: Int) {
        for _ in 0..<times {
            generations.insert([:], at: 0)
            guard generations.count > AuditLog.keptLogs + 1 else { continue }
            for (app, bytes) in generations.removeLast() {
                let left = (totals[app] ?? 0) - bytes
                totals[app] = left > 0 ? left : nil
            }
        }
    }
}
