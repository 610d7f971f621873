import BeckonStore

/// A device as the API shows it.
struct DeviceBody: Encodable {
    struct Tokens: Encodable {
        var remote: String?
        var voip: String?
    }
    struct Capabilities: Encodable {
        var notificationServiceExtension: Bool
        var filtering: Bool
        var backgroundModes: [String]
    }

    var appId: String
    var deviceId: String
    var userId: String
    var bundleId: String
    var environment: String
    var tokens: Tokens
    var capabilities: Capabilities
    var locale: String?
    var appVersion: String?
    var createdAt: String
    var updatedAt: String

    init(_ device: Device) {
        appId = device.appID
        deviceId = device.id
        userId = device.userID
        bundleId = device.bundleID
        environment = device.environment.rawValue
        tokens = Tokens(remote: device.pushToken, voip: device.voipToken)
        capabilities = Capabilities(
            notificationServiceExtension: device.capabilities.notificationServiceExtension,
            filtering: device.capabilities.filtering,
            backgroundModes: device.capabilities.backgroundModes.sorted())
        locale = device.locale
        appVersion = device.appVersion
        createdAt = APIJSON.timestamp(device.createdAt)
        updatedAt = APIJSON.timestamp(device.updatedAt)
    }
}

/// The answer to a registration: the device, and its sync credential, shown this once.
struct RegisteredDeviceBody: Encodable {
    var device: DeviceBody
    var credential: String
}
