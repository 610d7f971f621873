/// Devices registering, leaving and getting their sync credential: what a device (or a drop-in
/// on its behalf) changes about itself. It refines `DeviceDirectory` as GRDB's writer refines its
/// reader: whoever registers a device also reads it back.
public protocol DeviceRegistry: DeviceDirectory {
    /// Registers a device, or replaces the registration of a device already known by
    /// (app, device id). See `DeviceRegistration` for what a registration means for tokens,
    /// cursors and credentials.
    @discardableResult
    func registerDevice(_ registration: DeviceRegistration) async throws -> Device
    /// `registerDevice` and `issueDeviceCredential` in one transaction: registration through the
    /// API answers with a credential, and one commit is half the wait of two.
    func registerDeviceIssuingCredential(_ registration: DeviceRegistration) async throws -> (device: Device, credential: String)
    /// Issues a new sync credential for the device, replacing any earlier one. The secret is in
    /// the result and nowhere else.
    func issueDeviceCredential(_ device: DeviceRef) async throws -> String
    /// Returns false if there was no such device.
    func deleteDevice(_ device: DeviceRef) async throws -> Bool
}
