import Foundation
import PostgresNIO

extension PostgresStore: CallStore {
    /// Once per call, whichever node hears it first: the primary key decides.
    public func endCall(appID: String, callID: String, outcome: String, at date: Date) async throws -> CallEndResult {
        try await transaction { connection in
            var isCall = false
            for try await exists in try await connection.query(
                "SELECT EXISTS (SELECT 1 FROM message WHERE id = \(callID) AND app_id = \(appID) AND kind = 'call')", logger: logger
            ).decode(Bool.self) {
                isCall = exists
            }
            guard isCall else { throw BeckonStoreError.callNotFound(callID) }
            var inserted = false
            for try await _ in try await connection.query(
                """
                INSERT INTO call_end (app_id, call_id, outcome, ended_at) VALUES (\(appID), \(callID), \(outcome), \(date.millisecondsSince1970))
                ON CONFLICT (app_id, call_id) DO NOTHING RETURNING call_id
                """, logger: logger)
            {
                inserted = true
            }
            if !inserted {
                for try await (previous, endedAt) in try await connection.query(
                    "SELECT outcome, ended_at FROM call_end WHERE app_id = \(appID) AND call_id = \(callID)", logger: logger
                ).decode((String, Int64).self) {
                    return .alreadyEnded(outcome: previous, at: Date(millisecondsSince1970: endedAt))
                }
            }
            return .ended(users: try await Self.recipients(connection, appID: appID, messageID: callID, logger: logger), at: date)
        }
    }

    public func recipients(appID: String, messageID: String) async throws -> [UserRef] {
        try await Self.recipients(client, appID: appID, messageID: messageID, logger: logger)
    }

    public func endedCalls(appID: String, callIDs: [String]) async throws -> Set<String> {
        guard !callIDs.isEmpty else { return [] }
        var ended: Set<String> = []
        for try await callID in try await client.query(
            "SELECT call_id FROM call_end WHERE app_id = \(appID) AND call_id = ANY(\(callIDs))", logger: logger
        ).decode(String.self) {
            ended.insert(callID)
        }
        return ended
    }

    static func recipients(
        _ runner: some PostgresQueryRunner, appID: String, messageID: String, logger: Logger
    ) async throws -> [UserRef] {
        var users: [UserRef] = []
        for try await userID in try await runner.run(
            "SELECT user_id FROM mailbox WHERE message_id = \(messageID) AND app_id = \(appID) ORDER BY user_id", logger: logger
        ).decode(String.self) {
            users.append(UserRef(appID: appID, userID: userID))
        }
        return users
    }
}
