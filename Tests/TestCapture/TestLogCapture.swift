import Foundation
import Logging
import NIOConcurrencyHelpers

/// Every log record of the test process, written where `scripts/scan-logs.py` reads it.
///
/// With `BECKON_TEST_LOG_FILE` set (`scripts/test.sh` sets it), the test fixtures route every
/// logger made after them to that file at `trace`, whatever level the code under test asks for: the
/// scan must see every line the server could ever write, to show that none holds a device token, an
/// API key, a device credential or a user token in full. Without it, logging stays swift-log's
/// default (stdout, `info`).
public enum TestLogCapture {
    /// Idempotent; the first fixture to run installs it (swift-log takes one bootstrap a process).
    public static func install() {
        _ = installed
    }

    private static let installed: Bool = {
        guard let path = ProcessInfo.processInfo.environment["BECKON_TEST_LOG_FILE"],
            FileManager.default.createFile(atPath: path, contents: nil),
            let file = FileHandle(forWritingAtPath: path)
        else { return false }
        let sink = NIOLockedValueBox(file)
        LoggingSystem.bootstrap { label in CapturingLogHandler(label: label, sink: sink) }
        return true
    }()
}

/// Writes each record as one line: time, level, label, metadata, message.
struct CapturingLogHandler: LogHandler {
    let label: String
    let sink: NIOLockedValueBox<FileHandle>
    var metadata: Logger.Metadata = [:]

    /// Always `trace`: a component that lowers its own logger's level still has every line scanned.
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let line = "\(Date().timeIntervalSince1970) \(event.level) \(label): \(fields) \(event.message) [\(event.source)]\n"
        sink.withLockedValue { $0.write(Data(line.utf8)) }
    }
}
