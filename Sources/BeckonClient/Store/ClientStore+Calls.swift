import BeckonProtocol
import GRDB

extension ClientStore {
    /// Records that a call ended (a `callEnded` frame), so a VoIP push for it that arrives late
    /// is reported and ended at once (docs/design.md, "Every VoIP push ends in a reported call").
    package func recordCallEnded(_ callID: String, outcome: CallEndOutcome, as writer: LeaseGuard) throws {
        let now = nowMilliseconds
        try write(as: writer) { db in
            try db.execute(
                sql: """
                    INSERT INTO call (callId, state, outcome, updatedAt) VALUES (?, 'ended', ?, ?)
                    ON CONFLICT (callId) DO UPDATE SET state = 'ended', outcome = excluded.outcome, updatedAt = excluded.updatedAt
                    """,
                arguments: [callID, outcome.rawValue, now])
        }
    }

    /// How the call ended, if the device has heard.
    public func callOutcome(_ callID: String) throws -> CallEndOutcome? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT outcome FROM call WHERE callId = ? AND state = 'ended'", arguments: [callID])
                .flatMap(CallEndOutcome.init(rawValue:))
        }
    }
}
