import Foundation
import Logging
import PostgresNIO

/// One `completePush` call, as `PostgresGroupCommit` batches it. It takes no sequence row.
struct PostgresCompletion: PostgresBatchedWrite {
    var id: String
    var result: PushAttemptResult
    /// When the attempt was made, for a retry (whose result carries the next attempt's time).
    var now: Int64

    var users: [UserRef] { [] }

    func run(on connection: PostgresConnection, logger: Logger) async throws {
        _ = try await Self.runAll([self], on: connection, logger: logger)
    }

    /// One statement for the batch. Sent and failed end the push; a retry keeps it pending with
    /// its next attempt's time. An id that is not stored changes nothing (as one UPDATE would).
    static func runAll(
        _ batch: [PostgresCompletion], on connection: PostgresConnection, logger: Logger
    ) async throws -> [Result<Void, any Error>]? {
        var kinds: [String] = [], times: [Int64] = [], statuses: [Int] = [], reasons: [String] = []
        var attemptTimes: [Int64] = [], uniqueIDs: [String] = []
        for completion in batch {
            // '' stands for no reason or unique id (a sent push clears the reason): arrays cannot
            // carry NULLs here.
            let (kind, at, status, reason, uniqueID): (String, Date, Int, String, String) = switch completion.result {
            case .sent(let at, let uniqueID): ("sent", at, 200, "", uniqueID ?? "")
            case .failed(let status, let reason, let at): ("failed", at, status, reason ?? "", "")
            case .retry(let status, let reason, let next): ("retry", next, status, reason ?? "", "")
            }
            kinds.append(kind)
            times.append(at.millisecondsSince1970)
            statuses.append(status)
            reasons.append(reason)
            // A retry's time is its next attempt's; the attempt itself was now.
            attemptTimes.append(kind == "retry" ? completion.now : at.millisecondsSince1970)
            uniqueIDs.append(uniqueID)
        }
        // The attempt's number is the outbox row's count, just raised.
        try await connection.query(
            """
            WITH done AS (
                UPDATE push_outbox o SET
                    state = CASE WHEN c.kind = 'retry' THEN o.state ELSE c.kind END,
                    attempts = o.attempts + 1,
                    sent_at = CASE WHEN c.kind = 'retry' THEN o.sent_at ELSE c.at END,
                    next_attempt_at = CASE WHEN c.kind = 'retry' THEN c.at ELSE o.next_attempt_at END,
                    status = c.status, apns_reason = NULLIF(c.reason, '')
                FROM unnest(\(batch.map(\.id))::text[], \(kinds)::text[], \(times)::bigint[], \(statuses)::bigint[],
                            \(reasons)::text[], \(attemptTimes)::bigint[], \(uniqueIDs)::text[])
                     AS c(id, kind, at, status, reason, attempted_at, unique_id)
                WHERE o.id = c.id
                RETURNING o.id, o.attempts, c.attempted_at, c.kind, c.status, c.reason, c.unique_id
            )
            INSERT INTO push_attempt (push_id, attempt, at, outcome, status, reason, unique_id)
            SELECT id, attempts, attempted_at, kind, status, NULLIF(reason, ''), NULLIF(unique_id, '') FROM done
            ON CONFLICT (push_id, attempt) DO NOTHING
            """, logger: logger)
        return batch.map { _ in .success(()) }
    }
}
