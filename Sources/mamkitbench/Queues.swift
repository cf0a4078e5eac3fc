import CMAMKitQueues
import Dispatch
import MAMKit

// What carrying the identity costs a dispatch: the same dispatch_async onto one serial queue,
// in alternating blocks, (a) past the interposition, straight to libdispatch (the floor),
// (b) through it from code with no scoped identity (nothing to carry: the block passes as it
// is), (c) through it inside a scope (the block is wrapped, and runs under the identity).
struct QueueBenchmark {
    let blocks: Int
    let dispatches: Int
    let queue = mam_queue_serial("mamkitbench.queues")

    /// Nanoseconds per dispatch, the queue drained: `dispatch` queues each block.
    func block(_ dispatch: (UnsafeMutableRawPointer, @escaping @convention(block) () -> Void) -> Void) -> Double {
        let done = DispatchSemaphore(value: 0)
        let last = dispatches - 1
        let start = DispatchTime.now().uptimeNanoseconds
        for i in 0..<dispatches {
            dispatch(queue) { if i == last { done.signal() } }
        }
        done.wait()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(dispatches)
    }

    func floor() -> Double { block { mam_queue_real_async($0, $1) } }
    func passing() -> Double { IdentityScope.withAccount(nil) { block { mam_queue_async($0, $1) } } }
    func carrying() -> Double { IdentityScope.withAccount("adele@contoso.com") { block { mam_queue_async($0, $1) } } }

    func run() {
        guard IdentityScope.carriesIntoPlainQueues else {
            print("queued identity: this executable does not interpose libdispatch; nothing to measure")
            return
        }
        _ = (floor(), passing(), carrying())
        var bare: [Double] = [], plain: [Double] = [], scoped: [Double] = []
        for _ in 0..<blocks {
            bare.append(floor())
            plain.append(passing())
            scoped.append(carrying())
        }
        let toPlain = zip(plain, bare).map { $0 / $1 }, toScoped = zip(scoped, bare).map { $0 / $1 }
        print(String(format: "dispatch_async, libdispatch's own:        %.0f ns (median of %d blocks of %d)", median(bare), blocks, dispatches))
        print(String(format: "interposed, no scoped identity:           %.0f ns", median(plain)))
        print(String(format: "interposed, carrying a scoped identity:   %.0f ns", median(scoped)))
        print(String(format: "ratio to libdispatch's own: no identity median %.2f (min %.2f, max %.2f); carrying median %.2f (min %.2f, max %.2f)",
                     median(toPlain), toPlain.min() ?? 0, toPlain.max() ?? 0, median(toScoped), toScoped.min() ?? 0, toScoped.max() ?? 0))
    }
}
