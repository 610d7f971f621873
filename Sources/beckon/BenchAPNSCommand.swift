import APNS
import APNSCore
import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

/// `beckon bench apns`: sends N notifications as fast as the pool allows and reports throughput
/// and latency percentiles. Point it at the emulator (`--auto-register`), never at Apple.
struct BenchAPNSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns",
        abstract: "Measure the APNs client: throughput and latency p50/p99/p999."
    )

    @OptionGroup var connection: APNSConnectionOptions

    @Option(help: "Notifications to send.") var count: Int = 100_000
    @Option(help: "Notifications in flight at once (callers awaiting send).") var concurrency: Int = 1000
    @Option(help: "Bundle id to push to.") var topic: String = "com.example.bench"
    @Option(help: "Distinct random device tokens to spread the load over.") var tokens: Int = 1000
    @Option(name: .customLong("body-size"), help: "Alert body length in bytes.") var bodySize: Int = 100
    @Option(help: "Event-loop threads for the client's connections.") var threads: Int = System.coreCount
    @Flag(
        name: .customLong("executor-preference"),
        help: "Run the sending tasks with the client's event loops as their preferred task executor (APNSClient.taskExecutor)."
    ) var executorPreference = false

    func validate() throws {
        if connection.host == nil { throw ValidationError("benchmarks need --host (the emulator); they never target Apple") }
        if count < 1 || concurrency < 1 || tokens < 1 { throw ValidationError("--count, --concurrency and --tokens must be positive") }
    }

    func run() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let client = APNSClient(configuration: try connection.clientConfiguration(maximumQueued: concurrency * 2), eventLoopGroup: group)
        let credential = try connection.credential()
        let environment = connection.environment
        let deviceTokens = try (0..<tokens).map { _ in try APNSDeviceToken(bytes: (0..<32).map { _ in UInt8.random(in: 0...255) }) }
        let body = String(repeating: "x", count: bodySize)
        let topic = topic

        // Warm up: connections open and APNs raises the stream limit after a valid token.
        for token in deviceTokens.prefix(connection.connections * 4) {
            _ = try await client.send(APNSAlertNotification(alert: .init(body: body)), to: token, bundleID: topic, environment: environment, credential: credential)
        }

        // One worker: `share` sends in a row, each awaited as a caller of the public API would.
        let workers = min(concurrency, count)
        let work: @Sendable (Int, Int) async -> ([Int64], Int, Int) = { worker, share in
            var latencies: [Int64] = []
            latencies.reserveCapacity(share)
            var refused = 0
            var failed = 0
            for index in 0..<share {
                let notification = APNSAlertNotification(alert: .init(body: body))
                // NIODeadline: a plain nanosecond count, cheaper to subtract than `Duration` on every send.
                let sent = NIODeadline.now()
                do {
                    let response = try await client.send(
                        notification, to: deviceTokens[(worker + index * workers) % deviceTokens.count], bundleID: topic,
                        environment: environment, credential: credential
                    )
                    if !response.isSuccess { refused += 1 }
                } catch {
                    failed += 1
                }
                latencies.append((NIODeadline.now() - sent).nanoseconds)
            }
            return (latencies, refused, failed)
        }

        let started = ContinuousClock.now
        let results = await withTaskGroup(of: ([Int64], Int, Int).self) { group in
            for worker in 0..<workers {
                // A fixed share per worker: no shared counter on the measured path.
                let share = count / workers + (worker < count % workers ? 1 : 0)
                if executorPreference, #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) {
                    group.addTask(executorPreference: client.taskExecutor) { await work(worker, share) }
                } else {
                    group.addTask { await work(worker, share) }
                }
            }
            var all: ([Int64], Int, Int) = ([], 0, 0)
            for await (latencies, refused, failed) in group {
                all.0 += latencies
                all.1 += refused
                all.2 += failed
            }
            return all
        }
        let elapsed = ContinuousClock.now - started
        await client.shutdown()
        try await group.shutdownGracefully()

        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let sorted = results.0.sorted()
        func percentile(_ p: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            let index = min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)
            return String(format: "%.2f ms", Double(sorted[max(index, 0)]) / 1e6)
        }
        print(
            "notifications: \(count), connections: \(connection.connections), concurrency: \(concurrency)"
                + (executorPreference ? ", executor: client event loops" : "")
        )
        print(String(format: "elapsed: %.3f s, throughput: %.0f notifications/s", seconds, Double(count) / seconds))
        print("latency p50: \(percentile(0.50)), p99: \(percentile(0.99)), p999: \(percentile(0.999))")
        print("non-200 answers: \(results.1), failures without an answer: \(results.2)")
    }
}
