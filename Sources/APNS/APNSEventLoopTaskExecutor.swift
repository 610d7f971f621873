import NIOCore

/// Runs tasks on a client's event loops: see `APNSClient.taskExecutor`.
final class APNSEventLoopTaskExecutor: Sendable {
    let group: any EventLoopGroup

    init(group: any EventLoopGroup) {
        self.group = group
    }
}

@available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
extension APNSEventLoopTaskExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // `any()` is the current event loop when called from one: a caller resumed by the loop
        // that received its answer continues there, without waking another thread.
        group.any().execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
