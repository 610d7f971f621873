/// What happened to an accepted notification on its way to a device: the device side of the
/// emulator (apns.md E.1). An observer set with `APNSEmulator.observeDevices` gets one of these
/// for every step, in order per device, so a simulated device in the same process can receive
/// what APNs delivers to its token (`beckon simulate`, docs/simulator.md).
public enum APNSEmulatorDeviceEvent: Sendable, Hashable {
    /// APNs answered 200: the notification is APNs' to deliver now.
    case accepted(APNSEmulatorNotification)
    /// The device was offline: APNs keeps it (only the newest per app per device).
    case stored(APNSEmulatorNotification)
    /// The device got it: at once, or from storage when it came back online.
    case delivered(APNSEmulatorNotification)
    /// The device never will.
    case discarded(APNSEmulatorNotification, APNSEmulatorDiscard)

    public var notification: APNSEmulatorNotification {
        switch self {
        case .accepted(let notification), .stored(let notification), .delivered(let notification),
            .discarded(let notification, _):
            notification
        }
    }
}

/// Why APNs dropped a notification for a device (apns.md E.1).
public enum APNSEmulatorDiscard: String, Sendable, Hashable {
    /// `apns-expiration: 0` and the device offline: one attempt, never stored.
    case notStored = "not-stored"
    /// Its expiry passed before the device came back.
    case expired
    /// A newer notification took its place in storage.
    case replaced
}
