import Foundation
import TestCapture
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Nothing `beckon serve` prints can stop it. Its output goes to whoever runs it (a terminal,
/// `| head`, a log collector); that reader may go away or stop reading, and the server must go on
/// serving, losing log lines rather than the process or a message.
@Suite struct ServeOutputTests {
    /// `beckon serve | head -c 10`, with stderr gone too: written with `FileHandle.write`, the
    /// first-run banner would trap on EPIPE ("Fatal error: 'try!' expression unexpectedly raised
    /// an error ... Broken pipe").
    @Test func serveOutlivesAClosedStdoutAndStderr() async throws {
        // The reader goes away at once: every write gets EPIPE.
        try await Self.withServe(reader: .gone) { server in
            try await Self.pushThrough(server)
        }
    }

    /// A reader that stays but never reads: the pipe is full before the server writes a byte.
    /// Written with stdio's `fwrite`, the first log line would block the thread that wrote it, and
    /// the server would never get to listen.
    @Test func serveKeepsServingWhenNobodyReadsItsOutput() async throws {
        try await Self.withServe(reader: .notReading) { server in
            try await Self.pushThrough(server)
        }
    }

    enum Reader {
        /// The read end is closed before the server starts.
        case gone
        /// The read end stays open, and the pipe is full before the server starts.
        case notReading
    }

    struct Server {
        let process: ChildProcess
        let credentials: String
    }

    /// Runs `beckon serve` (the development app) with stdout and stderr the write end of one pipe.
    static func withServe(reader: Reader, _ body: (Server) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-output-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("beckon.sqlite").path
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw POSIXError(.EMFILE) }
        let (readEnd, writeEnd) = (ends[0], ends[1])
        switch reader {
        case .gone: close(readEnd)
        case .notReading: try fill(writeEnd)
        }
        defer { if reader == .notReading { close(readEnd) } }
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("BECKON_") }
        environment["BECKON_APNS_EMULATOR_CONTROL_PORT"] = String(try FirstRunTests.freePort())
        defer { close(writeEnd) }  // The child has its own copy.
        let process = try ChildProcess(
            CLIHarness.executable,
            arguments: ["serve", "--port", String(try FirstRunTests.freePort()), "--database", database],
            environment: environment, output: writeEnd, errors: writeEnd)
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        try await body(Server(process: process, credentials: database + ".dev.json"))
    }

    /// `beckon try` gets a push through the server (retried while it starts), and the server is
    /// still running afterwards; then once more.
    static func pushThrough(_ server: Server) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        var last: CLIHarness.Result?
        while ContinuousClock.now < deadline, server.process.isRunning {
            let tried = try await CLIHarness.beckonProcess(["try", "--credentials", server.credentials])
            last = tried
            if tried.exitCode == 0 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(last?.exitCode == 0, "\(last?.errors ?? "")")
        #expect(server.process.isRunning, "beckon serve ended: \(String(describing: server.process.waitUntilExit()))")
        let again = try await CLIHarness.beckonProcess(["try", "--credentials", server.credentials, "--user", "second"])
        #expect(again.exitCode == 0, "\(again.errors)")
        #expect(again.output.contains("\"apns-push-type\""))
        #expect(server.process.isRunning)
    }

    /// Writes into the pipe until the kernel takes no more, then makes the descriptor blocking
    /// again (the child shares its open file description).
    static func fill(_ descriptor: Int32) throws {
        let flags = fcntl(descriptor, F_GETFL)
        _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 { break }
        }
        _ = fcntl(descriptor, F_SETFL, flags)
    }
}
