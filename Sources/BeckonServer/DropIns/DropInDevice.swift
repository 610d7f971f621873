import BeckonDelivery
import BeckonJSON
import BeckonProtocol
import BeckonStore
import Crypto
import Foundation

/// A device a drop-in names by its own protocol's key (a Matrix pushkey, a gorush token), not by
/// a registration of Beckon's: registered implicitly the first time, so that its pushes go
/// through the planner and the outbox like any other (throttling, escalation, Apple's 410s and
/// wake figures, docs/drop-ins.md).
enum DropInDevice {
    enum Source: String, Sendable {
        case matrix, gorush, xmpp
    }

    /// A stable device id from the key, never the key itself: ids appear in logs and on the
    /// status page, and a pushkey or token is a secret (never logged in full). In base32, so
    /// that the id does not look like a token in hex either (scripts/scan-logs.py).
    static func ref(app: String, source: Source, key: String) -> DeviceRef {
        let digest = SHA256.hash(data: Data("\(source.rawValue)\u{0}\(key)".utf8))
        return DeviceRef(appID: app, deviceID: "\(source.rawValue)-" + base32(Array(digest.prefix(15))))
    }

    /// RFC 4648 base32, lowercase, for a whole number of 5-byte groups.
    private static func base32(_ bytes: [UInt8]) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var out = "", buffer = 0, bits = 0
        for byte in bytes {
            buffer = buffer << 8 | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(alphabet[(buffer >> bits) & 31])
            }
        }
        return out
    }

    /// Every capability, so that the app's own strategy (`apps.<id>.delivery.strategy`) decides
    /// what its drop-in devices get.
    static let capabilities = DeviceCapabilities(
        notificationServiceExtension: true, filtering: true, backgroundModes: [DeliveryPolicy.remoteNotificationMode])

    /// A pushkey as Sygnal's iOS clients register it (the APNs token in base64, padded or not,
    /// standard or URL alphabet) as hex; nil unless it is 8 to 100 bytes (Apple's tokens are 32,
    /// and may grow).
    static func hexToken(fromBase64 text: String) -> String? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let bytes = Data(base64Encoded: base64), (8...100).contains(bytes.count) else { return nil }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }
}

extension BeckonAPI {
    /// The device for a drop-in's key with `token`, registered or brought up to date; nil when
    /// Apple refused that token (410 and the like) after the device was last registered and the
    /// caller has not re-registered since (`registeredAt`, e.g. Matrix `pushkey_ts`): the
    /// caller must be told it is rejected, not be sent into a void. Callers take the app's
    /// message rate first: a device row is written here, for callers without a credential too.
    func dropInDevice(
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
    func dropInRefused(app: AppDeclaration, source: DropInDevice.Source, key: String, registeredAt: Date?) async throws -> Bool {
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
    func postDropIn(
        app: AppDeclaration, device: Device, payload: JSONValue, hints: NotificationHints?, expiresAt: Date?,
        extras: PushExtras
    ) async throws {
        let message = NewMessage(
            recipients: [device.userID], kind: .message, payload: Data(payload.bytes), hints: hints, urgency: .normal,
            expiresAt: expiresAt ?? now().addingTimeInterval(app.delivery.alertTimeToLive))
        guard let appended = try await store.appendMessages(appID: app.id, [message]).first else { return }
        events.submit(.messageAppended(appended.message, users: [device.user], extras: extras))
    }

    /// `limits.push-extras-bytes`: a drop-in's keys must leave room in Apple's 4 KB payload for
    /// `aps` and Beckon's own key; past the limit the push could not be built at all (rule 2).
    func checkExtras(_ extras: PushExtras, field: String) throws(APIError) {
        let size = JSONValue.object(extras.custom).bytes.count
        guard size <= configuration.maximumPushExtrasBytes else {
            throw APIError.tooLarge("\(field): \(size) bytes in the push is more than \(configuration.maximumPushExtrasBytes) (limits.push-extras-bytes)")
        }
    }
}
