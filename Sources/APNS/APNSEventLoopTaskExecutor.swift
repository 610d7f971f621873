import NIOConcurrencyHelpers
import NIOCore

/// Runs tasks on a client's event loops: see `APNSClient.taskExecutor`.
///
/// A task keeps its executor preference after the client shuts down (a send failed by the
/// shutdown still records its result), but an event loop that has shut down drops whatever is
/// scheduled on it, and the task would never run again. So once `close()` is called, jobs go to
/// Swift's global executor instead. The lock spans the hand-over: a job either reached a running
/// loop, which runs everything it accepted before it stops, or goes to the global executor.
final class APNSEventLoopTaskExecutor: Sendable {
    let group: any EventLoopGroup
    private let open = NIOLockedValueBox(true)

    init(group: any EventLoopGroup) {
        self.group = group
    }

    /// From now on, jobs run on the global executor. Called before the client's loops shut down.
    func close() {
        open.withLockedValue { $0 = false }
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension APNSEventLoopTaskExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let scheduled = open.withLockedValue { open in
            guard open else { return false }
            // `any()` is the current event loop when called from one: a caller resumed by the
            // loop that received its answer continues there, without waking another thread.
            group.any().execute {
                job.runSynchronously(on: self.asUnownedTaskExecutor())
            }
            return true
        }
        if !scheduled {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }
}
