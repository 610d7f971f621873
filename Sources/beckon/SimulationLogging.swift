import Logging

/// `beckon simulate` logs at one level for every part (the store, the emulator, delivery), so
/// a run prints its result and what went wrong, not the node's start-up.
enum SimulationLogging {
    static func bootstrap(_ level: Logger.Level) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
    }
}
