import APNSCore
import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore {
    public func deliveryStates(_ devices: [DeviceRef]) async throws -> [DeviceRef: DeliveryState] {
        guard !devices.isEmpty else { return [:] }
        let appIDs = devices.map(\.appID)
        let deviceIDs = devices.map(\.deviceID)
        var states: [DeviceRef: DeliveryState] = [:]
        for try await (appID, deviceID, planner, deadline, unreachable, version) in try await client.query(
            """
            SELECT app_id, device_id, planner, next_deadline, unreachable, version FROM delivery_state
            WHERE (app_id, device_id) IN (SELECT * FROM unnest(\(appIDs)::text[], \(deviceIDs)::text[]))
            """, logger: logger
        ).decode((String, String, Data, Int64?, Bool, Int64).self) {
            let ref = DeviceRef(appID: appID, deviceID: deviceID)
            states[ref] = DeliveryState(
                device: ref, planner: planner, nextDeadline: deadline.map(Date.init(millisecondsSince1970:)),
                unreachable: unreachable, version: version)
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

    private func saveDelivery(_ batch: DeliveryBatch, on connection: PostgresConnection) async throws -> Set<DeviceRef> {
        let now = timestamp
        var conflicts: Set<DeviceRef> = []
        // In device order, so two nodes saving overlapping batches lock rows in one order.
        for state in batch.states.sorted(by: { ($0.device.appID, $0.device.deviceID) < ($1.device.appID, $1.device.deviceID) }) {
            // A device deleted meanwhile keeps no state (the EXISTS). The row lock the upsert
            // takes orders two nodes saving one device; the version decides which one wins.
            let written = try await Self.hasRow(connection.query(
                """
                INSERT INTO delivery_state (app_id, device_id, planner, next_deadline, unreachable, updated_at, version)
                SELECT \(state.device.appID), \(state.device.deviceID), \(state.planner),
                       \(state.nextDeadline?.millisecondsSince1970), \(state.unreachable), \(now), 1
                WHERE EXISTS (SELECT 1 FROM device WHERE app_id = \(state.device.appID) AND id = \(state.device.deviceID))
                ON CONFLICT (app_id, device_id) DO UPDATE SET planner = excluded.planner,
                    next_deadline = excluded.next_deadline, unreachable = excluded.unreachable,
                    updated_at = excluded.updated_at, version = delivery_state.version + 1
                WHERE delivery_state.version = \(state.version)
                RETURNING 1
                """, logger: logger))
            if !written, try await Self.hasRow(connection.query(
                "SELECT 1 FROM delivery_state WHERE app_id = \(state.device.appID) AND device_id = \(state.device.deviceID)",
                logger: logger))
            {
                conflicts.insert(state.device)
            }
        }
        for push in batch.pushes where !conflicts.contains(push.device) {
            let notification = push.notification
            let created = push.createdAt.millisecondsSince1970
            try await connection.query(
                """
                INSERT INTO push_outbox (id, app_id, device_id, token_kind, reason, strategy, push_type, topic, priority,
                                         expiration, collapse_id, payload, message_count, ringing_call_id, ringing_until,
                                         state, attempts, next_attempt_at, created_at)
                VALUES (\(push.id), \(push.device.appID), \(push.device.deviceID), \(push.tokenKind.rawValue),
                        \(push.reason.rawValue), \(push.strategy.rawValue), \(notification.pushType.rawValue),
                        \(notification.topic), \(notification.priority.rawValue), \(notification.expiration.headerValue),
                        \(notification.collapseID), \(Data(notification.payload)), \(push.messageCount), \(push.ringingCallID),
                        \(push.ringingUntil?.millisecondsSince1970), 'pending', 0, \(created), \(created))
                """, logger: logger)
        }
        for wake in batch.wakes where !conflicts.contains(wake.device) {
            let latency = wake.latency.map { Int64(($0 * 1000).rounded()) }
            try await connection.query(
                """
                UPDATE push_outbox SET wake = \(wake.latency == nil ? "missed" : "observed"), wake_latency_ms = \(latency)
                WHERE id = \(wake.pushID) AND wake IS NULL
                """, logger: logger)
        }
        return conflicts
    }

    /// Claims due pushes for this node until `leaseUntil`: rows another node holds are skipped,
    /// not waited for (`SKIP LOCKED`), and a claim whose node died comes due again when its
    /// lease runs out — no restart needed (issue 13). A retry's schedule is its `next_attempt_at`.
    public func claimPushes(appID: String, before date: Date, limit: Int, leaseUntil: Date) async throws -> [OutboxPush] {
        try await transaction { connection in
            var pushes: [OutboxPush] = []
            let rows = try await connection.query(
                """
                UPDATE push_outbox SET next_attempt_at = \(leaseUntil.millisecondsSince1970)
                WHERE id IN (SELECT id FROM push_outbox
                             WHERE state = 'pending' AND app_id = \(appID) AND next_attempt_at <= \(date.millisecondsSince1970)
                             ORDER BY next_attempt_at LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING id, app_id, device_id, token_kind, reason, strategy, push_type, topic, priority, expiration,
                          collapse_id, payload, message_count, ringing_call_id, ringing_until, attempts, created_at
                """, logger: logger)
            var unreadable: [String] = []
            for try await row in rows {
                let columns = row.makeRandomAccess()
                do {
                    pushes.append(try Self.outboxPush(columns))
                } catch {
                    unreadable.append(try columns["id"].decode(String.self))
                }
            }
            // A row that no longer passes APNs' checks is given up alone, so it cannot stall the queue.
            for id in unreadable {
                try await connection.query(
                    "UPDATE push_outbox SET state = 'failed', apns_reason = 'Unreadable' WHERE id = \(id)", logger: logger)
            }
            return pushes.sorted { $0.createdAt < $1.createdAt }
        }
    }

    /// With several nodes, a claim is not this node's to release: it comes due again when its
    /// lease runs out (`claimPushes`). So this does nothing here.
    public func releaseClaims(now: Date) async throws -> Int { 0 }

    public func completePush(id: String, result: PushAttemptResult) async throws {
        switch result {
        case .sent(let at):
            try await client.query(
                """
                UPDATE push_outbox SET state = 'sent', attempts = attempts + 1, sent_at = \(at.millisecondsSince1970),
                    status = 200, apns_reason = NULL WHERE id = \(id)
                """, logger: logger)
        case .failed(let status, let reason, let at):
            try await client.query(
                """
                UPDATE push_outbox SET state = 'failed', attempts = attempts + 1, sent_at = \(at.millisecondsSince1970),
                    status = \(status), apns_reason = \(reason) WHERE id = \(id)
                """, logger: logger)
        case .retry(let status, let reason, let next):
            try await client.query(
                """
                UPDATE push_outbox SET attempts = attempts + 1, next_attempt_at = \(next.millisecondsSince1970),
                    status = \(status), apns_reason = \(reason) WHERE id = \(id)
                """, logger: logger)
        }
    }

    public func setPushProblem(_ device: DeviceRef, problem: String?) async throws {
        try await client.query(
            "UPDATE device SET push_problem = \(problem) WHERE app_id = \(device.appID) AND id = \(device.deviceID)",
            logger: logger)
    }

    public func unreachableDeviceCount(appID: String) async throws -> Int {
        for try await count in try await client.query(
            "SELECT count(*)::integer FROM delivery_state WHERE app_id = \(appID) AND unreachable", logger: logger
        ).decode(Int.self) {
            return count
        }
        return 0
    }

    static func outboxPush(_ row: PostgresRandomAccessRow) throws -> OutboxPush {
        let id = try row["id"].decode(String.self)
        func value<T: RawRepresentable>(_ column: String, _ type: T.Type) throws -> T where T.RawValue == String {
            let raw = try row[column].decode(String.self)
            guard let value = T(rawValue: raw) else {
                throw BeckonStoreError.invalidArgument(field: "push_outbox.\(column)", reason: "unknown value \(raw) in \(id)")
            }
            return value
        }
        guard let apnsID = UUID(uuidString: id), let priority = APNSPriority(rawValue: try row["priority"].decode(Int.self))
        else { throw BeckonStoreError.invalidArgument(field: "push_outbox", reason: "unreadable apns-id or priority in \(id)") }
        let expiration = try row["expiration"].decode(String?.self).map(APNSExpiration.init(headerValue:)) ?? .default
        guard let expiration else {
            throw BeckonStoreError.invalidArgument(field: "push_outbox.expiration", reason: "unreadable in \(id)")
        }
        let notification = try APNSRenderedNotification(
            restoring: try value("push_type", APNSPushType.self), topic: try row["topic"].decode(String.self), priority: priority,
            expiration: expiration, collapseID: try row["collapse_id"].decode(String?.self), apnsID: apnsID,
            payload: Array(try row["payload"].decode(Data.self)))
        return OutboxPush(
            device: DeviceRef(appID: try row["app_id"].decode(String.self), deviceID: try row["device_id"].decode(String.self)),
            tokenKind: try value("token_kind", PushTokenKind.self), reason: try value("reason", PushReason.self),
            strategy: try value("strategy", DeliveryStrategy.self), notification: notification,
            messageCount: try row["message_count"].decode(Int.self), ringingCallID: try row["ringing_call_id"].decode(String?.self),
            ringingUntil: try row["ringing_until"].decode(Int64?.self).map(Date.init(millisecondsSince1970:)),
            attempts: try row["attempts"].decode(Int.self),
            createdAt: Date(millisecondsSince1970: try row["created_at"].decode(Int64.self)))
    }
}
