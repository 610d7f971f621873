import Logging

/// A logger that never writes below `debug`, whatever level it is set to: the one the PostgreSQL
/// store hands to PostgresNIO, which logs every wire message at `trace`, data rows included
/// (device tokens, credential hashes).
struct NoTraceLogHandler: LogHandler {
    var base: Logger
    var metadata: Logger.Metadata = [:]

    var logLevel: Logger.Level {
        get { max(base.logLevel, .debug) }
        set { base.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .debug else { return }
        base.log(
            level: event.level, event.message, metadata: metadata.merging(event.metadata ?? [:]) { $1 },
            source: event.source, file: event.file, function: event.function, line: event.line)
    }

    /// `logger`, capped at `debug`.
    static func capping(_ logger: Logger) -> Logger {
        Logger(label: logger.label) { _ in NoTraceLogHandler(base: logger) }
    }
}
