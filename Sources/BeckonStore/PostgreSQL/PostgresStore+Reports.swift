import APNSCore
import Foundation
import PostgresNIO

extension PostgresStore: DeliveryReports {
    public func pushRecords(appID: String, since date: Date) async throws -> [PushRecord] {
        var records: [PushRecord] = []
        for try await (reason, strategy, pushType, state, status, count, wake, latency, createdAt, apnsReason)
            in try await client.query(
                """
                SELECT reason, strategy, push_type, state, status, message_count, wake, wake_latency_ms, created_at,
                       apns_reason
                FROM push_outbox WHERE app_id = \(appID) AND created_at >= \(date.millisecondsSince1970)
                """, logger: logger
            ).decode((String, String, String?, String, Int?, Int, String?, Int64?, Int64, String?).self)
        {
            records.append(PushRecord(
                reason: reason, strategy: strategy, pushType: pushType, state: state, status: status, messageCount: count,
                wake: wake, wakeLatency: latency.map { Double($0) / 1000 }, createdAt: Date(millisecondsSince1970: createdAt),
                apnsReason: apnsReason))
        }
        return records
    }

    public func appCounts(appID: String) async throws -> AppCounts {
        for try await (devices, withoutToken, pending) in try await client.query(
            """
            SELECT (SELECT count(*)::integer FROM device WHERE app_id = \(appID)),
                   (SELECT count(*)::integer FROM device WHERE app_id = \(appID) AND push_token IS NULL AND voip_token IS NULL),
                   (SELECT count(*)::integer FROM push_outbox WHERE app_id = \(appID) AND state = 'pending')
            """, logger: logger
        ).decode((Int, Int, Int).self) {
            return AppCounts(devices: devices, devicesWithoutToken: withoutToken, pendingPushes: pending)
        }
        return AppCounts(devices: 0, devicesWithoutToken: 0, pendingPushes: 0)
    }

    public func shownShares(appID: String, from: Date, to: Date, within: TimeInterval) async throws -> [ShownShare] {
        var binds = PostgresBindings()
        binds.append(appID)
        binds.append(from.millisecondsSince1970)
        binds.append(to.millisecondsSince1970)
        binds.append(Int64(within * 1000))
        binds.append(UUID.timeOrderedPrefix(at: from))
        binds.append(UUID.timeOrderedPrefix(at: to))
        let query = PostgresQuery(
            unsafeSQL: ShownShare.query(
                app: "$1", from: "$2", to: "$3", within: "$4", fromID: "$5", toID: "$6",
                messagesOf: { "jsonb_array_elements_text(\($0)) AS j(value)" }),
            binds: binds)
        var shares: [ShownShare] = []
        for try await (strategy, messages, shown) in try await client.query(query, logger: logger).decode((String, Int64, Int64).self) {
            shares.append(ShownShare(strategy: strategy, messages: Int(messages), shown: Int(shown)))
        }
        return shares
    }

    public func unreachableDeviceCount(appID: String) async throws -> Int {
        for try await count in try await client.query(
            "SELECT count(*)::integer FROM delivery_state WHERE app_id = \(appID) AND unreachable", logger: logger
        ).decode(Int.self) {
            return count
        }
        return 0
    }
}
