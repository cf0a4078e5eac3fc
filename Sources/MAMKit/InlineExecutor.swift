import Dispatch
import Glibc

/// The scripted mode's task executor: a job runs on the thread that makes it ready.
///
/// A scripted command is two hand-offs between processes: the launcher's line arrives on the
/// standard-input thread, the broker's answer on MAMKit's reader thread. On the global executor
/// each of those threads handed the waiting task to a pool thread, which it had to wake: four
/// wakes per command where two are needed, half an app's context switches in a live matrix. With
/// this executor preferred, the command loop runs on the standard-input thread until it waits for
/// the broker, and goes on on the reader thread when the answer comes.
///
/// Only those two threads run jobs in place (each says so: `runsJobsInPlace`), and only between
/// their own reads, where nothing of theirs is on the stack. A job made ready anywhere else goes
/// to the global queue as before: a thread inside some other code may hold state a job must not
/// run in (a task-local value bound on a queue's thread aborted the app when a job ran inside
/// it). A job made ready while its thread runs one of these jobs runs after it, never inside it.
/// Jobs on this executor may block their thread only as long as MAMKit's reader and the input
/// thread may be held: they never wait on either.
package final class InlineExecutor: TaskExecutor {
    package static let shared = InlineExecutor()

    /// Marks the calling thread as one whose jobs may run where they are made ready (a thread
    /// that only reads and hands over: the kit's reader, the scripted mode's input).
    package static func runsJobsInPlace() {
        Trampoline.current.inPlace = true
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let thread = Trampoline.current
        if thread.running {
            thread.jobs.append(job)
            return
        }
        guard thread.inPlace else {
            DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
            return
        }
        thread.running = true
        job.runSynchronously(on: asUnownedTaskExecutor())
        while !thread.jobs.isEmpty {
            thread.jobs.removeFirst().runSynchronously(on: asUnownedTaskExecutor())
        }
        thread.running = false
    }
}

/// One thread's jobs made ready while it runs one (thread-local: only its thread touches it).
private final class Trampoline {
    var inPlace = false
    var running = false
    var jobs: [UnownedJob] = []

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<Trampoline>.fromOpaque(pointer).release() }
        }
        return key
    }()

    static var current: Trampoline {
        if let pointer = pthread_getspecific(key) { return Unmanaged<Trampoline>.fromOpaque(pointer).takeUnretainedValue() }
        let made = Trampoline()
        pthread_setspecific(key, Unmanaged.passRetained(made).toOpaque())
        return made
    }
}
