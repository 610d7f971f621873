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
        // Each attempt joins the row's log (PushAttempt+Log), numbered by the row's count as
        // raised (SET expressions read the row as it was).
        try await connection.query(
            """
            UPDATE push_outbox o SET
                state = CASE WHEN c.kind = 'retry' THEN o.state ELSE c.kind END,
                attempts = o.attempts + 1,
                sent_at = CASE WHEN c.kind = 'retry' THEN o.sent_at ELSE c.at END,
                next_attempt_at = CASE WHEN c.kind = 'retry' THEN c.at ELSE o.next_attempt_at END,
                status = c.status, apns_reason = NULLIF(c.reason, ''),
                attempt_log = coalesce(o.attempt_log, '[]'::jsonb) || jsonb_build_array(jsonb_build_array(
                    o.attempts + 1, c.attempted_at, c.kind, c.status, NULLIF(c.reason, ''), NULLIF(c.unique_id, '')))
            FROM unnest(\(batch.map(\.id))::text[], \(kinds)::text[], \(times)::bigint[], \(statuses)::bigint[],
                        \(reasons)::text[], \(attemptTimes)::bigint[], \(uniqueIDs)::text[])
                 AS c(id, kind, at, status, reason, attempted_at, unique_id)
            WHERE o.id = c.id
            """, logger: logger)
        return batch.map { _ in .success(()) }
    }
}
