/// The known name nearest to a misspelled one, for "did you mean" in warnings: a key that is
/// silently ignored turns a typo into the default setting, often the permissive one.
public enum NearestName {
    /// The candidate with the smallest edit distance to `name`, compared case-insensitively
    /// (ties: the first in `candidates`).
    public static func nearest(to name: String, in candidates: [String]) -> String? {
        // A name twice as long as every candidate is no typo of one; and the distance costs its
        // length times theirs (a 20,000-character key took seconds).
        guard name.utf8.count <= 2 * (candidates.map(\.utf8.count).max() ?? 0) else { return nil }
        let target = Array(name.lowercased())
        var best: (name: String, distance: Int)?
        for c in candidates {
            let d = distance(target, Array(c.lowercased()))
            if best == nil || d < best!.distance { best = (c, d) }
        }
        return best?.name
    }

    /// `nearest`, only when it is a likely typo: at most `maximumDistance` edits away. For a name
    /// that may be right as it is (a bundle id of an app no catalog lists), where any nearest
    /// name would be noise.
    public static func nearest(to name: String, in candidates: [String], maximumDistance: Int) -> String? {
        guard let best = nearest(to: name, in: candidates) else { return nil }
        return distance(Array(name.lowercased()), Array(best.lowercased())) <= maximumDistance ? best : nil
    }

    /// Levenshtein distance, one row at a time.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
