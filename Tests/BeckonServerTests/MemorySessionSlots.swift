@testable import BeckonDelivery
import BeckonServer
import BeckonStore
import Foundation
import NIOConcurrencyHelpers

/// `sync_session` in memory, for the SQLite run of `PresenceCluster`: app sessions only, one per
/// device, a newer one replacing the older (the rule `PostgresStore.claimSession` applies).
final class MemorySessionSlots: SessionSlots, DevicePresence {
    private let rows = NIOLockedValueBox([DeviceRef: (session: ClusterSession, at: Date)]())

    func join(_ node: String) async throws {}

    func claim(_ session: ClusterSession, at date: Date) async throws -> [ClusterSession] {
        rows.withLockedValue { rows in
            defer { rows[session.device] = (session, date) }
            return rows[session.device].map { [$0.session] } ?? []
        }
    }

    func release(_ device: DeviceRef, session: String) async throws {
        rows.withLockedValue { rows in
            if rows[device]?.session.session == session { rows[device] = nil }
        }
    }

    func reap(_ dead: Set<String>) async throws -> [ClusterSession] {
        rows.withLockedValue { rows in
            let reaped = rows.values.map(\.session).filter { dead.contains($0.node) }
            for session in reaped { rows[session.device] = nil }
            return reaped
        }
    }

    var presence: any DevicePresence { self }

    func mayBeConnected(_ device: DeviceRef) async -> Bool { rows.withLockedValue { $0[device] != nil } }

    func connectedElsewhere(_ device: DeviceRef, besides session: String) async -> Bool {
        rows.withLockedValue { $0[device].map { $0.session.session != session } ?? false }
    }

    func liveSessions(_ devices: [DeviceRef]) async -> [DeviceRef: LiveSession] {
        rows.withLockedValue { rows in
            Dictionary(devices.compactMap { device in
                rows[device].map { (device, LiveSession(role: $0.session.role, since: $0.at)) }
            }, uniquingKeysWith: { first, _ in first })
        }
    }
}
