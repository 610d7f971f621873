import BeckonProtocol

/// The registered devices, read: by reference, by user, by token. What planning and sending
/// need to know where a push goes, without the right to change a registration
/// (`DeviceRegistry` writes).
public protocol DeviceDirectory: Sendable {
    func device(_ device: DeviceRef) async throws -> Device?
    func devices(of user: UserRef) async throws -> [Device]
    /// The devices of several users, read at once (the delivery planner's batches).
    func devices(of users: [UserRef]) async throws -> [UserRef: [Device]]
    /// Several devices by reference, read at once; missing ones are left out.
    func devices(_ refs: [DeviceRef]) async throws -> [DeviceRef: Device]
    /// The device holding `token` (lowercase or uppercase hex) of that kind in the app.
    func device(appID: String, token: String, kind: PushTokenKind) async throws -> Device?
}
