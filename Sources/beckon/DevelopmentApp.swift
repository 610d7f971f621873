import BeckonJSON
import BeckonServer
import BeckonStore
import Crypto
import Foundation

/// What `beckon serve` runs when no app is configured: a development app, `dev`, on the built-in
/// APNs emulator, so that a first run leads somewhere. Its secrets are made once and kept beside
/// the database (`<database>.dev.json`, readable by its owner only), where `beckon try` finds
/// them. Only a server on loopback gets it: a reachable server never serves an app nobody declared.
struct DevelopmentApp: Codable {
    static let id = "dev"
    static let bundleID = "com.example.dev"
    static let teamID = "DEVTEAM000"

    var url: String
    var emulatorControl: String
    var adminToken: String
    var userTokenSecret: String
    var apiKey: String?

    static func credentialsPath(database: String) -> String { database + ".dev.json" }

    /// Declares the app (and an admin token, and the emulator's control API) on `settings` when it
    /// has no app, listens on loopback and keeps its data in SQLite. Returns the app and whether
    /// its secrets were made just now; nil when the server is configured, or reachable.
    static func prepare(_ settings: inout BeckonServerConfiguration) throws -> (app: DevelopmentApp, isNew: Bool)? {
        guard settings.apps.isEmpty, settings.database.url == nil,
            ["127.0.0.1", "::1", "localhost"].contains(settings.http.host)
        else { return nil }
        let path = credentialsPath(database: settings.database.path)
        let controlPort = settings.emulator.controlPort ?? settings.http.port + 1
        var app: DevelopmentApp
        let isNew: Bool
        if let data = FileManager.default.contents(atPath: path) {
            app = try JSONValueDecoder().decode(DevelopmentApp.self, from: data)
            isNew = false
        } else {
            app = DevelopmentApp(
                url: "", emulatorControl: "", adminToken: randomSecret(), userTokenSecret: randomSecret(), apiKey: nil)
            isNew = true
        }
        app.url = "http://\(settings.http.host):\(settings.http.port)"
        app.emulatorControl = "http://127.0.0.1:\(controlPort)"
        app.adminToken = settings.adminToken ?? app.adminToken
        settings.adminToken = app.adminToken
        settings.emulator.controlPort = controlPort
        settings.apps = [AppDeclaration(id: id, bundleID: bundleID, teamID: teamID, userTokenSecret: app.userTokenSecret)]
        return (app, isNew)
    }

    /// Issues the app's API key unless the file holds one the store still accepts (a deleted
    /// database forgets it), then saves the file. Returns whether a key was issued.
    mutating func ensureAPIKey(store: any (CredentialVerifier & APIKeyRegistry), database: String) async throws -> Bool {
        var current = false
        if let apiKey { current = try await store.authenticateAPIKey(apiKey) != nil }
        if !current { apiKey = try await store.createAPIKey(appID: Self.id, name: "development").secret }
        try save(database: database)
        return !current
    }

    private func save(database: String) throws {
        let path = Self.credentialsPath(database: database)
        // Created readable by its owner only, before any secret is written into it.
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: try JSONStreamEncoder(options: .prettyPrinted).encode(self))
        try handle.close()
    }

    /// What a newcomer needs, printed to the terminal (not the log). The secrets themselves only
    /// the first time; afterwards, where they are.
    func banner(database: String, showSecrets: Bool) -> String {
        let file = Self.credentialsPath(database: database)
        var lines = [
            "",
            "No app is configured, so this server runs the development app \"\(Self.id)\" (bundle id \(Self.bundleID))",
            "on the built-in APNs emulator. Configure apps.ids for a real one (README, \"Configuration\").",
        ]
        if showSecrets {
            lines += [
                "Its secrets, shown this once and kept in \(file) (mode 0600):",
                "  admin token        \(adminToken)",
                "  API key            \(apiKey ?? "")",
                "  user-token secret  \(userTokenSecret)",
            ]
        } else {
            lines.append("Its admin token, API key and user-token secret are in \(file).")
        }
        let credentials = file == Self.credentialsPath(database: "beckon.sqlite") ? "" : " --credentials \(file)"
        lines += [
            "Next:",
            "  beckon try\(credentials)",
            "      registers a device, posts it a message, and shows the push the emulator received",
            "  beckon user-token --user alice\(credentials)",
            "      a user token, to register devices yourself (POST /v1/devices)",
            "  curl \(emulatorControl)/devices",
            "      the emulated devices and what each received (docs/apns-emulator.md)",
            "",
        ]
        return lines.joined(separator: "\n")
    }

    static func randomSecret() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }.map { String(format: "%02x", $0) }.joined()
    }
}
