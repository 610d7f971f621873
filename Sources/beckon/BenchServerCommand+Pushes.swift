import BeckonJSON
import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// `beckon bench server --mode pushes`: the per-message path. Offline devices, one message per
/// request to a different device each time, so every message is its own planner transition, outbox
/// row and APNs request; the APNs emulator's counter says how many of them were pushed in the same
/// window as the posting.
extension BenchServerCommand {
    func runPushes(setup: BenchSetup, apiKey: String) async throws {
        let control = URL(string: emulatorControl!)!
        let emulator = BenchEndpoint(host: control.host!, port: control.port ?? 80)
        let run = setup.run
        // 64 hex digits: the run (8), then the device's number.
        let token: @Sendable (Int) -> String = { index in
            String(repeating: "0", count: max(0, 8 - run.count)) + run + String(format: "%056lx", index)
        }
        let registering = ContinuousClock.now
        _ = try await setup.registerDevices(
            (0..<devices).map { ("u\($0)", "d\($0)") }, concurrency: 32, tokens: token)
        let registered = secondsOf(ContinuousClock.now - registering)
        print(String(format: "registered %ld devices with push tokens in %.1f s (%.0f/s), none connected",
            devices, registered, Double(devices) / registered))
        let userIDs = (0..<devices).map { setup.user("u\($0)") }
        for connections in connections {
            // The registration (or the round before) must not weigh on this round.
            try await waitForQuiet()
            try await pushRound(setup: setup, apiKey: apiKey, emulator: emulator, userIDs: userIDs, connections: connections)
        }
    }

    private func pushRound(
        setup: BenchSetup, apiKey: String, emulator: BenchEndpoint, userIDs: [String], connections: Int
    ) async throws {
        let before = try await acceptedPushes(emulator, group: setup.group)
        let claimed = NIOLockedValueBox(0)
        let endpoints = setup.endpoints
        let group = setup.group
        let start = ContinuousClock.now
        let end = start + .seconds(seconds)
        let results = await withTaskGroup(of: PostStats.self) { tasks in
            for worker in 0..<connections {
                tasks.addTask {
                    await BenchPoster.run(to: endpoints[worker % endpoints.count], on: group.next(), apiKey: apiKey) { _ in
                        guard ContinuousClock.now < end else { return .done }
                        // The next device of all: each request to a different one. With a second
                        // message a device's pushes depend on the app's strategy (a `wake` app
                        // coalesces them, rule 3), and the emulator's count would no longer say
                        // whether every message was pushed: the round ends early instead.
                        let index = claimed.withLockedValue { next -> Int? in
                            guard next < userIDs.count else { return nil }
                            defer { next += 1 }
                            return next
                        }
                        guard let index else { return .done }
                        return .send(BenchPoster.message(to: userIDs[index], payload: #"{"text":"benchmark message","n":\#(index)}"#))
                    }
                }
            }
            var all = PostStats()
            for await stats in tasks { all.merge(stats) }
            return all
        }
        let window = secondsOf(ContinuousClock.now - start)
        if claimed.withLockedValue({ $0 }) >= userIDs.count {
            print(String(format: "every one of the %ld devices had its message after %.3f s: the round ended early (give more --devices)",
                userIDs.count, window))
        }
        let inWindow = try await acceptedPushes(emulator, group: group) - before
        // Then every accepted message's push, or 30 s without one more.
        var pushed = inWindow
        var lastChange = ContinuousClock.now
        while pushed < results.accepted, ContinuousClock.now - lastChange < .seconds(30) {
            try await Task.sleep(for: .milliseconds(50))
            let now = try await acceptedPushes(emulator, group: group) - before
            if now != pushed { (pushed, lastChange) = (now, ContinuousClock.now) }
        }
        let drained = secondsOf(lastChange - start)
        print("round: \(connections) keep-alive connections for \(seconds) s, one message per request, each to another of \(userIDs.count) offline devices"
            + (endpoints.count > 1 ? ", round-robin over \(endpoints.count) nodes" : ""))
        print(String(format: "accepted (2xx): %ld in %.3f s: %.0f messages/s; non-2xx: %ld, failures: %ld",
            results.accepted, window, Double(results.accepted) / window, results.refused, results.failed))
        print(String(format: "pushes accepted by the emulator in the same window: %ld (%.0f pushes/s); all %ld: %ld after %.2f s",
            inWindow, Double(inWindow) / window, results.accepted, pushed, drained))
        print("POST latency \(percentiles(results.latencies))")
        if pushed < results.accepted {
            throw BenchFailure("only \(pushed) of \(results.accepted) accepted messages were pushed")
        }
    }

    /// Waits (at most 10 minutes) until the 1-minute load average is below `--max-load`.
    private func waitForQuiet() async throws {
        guard maxLoad > 0 else { return }
        let started = ContinuousClock.now
        var load = Self.loadAverage()
        while load >= maxLoad, ContinuousClock.now - started < .seconds(600) {
            try await Task.sleep(for: .seconds(2))
            load = Self.loadAverage()
        }
        print(String(format: "load average %.2f after %.0f s of waiting", load, secondsOf(ContinuousClock.now - started)))
    }

    /// The 1-minute load average (Linux: /proc/loadavg); 0 where it cannot be read.
    private static func loadAverage() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return 0 }
        return Double(text.split(separator: " ").first ?? "") ?? 0
    }

    /// Pushes the emulator answered 200 so far (its control API's counters).
    private func acceptedPushes(_ emulator: BenchEndpoint, group: any EventLoopGroup) async throws -> Int {
        let (status, body) = try await BenchHTTPConnection.with(emulator, group: group) { connection in
            try await connection.request(.GET, "/counters", bearer: nil, body: "")
        }
        struct Counters: Decodable { let byStatus: [String: Int] }
        guard status == 200, let counters = try? JSONValueDecoder().decode(Counters.self, from: body.readableBytesView) else {
            throw BenchFailure("emulator counters: HTTP \(status) \(String(buffer: body))")
        }
        return counters.byStatus["200"] ?? 0
    }
}
