import Foundation

/// Round trips of several kinds, timed the same way: blocks of `roundTrips`, each kind taking its
/// turn block by block so that a noisy moment on a shared machine falls on all of them alike. The
/// order rotates from one round of blocks to the next, so no kind always runs first (with a cache
/// or a scheduler still warm from the one before).
struct RoundTripComparison {
    struct Contender {
        var name: String
        /// One request and its answer; throws when the answer is wrong.
        var roundTrip: () throws -> Void
    }

    var contenders: [Contender]
    var blocks: Int
    var roundTrips: Int

    /// For each contender, in order, the median nanoseconds per round trip of each block.
    func run() throws -> [[Double]] {
        var times = [Double](repeating: 0, count: roundTrips)
        // One block each first, not counted: connections, caches and the CPU's clock settle.
        for contender in contenders { try time(contender, into: &times) }
        var medians = [[Double]](repeating: [], count: contenders.count)
        for block in 0..<blocks {
            for turn in contenders.indices {
                let k = (block + turn) % contenders.count
                try time(contenders[k], into: &times)
                medians[k].append(median(times))
            }
        }
        return medians
    }

    /// Each round trip timed on its own, so one preempted round trip moves the block's median
    /// by one place rather than its mean by a whole time slice.
    private func time(_ contender: Contender, into times: inout [Double]) throws {
        for i in 0..<roundTrips {
            let start = DispatchTime.now().uptimeNanoseconds
            try contender.roundTrip()
            times[i] = Double(DispatchTime.now().uptimeNanoseconds - start)
        }
    }
}

/// The middle of `xs` and its extremes.
struct Spread {
    var median: Double, min: Double, max: Double

    init(_ xs: [Double]) {
        let sorted = xs.sorted()
        median = sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        min = sorted.first ?? .nan
        max = sorted.last ?? .nan
    }
}

func median(_ xs: [Double]) -> Double { Spread(xs).median }
