import Foundation
import TestCapture
import Testing

/// A newcomer's two commands: `beckon serve` with nothing configured serves a development app and
/// says what to do next; `beckon try` then ends in a push at the emulator.
@Suite struct FirstRunTests {
    @Test func serveWithNoAppThenTryEndsInAPush() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("beckon-first-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("beckon.sqlite").path
        let credentials = database + ".dev.json"
        let port = try Self.freePort(), control = try Self.freePort()

        let first = try Self.serve(database: database, port: port, control: control, log: directory.appendingPathComponent("first.out"))
        let banner = try await Self.waitForBanner(first)
        #expect(banner.contains("development app \"dev\""))
        #expect(banner.contains("API key            bk_"), "the secrets are shown the first time")
        let attributes = try FileManager.default.attributesOfItem(atPath: credentials)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let tried = try await CLIHarness.beckonProcess(["try", "--credentials", credentials, "--text", "first light"])
        #expect(tried.exitCode == 0, "\(tried.errors)")
        #expect(tried.output.contains("\"apns-push-type\" : \"background\""), "\(tried.output)")
        #expect(tried.output.contains("\"reason\" : \"wake\""))
        // What happened to that message, from the same credentials file's API key.
        let messageID = try #require(tried.output.split(separator: " ").drop { $0 != "message" }.dropFirst().first.map(String.init))
        let trace = try await CLIHarness.beckonProcess(["trace", messageID, "--url", "http://127.0.0.1:\(port)", "--credentials", credentials])
        #expect(trace.exitCode == 0, "\(trace.errors)")
        #expect(trace.output.contains("device try-"), "\(trace.output)")
        #expect(trace.output.contains("push") && trace.output.contains("reason=wake") && trace.output.contains("status=200"))
        let token = try await CLIHarness.beckonProcess(["user-token", "--user", "alice", "--credentials", credentials])
        #expect(token.output.split(separator: ".").count == 3)

        // The admin commands, with the development app's admin token from the same file.
        let admin = ["--url", "http://127.0.0.1:\(port)", "--credentials", credentials]
        let devices = try await CLIHarness.beckonProcess(["admin", "devices", "--app", "dev", "--user", "newcomer"] + admin)
        #expect(devices.exitCode == 0, "\(devices.errors)")
        #expect(devices.output.contains("\"deviceId\" : \"try-"))
        let report = try await CLIHarness.beckonProcess(["admin", "report", "--app", "dev"] + admin)
        #expect(report.output.contains("\"reason\" : \"wake\""), "\(report.output)")
        let created = try await CLIHarness.beckonProcess(["admin", "create-key", "--app", "dev", "--name", "ci"] + admin)
        let key = try #require(created.lines.first ?? (try? JSONSerialization.jsonObject(with: Data(created.output.utf8)) as? [String: Any]))
        let keyID = try #require(key["id"] as? String)
        #expect(try await CLIHarness.beckonProcess(["admin", "revoke-key", "--app", "dev", "--key-id", keyID] + admin).exitCode == 0)
        let unknown = try await CLIHarness.beckonProcess(["admin", "revoke-key", "--app", "dev", "--key-id", "nokey"] + admin)
        #expect(unknown.exitCode != 0)
        #expect(unknown.errors.contains("404"))
        first.process.terminate()
        first.process.waitUntilExit()

        // A second start keeps the same app and key, and no longer shows the secrets.
        let second = try Self.serve(database: database, port: port, control: control, log: directory.appendingPathComponent("second.out"))
        let again = try await Self.waitForBanner(second)
        #expect(again.contains("are in \(credentials)"))
        #expect(!again.contains("bk_"))
        #expect(try await CLIHarness.beckonProcess(["try", "--credentials", credentials]).exitCode == 0)
        second.process.terminate()
        second.process.waitUntilExit()
    }

    struct Server {
        let process: ChildProcess
        let log: URL
    }

    static func serve(database: String, port: Int, control: Int, log: URL) throws -> Server {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("BECKON_") }
        environment["BECKON_APNS_EMULATOR_CONTROL_PORT"] = String(control)
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = try ChildProcess(
            CLIHarness.executable, arguments: ["serve", "--port", String(port), "--database", database],
            environment: environment, output: handle.fileDescriptor, errors: handle.fileDescriptor)
        return Server(process: process, log: log)
    }

    /// The log once the banner's last line is in it.
    static func waitForBanner(_ server: Server) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let text = (try? String(contentsOf: server.log, encoding: .utf8)) ?? ""
            if text.contains("what each received") { return text }
            if !server.process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: (try? String(contentsOf: server.log, encoding: .utf8)) ?? ""])
    }

    static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
