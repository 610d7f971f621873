import APNSCore
import BeckonProtocol
import Foundation
import GRDB

extension SQLiteStore: DeliveryStateStore {
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
                                         ringing_until, state, attempts, next_attempt_at, created_at, apns_id, message_ids)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?, ?)
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
                    push.callerAPNsID, try push.messageIDsColumn,
                ])
            }
            let recordWake = try db.cachedStatement(sql: """
                UPDATE push_outbox SET wake = ?, wake_latency_ms = ?, wake_at = ? WHERE id = ? AND wake IS NULL
                """)
            for wake in batch.wakes where !conflicts.contains(wake.device) {
                try recordWake.execute(arguments: [
                    wake.latency == nil ? "missed" : "observed",
                    wake.latency.map { Int64(($0 * 1000).rounded()) }, wake.at?.millisecondsSince1970 ?? now, wake.pushID,
                ])
            }
            return conflicts
        }
    }

    public func devicesSavedAsConnected() async throws -> [DeviceRef] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT app_id, device_id FROM delivery_state WHERE connected")
                .map { DeviceRef(appID: $0["app_id"], deviceID: $0["device_id"]) }
        }
    }
}
