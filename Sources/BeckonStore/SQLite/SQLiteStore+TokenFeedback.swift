import BeckonProtocol
import Foundation
import GRDB

extension SQLiteStore: TokenFeedback {
    public func removeToken(
        _ device: DeviceRef, kind: PushTokenKind, token: String, invalidSince: Date
    ) async throws -> Bool {
        guard let token = try? PushTokens.normalized(token, field: "token") else { return false }
        let column = PushTokens.column(kind)
        let now = timestamp
        let removed = try await writer.write { db in
            // "Stop pushing notifications until the device registers a token with a later
            // timestamp" (APNs, docs/apns.md A.5, E.7): a registration at or before APNs' timestamp
            // is the dead one; a later one is the device telling us the token lives again.
            try db.execute(
                sql: """
                    UPDATE device SET \(column) = NULL, \(column)_registered_at = NULL, updated_at = ?
                    WHERE app_id = ? AND id = ? AND \(column) = ? AND \(column)_registered_at <= ?
                    """,
                arguments: [now, device.appID, device.deviceID, token, invalidSince.millisecondsSince1970])
            return db.changesCount > 0
        }
        if removed {
            logger.info("token removed after APNs reported it invalid", metadata: ["device": "\(device)", "kind": "\(kind)"])
        }
        return removed
    }

    public func setPushProblem(_ device: DeviceRef, problem: String?) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE device SET push_problem = ? WHERE app_id = ? AND id = ?",
                arguments: [problem, device.appID, device.deviceID])
        }
    }
}
