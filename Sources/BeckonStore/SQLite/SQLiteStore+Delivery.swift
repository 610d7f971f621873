import APNSCore
import BeckonProtocol
import Foundation
import GRDB

extension SQLiteStore {
    public func deliveryStates(_ devices: [DeviceRef]) async throws -> [DeviceRef: DeliveryState] {
        guard !devices.isEmpty else { return [:] }
        return try await writer.read { db in
            var states: [DeviceRef: DeliveryState] = [:]
            try Self.forEachRow(
                db, select: """
                    SELECT app_id, device_id, planner, next_deadline, unreachable, connected, version FROM delivery_state
                    WHERE app_id = ? AND device_id IN
                    """,
                keys: devices.lazy.map { ($0.appID, $0.deviceID) }
            ) { row in
                let device = DeviceRef(appID: row[0], deviceID: row[1])
                states[device] = DeliveryState(
                    device: device, planner: row[2], nextDeadline: row.optionalDate(at: 3),
                    unreachable: row[4], connected: row[5], version: row[6])
            }
            return states
        }
    }

    public func claimDueDeliveryStates(before date: Date, limit: Int, leaseUntil: Date) async throws -> [DeviceRef] {
        try await groupCommit.write { db in
            try Row.fetchAll(
                db,
                sql: """
                    UPDATE delivery_state SET next_deadline = ?
                    WHERE (app_id, device_id) IN (SELECT app_id, device_id FROM delivery_state
                                                  WHERE next_deadline IS NOT NULL AND next_deadline <= ?
                                                  ORDER BY next_deadline LIMIT ?)
                    RETURNING app_id, device_id
                    """,
                arguments: [leaseUntil.millisecondsSince1970, date.millisecondsSince1970, limit]
            ).map { DeviceRef(appID: $0["app_id"], deviceID: $0["device_id"]) }
        }
    }

    @discardableResult
    public func saveDelivery(_ batch: DeliveryBatch) async throws -> Set<DeviceRef> {
        guard !batch.isEmpty else { return [] }
        let now = timestamp
        return try await groupCommit.write { db in
            let saveState = try db.cachedStatement(sql: """
                INSERT INTO delivery_state (app_id, device_id, planner, next_deadline, unreachable, connected, updated_at, version)
                SELECT ?, ?, ?, ?, ?, ?, ?, 1 WHERE EXISTS (SELECT 1 FROM device WHERE app_id = ? AND id = ?)
                ON CONFLICT (app_id, device_id) DO UPDATE SET planner = excluded.planner,
                    next_deadline = excluded.next_deadline, unreachable = excluded.unreachable,
                    connected = excluded.connected, updated_at = excluded.updated_at, version = delivery_state.version + 1
                WHERE delivery_state.version = ?
                """)
            let stored = try db.cachedStatement(sql: "SELECT 1 FROM delivery_state WHERE app_id = ? AND device_id = ?")
            var conflicts: Set<DeviceRef> = []
            for state in batch.states {
                // A device deleted meanwhile keeps no state (the EXISTS above).
                try saveState.execute(arguments: [
                    state.device.appID, state.device.deviceID, state.planner,
                    state.nextDeadline?.millisecondsSince1970, state.unreachable, state.connected, now,
                    state.device.appID, state.device.deviceID, state.version,
                ])
                if db.changesCount == 0,
                    try Bool.fetchOne(stored, arguments: [state.device.appID, state.device.deviceID]) != nil
                {
                    conflicts.insert(state.device)
                }
            }
            let queuePush = try db.cachedStatement(sql: """
                INSERT INTO push_outbox (id, app_id, device_id, token_kind, reason, strategy, push_type, topic,
                                         priority, expiration, collapse_id, payload, message_count, ringing_call_id,
                                         ringing_until, state, attempts, next_attempt_at, created_at, apns_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)
                """)
            for push in batch.pushes where !conflicts.contains(push.device) {
                let notification = push.notification
                try queuePush.execute(arguments: [
                    push.id, push.device.appID, push.device.deviceID, push.tokenKind.rawValue, push.reason.rawValue,
                    push.strategy.rawValue, notification.pushType.rawValue, notification.topic,
                    notification.priority.rawValue, notification.expiration.headerValue, notification.collapseID,
                    Data(notification.payload), push.messageCount, push.ringingCallID,
                    push.ringingUntil?.millisecondsSince1970,
                    (push.claimedUntil ?? push.createdAt).millisecondsSince1970, push.createdAt.millisecondsSince1970,
                    push.callerAPNsID,
                ])
            }
            let recordWake = try db.cachedStatement(sql: """
                UPDATE push_outbox SET wake = ?, wake_latency_ms = ? WHERE id = ? AND wake IS NULL
                """)
            for wake in batch.wakes where !conflicts.contains(wake.device) {
                try recordWake.execute(arguments: [
                    wake.latency == nil ? "missed" : "observed",
                    wake.latency.map { Int64(($0 * 1000).rounded()) }, wake.pushID,
                ])
            }
            return conflicts
        }
    }

