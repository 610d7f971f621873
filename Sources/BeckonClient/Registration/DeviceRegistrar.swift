import BeckonJSON
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Registers this install with Beckon and keeps its tokens there current: the first call
/// registers (`POST /v1/devices`, with a user token from the app's backend) and keeps the
/// credential in `credentials`; every later one restates the tokens with that credential
/// (`PUT /v1/devices/{id}`), and registers anew if the server no longer knows it (401, 404).
///
/// Call `remoteTokenChanged` from `didRegisterForRemoteNotificationsWithDeviceToken` (iOS calls
/// it at every launch after `registerForRemoteNotifications`, and when the token changes) and
/// `voipTokenChanged` from PushKit's `didUpdate`/`didInvalidatePushTokenFor`. Calls are serialized;
/// a failed one is retried by the next.
public actor DeviceRegistrar {
    /// The server's base URL.
    public let baseURL: URL
    /// What it tells the server about this install.
    public let registration: DeviceRegistration
    let credentials: any CredentialStore
    /// Where a minted install id is kept, when `registration.deviceID` is empty.
    let installationIDs: (any CredentialStore)?
    private var deviceID: String?
    let userToken: @Sendable () async throws -> String
    let timeout: TimeInterval
    private var remoteToken: Data?
    private var voipToken: Data?

    /// `userToken`: asks the app's backend for a user token (an HS256 JWT it signs for this user,
    /// docs/client-sdk.md step 4); called only to register.
    /// `installationIDs`: where to keep the install's id when `registration.deviceID` is empty
    /// (read, or minted and kept, at the first call: never before the first unlock).
    public init(
        baseURL: URL, registration: DeviceRegistration, credentials: any CredentialStore,
        installationIDs: (any CredentialStore)? = nil, timeout: TimeInterval = 20,
        userToken: @escaping @Sendable () async throws -> String
    ) {
        self.baseURL = baseURL
        self.registration = registration
        self.credentials = credentials
        self.installationIDs = installationIDs
        precondition(!registration.deviceID.isEmpty || installationIDs != nil, "a device id, or a store to keep one in")
        self.deviceID = registration.deviceID.isEmpty ? nil : registration.deviceID
        self.timeout = timeout
        self.userToken = userToken
    }

    /// The APNs token iOS gave the app (nil: it has none, after `unregisterForRemoteNotifications`).
    public func remoteTokenChanged(_ token: Data?) async throws(RegistrationError) {
        remoteToken = token
        try await sync()
    }

    /// The PushKit VoIP token (nil: invalidated).
    public func voipTokenChanged(_ token: Data?) async throws(RegistrationError) {
        voipToken = token
        try await sync()
    }

    /// Tells the server the tokens and fields as they are now: an update with the credential
    /// kept, or a registration when there is none or the server no longer knows it.
    /// Before the first unlock nothing can be read, so nothing is sent (`credentialUnavailable`):
    /// the next token, after the unlock, registers.
    public func sync() async throws(RegistrationError) {
        let deviceID = try resolveDeviceID()
        let kept: String?
        do { kept = try credentials.load() } catch { throw .credentialUnavailable }
        if let credential = kept, !credential.isEmpty {
            let (status, body) = try await send(
                "PUT", path: ["v1", "devices", deviceID], bearer: credential, body: fields(deviceID: nil))
            switch status {
            case 200: return
            case 401, 404: break  // Replaced, revoked or deleted: register anew.
            default: throw .refused(status: status, code: Self.code(body))
            }
        }
        let token: String
        do { token = try await userToken() } catch { throw .userTokenRefused }
        let (status, body) = try await send("POST", path: ["v1", "devices"], bearer: token, body: fields(deviceID: deviceID))
        guard status == 201 else {
            throw status == 401 ? .userTokenRefused : .refused(status: status, code: Self.code(body))
        }
        guard let credential = (try? JSONParser.parse(body))?["credential"]?.stringValue else {
            throw .refused(status: status, code: nil)
        }
        do { try credentials.save(credential) } catch { throw .credentialNotSaved }
    }

    /// The install's id: given, or kept in `installationIDs`, or minted and kept there now.
    private func resolveDeviceID() throws(RegistrationError) -> String {
        if let deviceID { return deviceID }
        guard let installationIDs else { preconditionFailure("checked in init") }
        let kept: String?
        do { kept = try installationIDs.load() } catch { throw .credentialUnavailable }
        let id = kept ?? UUID().uuidString.lowercased()
        if kept == nil {
            do { try installationIDs.save(id) } catch { throw .credentialNotSaved }
        }
        deviceID = id
        return id
    }

    /// The JSON of `DeviceRegistration` (with `deviceID`) or `DeviceUpdate` (openapi.yaml): the
    /// tokens always restated.
    private func fields(deviceID: String?) -> JSONValue {
        var tokens: [String: JSONValue] = [:]
        if let remoteToken { tokens["remote"] = .string(Self.hex(remoteToken)) }
        if let voipToken { tokens["voip"] = .string(Self.hex(voipToken)) }
        var object: [String: JSONValue] = ["tokens": .object(tokens), "capabilities": registration.capabilities.json]
        if let deviceID {
            object["deviceId"] = .string(deviceID)
            object["bundleId"] = .string(registration.bundleID)
            object["environment"] = .string(registration.environment)
        }
        if let locale = registration.locale { object["locale"] = .string(locale) }
        if let appVersion = registration.appVersion { object["appVersion"] = .string(appVersion) }
        if let key = registration.contentKey { object["contentKey"] = .string(key.base64EncodedString()) }
        return .object(object)
    }

    private func send(_ method: String, path: [String], bearer: String, body: JSONValue) async throws(RegistrationError)
        -> (Int, [UInt8])
    {
        let url = path.reduce(baseURL) { $0.appendingPathComponent($1) }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body.bytes)
        do {
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, Array(data))
        } catch {
            throw .transport(String(describing: error))
        }
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    static func code(_ body: [UInt8]) -> String? { (try? JSONParser.parse(body))?["error"]?["code"]?.stringValue }
}
