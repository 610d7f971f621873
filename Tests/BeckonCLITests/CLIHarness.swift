import APNSCore
import APNSEmulator
import Crypto
import EmulatorTestSupport
import Foundation
import TestCapture

/// Runs the built `beckon` binary against an in-process emulator.
struct CLIHarness {
    static let teamID = "TEAM123456"
    static let keyID = "KEY1234567"
    static let bundleID = "com.example.app"

    let emulator: APNSEmulator
    let directory: URL
    let keyFile: String
    let caFile: String
    let publicKey: P256.Signing.PublicKey

    struct Result {
        var exitCode: Int32
        var output: String
        var errors: String
        /// Each stdout line parsed as a JSON object.
        var lines: [[String: Any]] {
            output.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
    }

    static func run(_ body: (CLIHarness) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = TestKey(keyID: keyID, teamID: teamID)
        let keyFile = directory.appendingPathComponent("AuthKey.p8").path
        try key.privateKey.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
        let caFile = directory.appendingPathComponent("ca.pem").path
        try await withEmulator(key: key, bundleIDs: [], configure: { $0.caCertificateOutputPath = caFile }) { emulator, _ in
            try await body(
                CLIHarness(emulator: emulator, directory: directory, keyFile: keyFile, caFile: caFile, publicKey: key.privateKey.publicKey)
            )
        }
    }

    static func newToken() -> String {
        (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// `beckon push` with the connection and auth flags filled in.
    func push(_ arguments: [String], topic: String = CLIHarness.bundleID, keyFile: String? = nil) async throws -> Result {
        try await beckon(
            ["push", "--host", "127.0.0.1", "--port", String(emulator.port), "--ca-file", caFile,
             "--team-id", Self.teamID, "--key-id", Self.keyID, "--key-file", keyFile ?? self.keyFile,
             "--topic", topic] + arguments)
    }

    func beckon(_ arguments: [String]) async throws -> Result {
        try await Self.beckonProcess(arguments)
    }

    /// Runs `beckon` with these arguments to its end.
    /// On a thread of its own: waiting for a child on the test's thread would hold one of the
    /// cooperative pool's threads (two, on two cores) and stall every other test with it — the
    /// suite's sockets then time out by the dozen.
    static func beckonProcess(_ arguments: [String]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Swift.Result { try runToEnd(arguments) }) }.start()
        }
    }

    private static func runToEnd(_ arguments: [String]) throws -> Result {
        let output = Pipe()
        let errors = Pipe()
        let process = try ChildProcess(
            executable, arguments: arguments,
            output: output.fileHandleForWriting.fileDescriptor, errors: errors.fileHandleForWriting.fileDescriptor)
        try output.fileHandleForWriting.close()
        try errors.fileHandleForWriting.close()
        // Read before waiting, so a full pipe cannot block the child.
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        return Result(
            exitCode: process.waitUntilExit().code,
            output: String(decoding: outputData, as: UTF8.self),
            errors: String(decoding: errorData, as: UTF8.self))
    }

    /// The `beckon` built next to the test bundle (the test target depends on it).
    static let executable: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("beckon")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/beckon")
    }()
}
