import Foundation
import GRDB

extension SQLiteStore: CallStore {
    public func endCall(appID: String, callID: String, outcome: String, at date: Date) async throws -> CallEndResult {
        try await groupCommit.write { db in
            let isCall = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM message WHERE id = ? AND app_id = ? AND kind = 'call')",
                arguments: [callID, appID]) ?? false
            guard isCall else { throw BeckonStoreError.callNotFound(callID) }
            if let row = try Row.fetchOne(
                db, sql: "SELECT outcome, ended_at FROM call_end WHERE app_id = ? AND call_id = ?", arguments: [appID, callID])
            {
                return .alreadyEnded(outcome: row["outcome"], at: row.date("ended_at"))
            }
            try db.execute(
                sql: "INSERT INTO call_end (app_id, call_id, outcome, ended_at) VALUES (?, ?, ?, ?)",
                arguments: [appID, callID, outcome, date.millisecondsSince1970])
            return .ended(users: try Self.recipients(db, appID: appID, messageID: callID), at: date)
        }
    }

    public func recipients(appID: String, messageID: String) async throws -> [UserRef] {
        try await writer.read { db in try Self.recipients(db, appID: appID, messageID: messageID) }
    }

    public func endedCalls(appID: String, callIDs: [String]) async throws -> Set<String> {
        guard !callIDs.isEmpty else { return [] }
        return try await writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT 1 FROM call_end WHERE app_id = ? AND call_id = ?")
            return Set(try callIDs.filter { try Bool.fetchOne(statement, arguments: [appID, $0]) != nil })
        }
    }

    static func recipients(_ db: Database, appID: String, messageID: String) throws -> [UserRef] {
        try String.fetchAll(
            db, sql: "SELECT user_id FROM mailbox WHERE message_id = ? AND app_id = ?", arguments: [messageID, appID]
        ).map { UserRef(appID: appID, userID: $0) }
    }
}
