import BeckonProtocol
import BeckonStore
import Foundation

/// What happened to one message, device by device, in time order: stored, each push decided for
/// it and every APNs answer, the wake it waited for, the device's receipts (synced, shown,
/// opened, removed), reads here and elsewhere, expiry, a token found dead. Built from what the
/// store keeps (`MessageTraceRecords`), so it says only what was recorded: nothing is inferred.
public struct MessageTrace: Hashable, Sendable {
    public struct Recipient: Hashable, Sendable, Encodable {
        public var userId: String
        public var sequence: Int64
    }

    public struct DeviceTrace: Hashable, Sendable, Encodable {
        public var deviceId: String
        /// Nil for a device deleted since (its pushes and receipts are still traced).
        public var userId: String?
        public var events: [TraceEvent]
    }

    public var messageID: String
    public var kind: MessageKind
    public var createdAt: Date
    public var expiresAt: Date?
    public var recipients: [Recipient]
    public var devices: [DeviceTrace]

    /// - Parameter now: what "expired" is judged against.
    public init(_ records: MessageTraceRecords, now: Date) {
        let message = records.message
        messageID = message.id
        kind = message.kind
        createdAt = message.createdAt
        expiresAt = message.expiresAt
        recipients = records.positions.map { Recipient(userId: $0.userID, sequence: $0.sequence) }
            .sorted { $0.userId < $1.userId }
        let sequences = Dictionary(records.positions.map { ($0.userID, $0.sequence) }, uniquingKeysWith: { first, _ in first })

        var users: [String: String] = [:]  // device → user, for registered devices
        for device in records.devices { users[device.id] = device.userID }
        var events: [String: [TraceEvent]] = [:]
        for device in records.devices {
            events[device.id, default: []].append(
                TraceEvent(at: message.createdAt, type: .stored, sequence: sequences[device.userID]))
        }
        for push in records.pushes {
            events[push.device.deviceID, default: []] += TraceEvent.events(of: push)
        }
        for receipt in records.receipts {
            events[receipt.device.deviceID, default: []].append(TraceEvent(at: receipt.at, type: TraceEvent.Kind(receipt.kind)))
        }
        for read in records.reads {
            events[read.deviceID, default: []].append(TraceEvent(at: read.at, type: .read))
            for device in records.devices where device.userID == read.userID && device.id != read.deviceID {
                events[device.id, default: []].append(TraceEvent(at: read.at, type: .readElsewhere, deviceId: read.deviceID))
            }
        }
        if let expiry = message.expiresAt, expiry <= now {
            // Only where it had not arrived: an expired message a device has is not lost to it.
            for (device, list) in events where !list.contains(where: { $0.type == .synced }) {
                events[device] = list + [TraceEvent(at: expiry, type: .expired)]
            }
        }
        devices = events.keys.sorted().map { id in
            DeviceTrace(deviceId: id, userId: users[id], events: events[id]!.sorted())
        }
    }
}