    public func claimPushes(appID: String, before date: Date, limit: Int, leaseUntil: Date) async throws -> [OutboxPush] {
        // In the group commit: a claim is a write like any other, and need not pay an fsync alone.
        try await groupCommit.write { db in
            let rows = try Row.fetchAll(
                db.cachedStatement(sql: """
                    UPDATE push_outbox SET next_attempt_at = ?
                    WHERE id IN (SELECT id FROM push_outbox WHERE state = 'pending' AND next_attempt_at <= ?
                                   AND app_id = ?
                                 ORDER BY next_attempt_at LIMIT ?)
                    RETURNING \(Self.outboxColumns)
                    """),
                arguments: [leaseUntil.millisecondsSince1970, date.millisecondsSince1970, appID, limit])
            // A row that no longer passes APNs' checks (damaged, or from an older format) is given
            // up alone, so it cannot stall the app's queue claim after claim.
            var pushes: [OutboxPush] = []
            pushes.reserveCapacity(rows.count)
            for row in rows {
                do {
                    pushes.append(try Self.outboxPush(row))
                } catch {
                    try db.execute(
                        sql: "UPDATE push_outbox SET state = 'failed', apns_reason = 'Unreadable' WHERE id = ?",
                        arguments: [row[0] as String])
                }
            }
            return pushes.sorted { $0.createdAt < $1.createdAt }
        }
    }

