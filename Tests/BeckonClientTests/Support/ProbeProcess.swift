import BeckonClientTestSupport
import Foundation
import TestCapture

/// `BeckonClientLockProbe` running as a separate process, its stdout collected line by line.
final class ProbeProcess: @unchecked Sendable {
    let process: ChildProcess
    /// Held for the probe's life: the read end closes when the pipe goes.
    private let output = Pipe()
    private let lock = NSLockBox()
    private var buffer = ""
    private var _lines: [String] = []

    var lines: [String] { lock.run { _lines } }

    init(database: String, role: String, _ arguments: [String]) throws {
        process = try ChildProcess(
            Self.executable, arguments: [database, role] + arguments, output: output.fileHandleForWriting.fileDescriptor)
        try output.fileHandleForWriting.close()
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.run {
                self.buffer += String(decoding: data, as: UTF8.self)
                while let newline = self.buffer.firstIndex(of: "\n") {
                    self._lines.append(String(self.buffer[..<newline]))
                    self.buffer = String(self.buffer[self.buffer.index(after: newline)...])
                }
            }
        }
    }

    /// Waits for a line starting with `prefix`; returns it.
    @discardableResult
    func line(_ prefix: String, timeout: Duration = .seconds(60)) async throws -> String {
        var found: String?
        try await eventually("probe line \"\(prefix)\" (got \(lines))", timeout: timeout) {
            found = lines.first { $0.hasPrefix(prefix) }
            return found != nil
        }
        return found!
    }

    func signal(_ signal: Int32) {
        process.signal(signal)
    }

    /// SIGSTOP, then waits until the kernel shows the process stopped: on a loaded machine the
    /// signal may not have taken effect yet when the test goes on (the "stopped" probe can still
    /// answer a preemption).
    func stop() async throws {
        signal(SIGSTOP)
        #if os(Linux)
        let stat = "/proc/\(process.processIdentifier)/stat"
        try await eventually("the probe to stop", timeout: .seconds(30)) {
            // The state follows the command name in parentheses: "pid (name) T ...".
            guard let text = try? String(contentsOfFile: stat, encoding: .utf8),
                let close = text.lastIndex(of: ")")
            else { return false }
            return text[text.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("T")
        }
        #endif
    }

    func waitForExit(timeout: Duration = .seconds(60)) async throws -> ChildProcess.Termination {
        try await eventually("the probe's exit", timeout: timeout) { !process.isRunning }
        return process.waitUntilExit()
    }

    /// The generation in an "acquired generation=G dirty=D" line.
    static func generation(_ line: String) -> Int64? {
        line.split(separator: " ").first { $0.hasPrefix("generation=") }.flatMap { Int64($0.dropFirst("generation=".count)) }
    }

    /// The probe built next to the test bundle (the test target depends on it).
    static let executable: URL = {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("BeckonClientLockProbe")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        return URL(fileURLWithPath: ".build/debug/BeckonClientLockProbe")
    }()
}
