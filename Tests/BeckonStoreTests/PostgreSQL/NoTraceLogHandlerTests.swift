import Logging
import NIOConcurrencyHelpers
import Testing

@testable import BeckonStore

/// The PostgreSQL store's logger never writes `trace` (PostgresNIO's wire messages, rows included),
/// even set to `trace`; from `debug` up it writes as asked.
@Suite struct NoTraceLogHandlerTests {
    @Test func traceIsDroppedAndTheRestForwarded() {
        let lines = NIOLockedValueBox<[String]>([])
        var base = Logger(label: "test") { _ in Recording(lines: lines) }
        base.logLevel = .trace
        var capped = NoTraceLogHandler.capping(base)
        capped.logLevel = .trace
        #expect(capped.logLevel == .debug)
        capped.trace("row bytes")
        capped.debug("a query")
        capped.error("a failure", metadata: ["error": "x"])
        #expect(lines.withLockedValue { $0 } == ["debug a query", "error a failure"])
    }

    struct Recording: LogHandler {
        let lines: NIOLockedValueBox<[String]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.withLockedValue { $0.append("\(event.level) \(event.message)") } }
    }
}
