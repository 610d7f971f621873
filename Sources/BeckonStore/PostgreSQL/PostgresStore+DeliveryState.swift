import APNSCore
import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore: DeliveryStateStore {
    public func deliveryStates(_ devices: [DeviceRef]) async throws -> [DeviceRef: DeliveryState] {
        guard !devices.isEmpty else { return [:] }
        let appIDs = devices.map(\.appID)
        let deviceIDs = devices.map(\.deviceID)
        var states: [DeviceRef: DeliveryState] = [:]
        for try await (appID, deviceID, planner, deadline, unreachable, connected, version) in try await client.query(
            """
            SELECT app_id, device_id, planner, next_deadline, unreachable, connected, version FROM delivery_state
            WHERE (app_id, device_id) IN (SELECT * FROM unnest(\(appIDs)::text[], \(deviceIDs)::text[]))
            """, logger: logger
        ).decode((String, String, Data, Int64?, Bool, Bool, Int64).self) {
            let ref = DeviceRef(appID: appID, deviceID: deviceID)
            states[ref] = DeliveryState(
                device: ref, planner: planner, nextDeadline: deadline.map(Date.init(millisecondsSince1970:)),
                unreachable: unreachable, connected: connected, version: version)
        }
        return states
    }

    /// Like `claimPushes`: rows another node is claiming are skipped, and the deadline itself is
    /// the lease, so a claim whose node died comes due again at `leaseUntil`.
    public func claimDueDeliveryStates(before date: Date, limit: Int, leaseUntil: Date) async throws -> [DeviceRef] {
        var due: [DeviceRef] = []
        for try await (appID, deviceID) in try await client.query(
            """
            UPDATE delivery_state SET next_deadline = \(leaseUntil.millisecondsSince1970)
            WHERE (app_id, device_id) IN (SELECT app_id, device_id FROM delivery_state
                                          WHERE next_deadline IS NOT NULL AND next_deadline <= \(date.millisecondsSince1970)
                                          ORDER BY next_deadline LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            RETURNING app_id, device_id
            """, logger: logger
        ).decode((String, String).self) {
            due.append(DeviceRef(appID: appID, deviceID: deviceID))
        }
        return due
    }

    @discardableResult
    public func saveDelivery(_ batch: DeliveryBatch) async throws -> Set<DeviceRef> {
        guard !batch.isEmpty else { return [] }
        do {
            return try await transaction { connection in try await self.saveDelivery(batch, on: connection) }
        } catch let error as PSQLError where ["40P01", "40001"].contains(error.serverInfo?[.sqlState]) {
            // Two nodes' batches locked rows in an order that deadlocked; the loser's whole batch
            // was rolled back, so every device of it is planned again.
            logger.debug("a delivery batch deadlocked with another node's; planning it again")
            return Set(batch.states.map(\.device) + batch.pushes.map(\.device) + batch.wakes.map(\.device))
        }
    }

    /// Three statements whatever the batch's size (one per row made each push cost several round
    /// trips): the states, the new pushes, the wake outcomes.
    private func saveDelivery(_ batch: DeliveryBatch, on connection: PostgresConnection) async throws -> Set<DeviceRef> {
        let conflicts = try await Self.saveStates(batch.states, now: timestamp, on: connection, logger: logger)
        try await Self.insertPushes(batch.pushes.filter { !conflicts.contains($0.device) }, on: connection, logger: logger)
        try await Self.recordWakes(batch.wakes.filter { !conflicts.contains($0.device) }, at: timestamp, on: connection, logger: logger)
        return conflicts
    }

    /// Writes each state whose stored version is still the one it was planned from; returns the
    /// devices whose stored state moved meanwhile (another node saved them first). A device
    /// deleted meanwhile keeps no state (the EXISTS) and is no conflict. Rows are taken in device
    /// order, so two nodes saving overlapping batches lock them in one order; the row lock the
    /// upsert takes orders two nodes saving one device, and the version decides which one wins.
    /// A state is written with its planned-from version plus one (1 for a first save).
    private static func saveStates(
        _ states: [DeliveryState], now: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> Set<DeviceRef> {
        guard !states.isEmpty else { return [] }
        // Arrays cannot carry NULLs here: Int64.min stands for no deadline.
        let none = Int64.min
        var written: Set<DeviceRef> = []
        for try await (appID, deviceID) in try await connection.query(
            """
            INSERT INTO delivery_state (app_id, device_id, planner, next_deadline, unreachable, connected, updated_at, version)
            SELECT s.app_id, s.device_id, s.planner, NULLIF(s.deadline, \(none)), s.unreachable, s.connected, \(now), s.version + 1
            FROM unnest(\(states.map(\.device.appID))::text[], \(states.map(\.device.deviceID))::text[],
                        \(states.map { ByteBuffer(bytes: $0.planner) })::bytea[], \(states.map { $0.nextDeadline?.millisecondsSince1970 ?? none })::bigint[],
                        \(states.map(\.unreachable))::boolean[], \(states.map(\.connected))::boolean[], \(states.map(\.version))::bigint[])
                 AS s(app_id, device_id, planner, deadline, unreachable, connected, version)
            WHERE EXISTS (SELECT 1 FROM device WHERE app_id = s.app_id AND id = s.device_id)
            ORDER BY s.app_id, s.device_id
            ON CONFLICT (app_id, device_id) DO UPDATE SET planner = excluded.planner,
                next_deadline = excluded.next_deadline, unreachable = excluded.unreachable,
                connected = excluded.connected, updated_at = excluded.updated_at, version = excluded.version
            WHERE delivery_state.version = excluded.version - 1
            RETURNING app_id, device_id
            """, logger: logger
        ).decode((String, String).self) {
            written.insert(DeviceRef(appID: appID, deviceID: deviceID))
        }
        let unwritten = states.map(\.device).filter { !written.contains($0) }
        guard !unwritten.isEmpty else { return [] }
        var conflicts: Set<DeviceRef> = []
        for try await (appID, deviceID) in try await connection.query(
            """
            SELECT app_id, device_id FROM delivery_state
            WHERE (app_id, device_id) IN (SELECT * FROM unnest(\(unwritten.map(\.appID))::text[], \(unwritten.map(\.deviceID))::text[]))
            """, logger: logger
        ).decode((String, String).self) {
            conflicts.insert(DeviceRef(appID: appID, deviceID: deviceID))
        }
        return conflicts
    }

    private static func insertPushes(_ pushes: [OutboxPush], on connection: PostgresConnection, logger: Logger) async throws {
        guard !pushes.isEmpty else { return }
        // '' and Int64.min stand for NULL (arrays cannot carry NULLs here); no field is empty
        // when present (ids, header values).
        let none = Int64.min
        let notifications = pushes.map(\.notification)
        try await connection.query(
            """
            INSERT INTO push_outbox (id, app_id, device_id, token_kind, reason, strategy, push_type, topic, priority,
                                     expiration, collapse_id, payload, message_count, ringing_call_id, ringing_until,
                                     state, attempts, next_attempt_at, created_at, apns_id, message_ids)
            SELECT p.id, p.app_id, p.device_id, p.token_kind, p.reason, p.strategy, p.push_type, p.topic, p.priority,
                   NULLIF(p.expiration, ''), NULLIF(p.collapse_id, ''), p.payload, p.message_count,
                   NULLIF(p.ringing_call_id, ''), NULLIF(p.ringing_until, \(none)), 'pending', 0, p.next_attempt_at, p.created_at,
                   NULLIF(p.apns_id, ''), NULLIF(p.message_ids, '')::jsonb
            FROM unnest(\(pushes.map(\.id))::text[], \(pushes.map(\.device.appID))::text[], \(pushes.map(\.device.deviceID))::text[],
                        \(pushes.map(\.tokenKind.rawValue))::text[], \(pushes.map(\.reason.rawValue))::text[],
                        \(pushes.map(\.strategy.rawValue))::text[], \(notifications.map(\.pushType.rawValue))::text[],
                        \(notifications.map(\.topic))::text[], \(notifications.map(\.priority.rawValue))::bigint[],
                        \(notifications.map { $0.expiration.headerValue ?? "" })::text[],
                        \(notifications.map { $0.collapseID ?? "" })::text[], \(notifications.map { ByteBuffer(bytes: $0.payload) })::bytea[],
                        \(pushes.map(\.messageCount))::bigint[], \(pushes.map { $0.ringingCallID ?? "" })::text[],
                        \(pushes.map { $0.ringingUntil?.millisecondsSince1970 ?? none })::bigint[],
                        \(pushes.map { ($0.claimedUntil ?? $0.createdAt).millisecondsSince1970 })::bigint[],
                        \(pushes.map(\.createdAt.millisecondsSince1970))::bigint[],
                        \(pushes.map { $0.callerAPNsID ?? "" })::text[], \(try pushes.map { try $0.messageIDsColumn ?? "" })::text[])
                 AS p(id, app_id, device_id, token_kind, reason, strategy, push_type, topic, priority, expiration,
                      collapse_id, payload, message_count, ringing_call_id, ringing_until, next_attempt_at, created_at,
                      apns_id, message_ids)
            """, logger: logger)
    }

    private static func recordWakes(_ wakes: [WakeOutcome], at now: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        guard !wakes.isEmpty else { return }
        // Int64.min stands for a missed wake (no latency). Not -1: a latency can be below zero
        // (a push decided after its device connected, before the connection was planned), and
        // that device came, as SQLite records it.
        let none = Int64.min
        try await connection.query(
            """
            UPDATE push_outbox o SET wake = CASE WHEN w.latency = \(none) THEN 'missed' ELSE 'observed' END,
                wake_latency_ms = NULLIF(w.latency, \(none)), wake_at = w.at
            FROM unnest(\(wakes.map(\.pushID))::text[], \(wakes.map { $0.latency.map { Int64(($0 * 1000).rounded()) } ?? none })::bigint[],
                        \(wakes.map { $0.at?.millisecondsSince1970 ?? now })::bigint[])
                 AS w(id, latency, at)
            WHERE o.id = w.id AND o.wake IS NULL
            """, logger: logger)
    }

    public func devicesSavedAsConnected() async throws -> [DeviceRef] {
        var devices: [DeviceRef] = []
        for try await (appID, deviceID) in try await client.query(
            "SELECT app_id, device_id FROM delivery_state WHERE connected", logger: logger
        ).decode((String, String).self) {
            devices.append(DeviceRef(appID: appID, deviceID: deviceID))
        }
        return devices
    }
}
