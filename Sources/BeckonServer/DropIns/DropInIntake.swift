import BeckonDelivery
import BeckonJSON
import BeckonProtocol
import BeckonStore
import Foundation

/// How the drop-ins (Matrix, gorush, XMPP) reach Beckon's own path: the device a protocol's key
/// names, registered implicitly, and a message for it through the intake, so its pushes go
/// through the planner and the outbox like any other (docs/drop-ins.md).
struct DropInIntake: Sendable {
    let store: any DeviceRegistry
    let intake: MessageIntake
    /// `limits.push-extras-bytes`.
    let maximumPushExtrasBytes: Int
    let now: @Sendable () -> Date

    /// The device for a drop-in's key with `token`, registered or brought up to date; nil when
    /// Apple refused that token (410 and the like) after the device was last registered and the
    /// caller has not re-registered since (`registeredAt`, e.g. Matrix `pushkey_ts`): the
    /// caller must be told it is rejected, not be sent into a void. Callers take the app's
    /// message rate first: a device row is written here, for callers without a credential too.
    func device(
        app: AppDeclaration, source: DropInDevice.Source, key: String, token: String, environment: PushEnvironment,
        registeredAt: Date? = nil
    ) async throws -> Device? {
        let ref = DropInDevice.ref(app: app.id, source: source, key: key)
        let existing = try await store.device(ref)
        if let existing {
            let refused = refused(existing, registeredAt: registeredAt)
            if refused { return nil }
            let usable = existing.pushToken != nil && existing.pushProblem == nil
            if usable && existing.pushToken == token.lowercased() && existing.environment == environment { return existing }
        }
        // Dated by the caller's registration, not by Beckon's first sight: a 410 for a token the
        // app had dropped before Beckon took over still counts (rule 8; the store takes a future
        // time as now).
        return try await store.registerDevice(DeviceRegistration(
            appID: app.id, deviceID: ref.deviceID, userID: ref.deviceID, bundleID: app.bundleID, environment: environment,
            pushToken: token, pushTokenRegisteredAt: registeredAt, capabilities: DropInDevice.capabilities))
    }

    /// Whether the key's device exists and its token was refused since it was registered; no
    /// write (a Matrix notification with counts only registers nothing).
    func isRefused(app: AppDeclaration, source: DropInDevice.Source, key: String, registeredAt: Date?) async throws -> Bool {
        guard let existing = try await store.device(DropInDevice.ref(app: app.id, source: source, key: key)) else { return false }
        return refused(existing, registeredAt: registeredAt)
    }

    /// Refused: no token left or a problem Apple reported, and not registered again since. A
    /// time the caller gives counts as now at the latest, so naming a future one revives nothing.
    private func refused(_ device: Device, registeredAt: Date?) -> Bool {
        guard device.pushToken == nil || device.pushProblem != nil else { return false }
        guard let registeredAt else { return true }
        return min(registeredAt, now()) <= device.updatedAt
    }

    /// One message for a drop-in device, durable before the caller is answered (rule 9), handed
    /// to the planner with the drop-in's push keys and badge. Its urgency is always `normal`:
    /// the app's strategy decides the push (a Matrix `prio: low` or a gorush `priority: normal`
    /// still wants one, where Beckon's `low` sends none). It expires with the app's alert
    /// lifetime unless the caller says otherwise: no sync session will ever acknowledge it.
    /// The caller has taken the app's message rate.
    func post(
        app: AppDeclaration, device: Device, payload: JSONValue, hints: NotificationHints?, expiresAt: Date?,
        extras: PushExtras
    ) async throws {
        let message = NewMessage(
            recipients: [device.userID], kind: .message, payload: Data(payload.bytes), hints: hints, urgency: .normal,
            expiresAt: expiresAt ?? now().addingTimeInterval(app.delivery.alertTimeToLive))
        _ = try await intake.append(appID: app.id, message, extras: extras)
    }

    /// `limits.push-extras-bytes`: a drop-in's keys must leave room in Apple's 4 KB payload for
    /// `aps` and Beckon's own key; past the limit the push could not be built at all (rule 2).
    func checkExtras(_ extras: PushExtras, field: String) throws(APIError) {
        let size = JSONValue.object(extras.custom).bytes.count
        guard size <= maximumPushExtrasBytes else {
            throw APIError.tooLarge("\(field): \(size) bytes in the push is more than \(maximumPushExtrasBytes) (limits.push-extras-bytes)")
        }
    }
}