    public func releaseClaims(now: Date) async throws -> Int {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE push_outbox SET next_attempt_at = ? WHERE state = 'pending' AND next_attempt_at > ?",
                arguments: [now.millisecondsSince1970, now.millisecondsSince1970])
            return db.changesCount
        }
    }

    /// The columns `outboxPush(_:)` reads, in its order (by position: claims read many rows).
    static let outboxColumns = """
        id, app_id, device_id, token_kind, reason, strategy, push_type, topic, priority, expiration, collapse_id,
        payload, message_count, ringing_call_id, ringing_until, attempts, created_at, apns_id
        """

    /// A row of `outboxColumns`.
    static func outboxPush(_ row: Row) throws -> OutboxPush {
        let id: String = row[0]
        guard let key = UUID(uuidString: id), let apnsID = UUID(uuidString: row[17] ?? id),
            let priority = APNSPriority(rawValue: row[8]),
            let expiration = (row[9] as String?).map(APNSExpiration.init(headerValue:)) ?? .default
        else { throw DatabaseError(message: "push_outbox \(id): unreadable apns-id, priority or expiration") }
        let payload: Data = row[11]
        let notification = try APNSRenderedNotification(
            restoring: try row.enumValue(at: 6, column: "push_type"), topic: row[7], priority: priority,
            expiration: expiration, collapseID: row[10], apnsID: apnsID, payload: Array(payload))
        return OutboxPush(
            device: DeviceRef(appID: row[1], deviceID: row[2]), tokenKind: try row.enumValue(at: 3, column: "token_kind"),
            reason: try row.enumValue(at: 4, column: "reason"), strategy: try row.enumValue(at: 5, column: "strategy"),
            notification: notification, messageCount: row[12], ringingCallID: row[13],
            ringingUntil: row.optionalDate(at: 14), attempts: row[15],
            createdAt: Date(millisecondsSince1970: row[16]), id: key)
    }


    public func completePush(id: String, result: PushAttemptResult) async throws {
        try await groupCommit.write { db in
            // Cached statements: one of these runs for every push.
            switch result {
            case .sent(let at):
                try db.cachedStatement(sql: """
                    UPDATE push_outbox SET state = 'sent', attempts = attempts + 1, sent_at = ?, status = 200,
                        apns_reason = NULL WHERE id = ?
                    """).execute(arguments: [at.millisecondsSince1970, id])
            case .failed(let status, let reason, let at):
                try db.cachedStatement(sql: """
                    UPDATE push_outbox SET state = 'failed', attempts = attempts + 1, sent_at = ?, status = ?,
                        apns_reason = ? WHERE id = ?
                    """).execute(arguments: [at.millisecondsSince1970, status, reason, id])
            case .retry(let status, let reason, let next):
                try db.cachedStatement(sql: """
                    UPDATE push_outbox SET attempts = attempts + 1, next_attempt_at = ?, status = ?,
                        apns_reason = ? WHERE id = ?
                    """).execute(arguments: [next.millisecondsSince1970, status, reason, id])
            }
        }
    }

    public func setPushProblem(_ device: DeviceRef, problem: String?) async throws {
        try await writer.write { db in
            try db.execute(
                sql: "UPDATE device SET push_problem = ? WHERE app_id = ? AND id = ?",
                arguments: [problem, device.appID, device.deviceID])
        }
    }

    public func pushRecords(appID: String, since date: Date) async throws -> [PushRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT reason, strategy, push_type, state, status, message_count, wake, wake_latency_ms, created_at,
                           apns_reason
                    FROM push_outbox WHERE app_id = ? AND created_at >= ?
                    """,
                arguments: [appID, date.millisecondsSince1970]
            ).map { row in
                PushRecord(
                    reason: row["reason"], strategy: row["strategy"], pushType: row["push_type"], state: row["state"],
                    status: row["status"],
                    messageCount: row["message_count"], wake: row["wake"],
                    wakeLatency: (row["wake_latency_ms"] as Int64?).map { Double($0) / 1000 },
                    createdAt: Date(millisecondsSince1970: row["created_at"]), apnsReason: row["apns_reason"])
            }
        }
    }

    public func devicesSavedAsConnected() async throws -> [DeviceRef] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT app_id, device_id FROM delivery_state WHERE connected")
                .map { DeviceRef(appID: $0["app_id"], deviceID: $0["device_id"]) }
        }
    }

    public func appCounts(appID: String) async throws -> AppCounts {
        try await writer.read { db in
            let count = { (sql: String) in try Int.fetchOne(db, sql: sql, arguments: [appID]) ?? 0 }
            return AppCounts(
                devices: try count("SELECT count(*) FROM device WHERE app_id = ?"),
                devicesWithoutToken: try count(
                    "SELECT count(*) FROM device WHERE app_id = ? AND push_token IS NULL AND voip_token IS NULL"),
                pendingPushes: try count("SELECT count(*) FROM push_outbox WHERE app_id = ? AND state = 'pending'"))
        }
    }

    public func unreachableDeviceCount(appID: String) async throws -> Int {
        try await writer.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM delivery_state WHERE app_id = ? AND unreachable", arguments: [appID]) ?? 0
        }
    }

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

    static func recipients(_ db: Database, appID: String, messageID: String) throws -> [UserRef] {
        try String.fetchAll(
            db, sql: "SELECT user_id FROM mailbox WHERE message_id = ? AND app_id = ?", arguments: [messageID, appID]
        ).map { UserRef(appID: appID, userID: $0) }
    }

    public func endedCalls(appID: String, callIDs: [String]) async throws -> Set<String> {
        guard !callIDs.isEmpty else { return [] }
        return try await writer.read { db in
            let statement = try db.cachedStatement(sql: "SELECT 1 FROM call_end WHERE app_id = ? AND call_id = ?")
            return Set(try callIDs.filter { try Bool.fetchOne(statement, arguments: [appID, $0]) != nil })
        }
    }
}
