import Foundation
import TestCapture
import Testing

/// `beckon bench server` is the instrument BENCHMARKS.md's figures come from, so what it reports
/// must be what the server did. Each mode runs small against a development server (`beckon serve`
/// with nothing configured, its built-in APNs emulator behind it).
@Suite struct BenchServerTests {
    @Test func eachModeReportsEveryMessageTheServerTookAndDelivered() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("beckon.sqlite").path
        let port = try FirstRunTests.freePort(), control = try FirstRunTests.freePort()
        let server = try FirstRunTests.serve(database: database, port: port, control: control, log: directory.appendingPathComponent("serve.out"))
        defer {
            server.process.terminate()
            server.process.waitUntilExit()
        }
        _ = try await FirstRunTests.waitForBanner(server)
        let credentials = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: database + ".dev.json"))) as? [String: Any])
        let bench = [
            "bench", "server", "--url", "http://127.0.0.1:\(port)", "--app", "dev", "--bundle-id", "com.example.dev",
            "--admin-token", try #require(credentials["adminToken"] as? String),
            "--user-token-secret", try #require(credentials["userTokenSecret"] as? String), "--threads", "1",
        ]

        // Posters each take a share of the count: 300 over 7 posters does not divide evenly.
        let accept = try await CLIHarness.beckonProcess(bench + ["--mode", "accept", "--count", "300", "--concurrency", "7", "--users", "5"])
        #expect(accept.exitCode == 0, "\(accept.errors)")
        #expect(accept.output.contains("accepted (2xx): 300,"), "\(accept.output)")
        #expect(accept.output.contains("non-2xx answers: 0, failures without an answer: 0"), "\(accept.output)")

        // Open loop at 150 messages/s for 2 s: every post is answered and its frame reaches a
        // session, which acks it.
        let latency = try await CLIHarness.beckonProcess(
            bench + ["--mode", "latency", "--devices", "4", "--rate", "150", "--seconds", "2", "--posters", "3"])
        #expect(latency.exitCode == 0, "\(latency.errors)")
        #expect(latency.output.contains("accepted (2xx): 300, non-2xx: 0, failures: 0"), "\(latency.output)")
        #expect(latency.output.contains("frames received: 300 of 300 accepted"), "\(latency.output)")

        // Offline devices, each message to another one: the run fails unless the emulator counted
        // a push for every accepted message. 60 devices run out well within the 10 s (a loaded
        // machine took 1.2 s), and the round ends once each has had one (the development app
        // wakes in the background, and would coalesce a device's second push into its first).
        let pushes = try await CLIHarness.beckonProcess(
            bench + ["--mode", "pushes", "--devices", "60", "--connections", "3", "--seconds", "10",
                     "--emulator-control", try #require(credentials["emulatorControl"] as? String)])
        #expect(pushes.exitCode == 0, "\(pushes.errors)")
        #expect(pushes.output.contains("accepted (2xx): 60 in"), "\(pushes.output)")
        #expect(pushes.output.contains("non-2xx: 0, failures: 0"), "\(pushes.output)")
        #expect(pushes.output.contains("the round ended early"), "\(pushes.output)")
    }
}
