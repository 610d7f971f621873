import APNSCore
import BeckonDelivery
import BeckonEvents
import BeckonProtocol
import BeckonStore
import Configuration

extension AppDeclaration {
    /// Apps are read as `apps.ids` (a list of app ids) and one scope per app, `apps.<id>.*`,
    /// because swift-configuration's JSON provider reads arrays of scalars only, not arrays of
    /// objects; this shape also works from environment variables (`BECKON_APPS_IDS=chat`,
    /// `BECKON_APPS_CHAT_USER_TOKEN_SECRET=...`), which is where secrets belong.
    static func readAll(_ config: ConfigReader) throws(BeckonConfigurationError) -> [AppDeclaration] {
        let ids = config.stringArray(forKey: "apps.ids", default: [])
        guard Set(ids).count == ids.count else { throw .invalid(key: "apps.ids", "lists an app twice") }
        var apps: [AppDeclaration] = []
        for id in ids {
            guard !id.isEmpty, id != "ids", id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                throw .invalid(key: "apps.ids", "\"\(id)\" is not a valid app id (ASCII letters, digits and '-'; not \"ids\")")
            }
            apps.append(try AppDeclaration(reading: config.scoped(to: ConfigKey(["apps", id])), id: id))
        }
        let matrixIDs = apps.flatMap { $0.matrixAppIDs + $0.matrixSandboxAppIDs }
        guard Set(matrixIDs).count == matrixIDs.count else {
            throw .invalid(key: "apps.<id>.matrix.app-ids", "a Matrix app id is listed for two apps")
        }
        return apps
    }

    /// One app's scope, `apps.<id>.*`.
    init(reading app: ConfigReader, id: String) throws(BeckonConfigurationError) {
        let scope = "apps.\(id)"
        guard let bundleID = app.string(forKey: "bundle-id"), !bundleID.isEmpty else {
            throw .invalid(key: "\(scope).bundle-id", "is required")
        }
        guard let teamID = app.string(forKey: "team-id"), !teamID.isEmpty else {
            throw .invalid(key: "\(scope).team-id", "is required")
        }
        var environments: Set<PushEnvironment> = []
        for name in app.stringArray(forKey: "environments", default: ["sandbox", "production"]) {
            guard let environment = PushEnvironment(rawValue: name) else {
                throw .invalid(key: "\(scope).environments", "\"\(name)\" is not sandbox or production")
            }
            environments.insert(environment)
        }
        guard !environments.isEmpty else { throw .invalid(key: "\(scope).environments", "must not be empty") }
        guard let secret = app.string(forKey: "user-token-secret", isSecret: true) else {
            throw .invalid(key: "\(scope).user-token-secret", "is required")
        }
        guard secret.utf8.count >= AppDeclaration.minimumSecretBytes else {
            throw .invalid(key: "\(scope).user-token-secret", "must be at least \(AppDeclaration.minimumSecretBytes) bytes")
        }
        self.init(id: id, bundleID: bundleID, teamID: teamID, environments: environments, userTokenSecret: secret)
        apnsKeyPath = app.string(forKey: "apns.key-path")
        apnsKeyID = app.string(forKey: "apns.key-id")
        if (apnsKeyPath == nil) != (apnsKeyID == nil) {
            throw .invalid(key: "\(scope).apns", "set both apns.key-path and apns.key-id, or neither (the emulator)")
        }
        if let host = app.string(forKey: "apns.host") {
            guard apnsKeyPath != nil else {
                throw .invalid(key: "\(scope).apns.host", "needs apns.key-path and apns.key-id (the endpoint checks the app's key)")
            }
            let port = app.int(forKey: "apns.port", default: 443)
            guard !host.isEmpty, (1...65535).contains(port) else {
                throw .invalid(key: "\(scope).apns.port", "must be 1-65535, with a non-empty apns.host")
            }
            apnsEndpoint = APNSEndpoint(host: host, port: port, caFile: app.string(forKey: "apns.ca-file"))
        } else if app.int(forKey: "apns.port") != nil || app.string(forKey: "apns.ca-file") != nil {
            throw .invalid(key: "\(scope).apns.host", "is required with apns.port or apns.ca-file")
        }
        delivery = try DeliveryPolicy(reading: app.scoped(to: "delivery"), scope: "\(scope).delivery")
        matrixAppIDs = app.stringArray(forKey: "matrix.app-ids", default: [])
        matrixSandboxAppIDs = app.stringArray(forKey: "matrix.sandbox-app-ids", default: [])
        if !matrixSandboxAppIDs.isEmpty, !environments.contains(.sandbox) {
            throw .invalid(key: "\(scope).matrix.sandbox-app-ids", "the app does not take sandbox tokens (environments)")
        }
        if let name = app.string(forKey: "gorush") {
            guard let access = GorushAccess(rawValue: name) else {
                throw .invalid(key: "\(scope).gorush", "\"\(name)\" is not off, open or key")
            }
            gorush = access
        }
        events = try AppEvents(reading: app.scoped(to: "webhook"), appID: id, scope: "\(scope).webhook")
        if let name = app.string(forKey: "drop-in-environment") {
            guard let environment = PushEnvironment(rawValue: name), environments.contains(environment) else {
                throw .invalid(key: "\(scope).drop-in-environment", "\"\(name)\" is not one of the app's environments")
            }
            dropInEnvironment = environment
        }
    }
}
