import BeckonProtocol
import BeckonJSON
import Foundation
import BeckonStore

/// The body of `POST /v1/devices` and `PUT /v1/devices/{deviceId}`, checked field by field.
///
/// Tokens come either as `tokens: {remote, voip}` (hex) or as RFC 8599 push parameters
/// (`pushParameters`, see `PushParameters`), not both.
struct DeviceRequest {
    var deviceID: String?
    var bundleID: String?
    var environment: PushEnvironment?
    /// Whether the body stated its tokens (`tokens` or `pushParameters`); absent tokens inside
    /// a stated set mean "none".
    var statesTokens: Bool
    var remoteToken: String?
    var voipToken: String?
    var pushParameters: PushParameters?
    var capabilities: DeviceCapabilities?
    var locale: String?
    var appVersion: String?
    /// `POST` only: the device's current credential, which proves the right to move a device
    /// registered to another user (sign-out and sign-in on one phone).
    var previousCredential: String?
    /// `contentKey`: base64 of 32 bytes (AES-256-GCM) for content pushes sealed to the extension.
    var contentKey: Data?

    static let fields: Set<String> = [
        "deviceId", "bundleId", "environment", "tokens", "pushParameters", "capabilities", "locale", "appVersion",
        "previousCredential", "contentKey",
    ]

    init(_ body: JSONValue) throws(APIError) {
        let reader = try JSONObjectReader(body, path: "", allowed: Self.fields)
        deviceID = try reader.identifier("deviceId")
        bundleID = try reader.string("bundleId", maxLength: 255)
        environment = try reader.enumeration("environment", PushEnvironment.self)
        locale = try reader.string("locale", maxLength: 64)
        appVersion = try reader.string("appVersion", maxLength: 64)
        previousCredential = try reader.string("previousCredential", maxLength: 255)
        if let text = try reader.string("contentKey", maxLength: 64) {
            guard let key = Data(base64Encoded: text), key.count == 32 else {
                throw .invalidField("contentKey", "must be base64 of 32 random bytes (an AES-256 key)")
            }
            contentKey = key
        }

        if let capabilities = try reader.object(
            "capabilities", allowed: ["notificationServiceExtension", "filtering", "backgroundModes"])
        {
            self.capabilities = DeviceCapabilities(
                notificationServiceExtension: try capabilities.bool("notificationServiceExtension") ?? false,
                filtering: try capabilities.bool("filtering") ?? false,
                backgroundModes: Set(try capabilities.stringArray("backgroundModes", maxCount: 32, maxLength: 64) ?? []))
        }

        let tokens = try reader.object("tokens", allowed: ["remote", "voip"])
        let parameters = try reader.object("pushParameters", allowed: ["pn-provider", "pn-param", "pn-prid"])
        if tokens != nil && parameters != nil {
            throw .invalidField("pushParameters", "give either tokens or pushParameters, not both")
        }
        statesTokens = tokens != nil || parameters != nil
        if let tokens {
            remoteToken = try Self.hexToken(tokens, "remote")
            voipToken = try Self.hexToken(tokens, "voip")
        }
        if let parameters {
            let parsed = try PushParameters(
                provider: parameters.requiredString("pn-provider"), param: parameters.requiredString("pn-param"),
                prid: parameters.requiredString("pn-prid", maxLength: 4096), path: "pushParameters")
            pushParameters = parsed
            remoteToken = parsed.remoteToken
            voipToken = parsed.voipToken
        }
    }

    /// APNs device tokens are hex (32 bytes today; Apple warns they may grow, so only the form is
    /// checked, not the length; docs/apns.md E.7).
    private static func hexToken(_ reader: JSONObjectReader, _ key: String) throws(APIError) -> String? {
        guard let token = try reader.string(key, maxLength: 1024) else { return nil }
        guard !token.isEmpty, token.count % 2 == 0, token.allSatisfy(\.isHexDigit) else {
            throw .invalidField(reader.name(key), "must be hex (an even number of 0-9a-f)")
        }
        return token
    }

    /// The registration this request makes for `userID` on `app`, given the device's current
    /// registration if any (`PUT` keeps what it does not restate).
    func registration(app: AppDeclaration, deviceID: String, userID: String, previous: Device?) throws(APIError)
        -> DeviceRegistration
    {
        if let pushParameters {
            guard pushParameters.teamID == app.teamID else {
                throw .invalidField("pushParameters.pn-param", "team id \(pushParameters.teamID) is not the app's")
            }
            guard pushParameters.bundleID == app.bundleID else {
                throw .invalidField("pushParameters.pn-param", "bundle id \(pushParameters.bundleID) is not the app's")
            }
            if let environment, let implied = pushParameters.environment, environment != implied {
                throw .invalidField("environment", "contradicts pushParameters.pn-provider apns.dev (sandbox)")
            }
        }
        guard let bundleID = bundleID ?? pushParameters?.bundleID ?? previous?.bundleID else {
            throw .invalidField("bundleId", "is required")
        }
        guard bundleID == app.bundleID else {
            throw .invalidField("bundleId", "must be the app's bundle id, \(app.bundleID)")
        }
        // apns (no .dev) says production only when nothing more specific was given.
        let stated = environment ?? pushParameters?.environment ?? (pushParameters != nil ? .production : nil)
        guard let environment = stated ?? previous?.environment else {
            throw .invalidField("environment", "is required (sandbox or production)")
        }
        guard app.environments.contains(environment) else {
            throw .invalidField("environment", "app \(app.id) does not accept \(environment.rawValue) devices")
        }
        // A token presented counts as registered now, which decides whether APNs' 410 still
        // applies to it (docs/apns.md E.7, "410 race"); so tokens are never carried over from
        // the previous registration: the device states them every time.
        guard statesTokens else {
            throw .invalidField("tokens", "is required (give {} for a device without tokens)")
        }
        return DeviceRegistration(
            appID: app.id, deviceID: deviceID, userID: userID, bundleID: bundleID, environment: environment,
            pushToken: remoteToken, voipToken: voipToken,
            capabilities: capabilities ?? previous?.capabilities ?? DeviceCapabilities(),
            locale: locale ?? previous?.locale, appVersion: appVersion ?? previous?.appVersion,
            contentKey: contentKey ?? previous?.contentKey)
    }
}
