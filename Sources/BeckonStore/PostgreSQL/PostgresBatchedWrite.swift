import Logging
import PostgresNIO

/// One caller's write, as `PostgresGroupCommit` batches it.
protocol PostgresBatchedWrite: Sendable {
    associatedtype Output: Sendable
    /// The sequence rows it writes: the batch locks them up front, in order, with everyone else's.
    var users: [UserRef] { get }
    /// Runs this write alone, inside the batch's transaction (in a savepoint of its own).
    func run(on connection: PostgresConnection, logger: Logger) async throws -> Output
    /// Runs a whole batch at once, one outcome per write in order. A write that fails must have
    /// written nothing. Nil, or a thrown error, if the batch cannot run this way: it is then
    /// rolled back and run one write at a time.
    static func runAll(
        _ batch: [Self], on connection: PostgresConnection, logger: Logger
    ) async throws -> [Result<Output, any Error>]?
}
