import APNSCore
import Foundation

/// A device token the emulator knows: one app on one device (apns.md E.7).
public struct APNSEmulatorDevice: Sendable, Hashable {
    /// Which kind of token it is: a PushKit VoIP token takes only `voip` pushes, an app token
    /// takes every other type (apns.md G.2: the wrong one gets `DeviceTokenNotForTopic`).
    public enum Kind: String, Sendable, Hashable {
        case app
        case voip
    }

    /// Lowercase hex.
    public var token: String
    public var bundleID: String
    public var environment: APNSEnvironment
    public var kind: Kind
    public var isOnline: Bool
    public var registeredAt: Date
    /// Set by `unregisterDevice`: requests then get 410 `Unregistered` with this timestamp.
    public var unregisteredAt: Date?
}

/// One notification APNs accepted for a device, as the device saw it.
public struct APNSEmulatorNotification: Sendable, Hashable {
    public var apnsID: String
    public var deviceToken: String
    public var topic: String
    public var pushType: APNSPushType
    public var priority: Int
    /// The raw `apns-expiration`; nil when omitted.
    public var expiration: Int64?
    public var collapseID: String?
    /// Request headers (lowercase names, no pseudo-headers, no `authorization`).
    public var headers: [String: String]
    public var payload: [UInt8]
    public var acceptedAt: Date
    /// When the device got it (later than `acceptedAt` if it was stored while offline).
    public var deliveredAt: Date?

    /// The identifier iOS gives the notification: the collapse id, else one of its own (apns.md E.2).
    public var identifier: String { collapseID ?? apnsID }
    public var payloadString: String { String(decoding: payload, as: UTF8.self) }
}

/// A device's delivery state: what it received, what is on its screen, what APNs holds for it.
struct DeviceRecord: Sendable {
    var device: APNSEmulatorDevice
    /// What was delivered, in order: the newest `deliveryLogLimit`.
    var received = DeliveryLog()
    /// Alerts on screen, oldest first; one per identifier (collapse id replaces, apns.md E.2); the
    /// newest `deliveryLogLimit`.
    var displayed = DeliveryLog()
    /// The one notification APNs keeps while the device is offline (apns.md E.1), and until when.
    var stored: (notification: APNSEmulatorNotification, expiresAt: Date)?
    /// Notifications dropped: expired, `apns-expiration: 0` while offline, or replaced in storage.
    var discarded = 0

    /// Storage keeps a notification at most 30 days (apns.md E.1).
    static let maximumStorage: TimeInterval = 30 * 24 * 3600

    /// A notification APNs accepted (after the 200). Returns whether it reached the device now.
    /// `observe` (the device side, when someone listens) hears each step; nothing is built for
    /// it otherwise: this runs for every push the emulator accepts.
    @discardableResult
    mutating func accept(
        _ notification: APNSEmulatorNotification, now: Date, logLimit: Int,
        observe: ((APNSEmulatorDeviceEvent) -> Void)? = nil
    ) -> Bool {
        observe?(.accepted(notification))
        if device.isOnline {
            let delivered = deliver(notification, now: now, logLimit: logLimit)
            observe?(.delivered(delivered))
            return true
        }
        // Offline: `apns-expiration: 0` means one attempt, never stored.
        if notification.expiration == 0 {
            discarded += 1
            observe?(.discarded(notification, .notStored))
            return false
        }
        var expiresAt = now.addingTimeInterval(Self.maximumStorage)
        if let seconds = notification.expiration {
            expiresAt = min(expiresAt, Date(timeIntervalSince1970: TimeInterval(seconds)))
        }
        guard expiresAt > now else {
            discarded += 1
            observe?(.discarded(notification, .expired))
            return false
        }
        // Only the newest is kept, per app per device (apns.md E.1).
        if let replaced = stored {
            discarded += 1
            observe?(.discarded(replaced.notification, .replaced))
        }
        stored = (notification, expiresAt)
        observe?(.stored(notification))
        return false
    }

    /// What became of the stored notification on coming online (nothing when none was stored or
    /// the device went offline).
    @discardableResult
    mutating func setOnline(_ online: Bool, now: Date, logLimit: Int) -> APNSEmulatorDeviceEvent? {
        device.isOnline = online
        guard online, let held = stored else { return nil }
        stored = nil
        if held.expiresAt > now {
            return .delivered(deliver(held.notification, now: now, logLimit: logLimit))
        }
        discarded += 1
        return .discarded(held.notification, .expired)
    }

    /// Drops what expired in storage (called lazily).
    mutating func expire(now: Date) {
        if let held = stored, held.expiresAt <= now {
            stored = nil
            discarded += 1
        }
    }

    private mutating func deliver(
        _ notification: APNSEmulatorNotification, now: Date, logLimit: Int
    ) -> APNSEmulatorNotification {
        var notification = notification
        notification.deliveredAt = now
        received.append(notification, limit: logLimit)
        if notification.pushType == .alert {
            // Only a collapse id can repeat: without one iOS assigns a fresh identifier (apns.md E.2).
            if let collapseID = notification.collapseID {
                displayed.removeAll { $0.collapseID == collapseID }
            }
            displayed.append(notification, limit: logLimit)
        }
        return notification
    }
}
