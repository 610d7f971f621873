@testable import BeckonServer
import BeckonStore
import Configuration
import Testing

/// Apps are declared as `apps.ids` plus one `apps.<id>.*` scope each.
@Suite struct AppConfigurationTests {
    static let secret = "0123456789abcdef0123456789abcdef"

    static func reader(_ values: [AbsoluteConfigKey: ConfigValue]) -> ConfigReader {
        ConfigReader(provider: InMemoryProvider(values: values))
    }

    @Test func appsAreReadFromTheirScopes() throws {
        let configuration = try BeckonServerConfiguration(reading: Self.reader([
            "apps.ids": .init(.stringArray(["chat", "mail"]), isSecret: false),
            "apps.chat.bundle-id": "com.example.chat",
            "apps.chat.team-id": "TEAM",
            "apps.chat.user-token-secret": .init(.string(Self.secret), isSecret: true),
            "apps.mail.bundle-id": "com.example.mail",
            "apps.mail.team-id": "TEAM",
            "apps.mail.environments": .init(.stringArray(["production"]), isSecret: false),
            "apps.mail.user-token-secret": .init(.string(Self.secret), isSecret: true),
            "admin.token": .init(.string(Self.secret), isSecret: true),
        ]))
        #expect(configuration.apps == [
            AppDeclaration(id: "chat", bundleID: "com.example.chat", teamID: "TEAM", userTokenSecret: Self.secret),
            AppDeclaration(
                id: "mail", bundleID: "com.example.mail", teamID: "TEAM", environments: [.production],
                userTokenSecret: Self.secret),
        ])
        #expect(configuration.adminToken == Self.secret)
    }

    @Test func missingOrWeakSettingsAreNamed() {
        #expect(throws: BeckonConfigurationError.invalid(key: "apps.chat.bundle-id", "is required")) {
            try BeckonServerConfiguration(reading: Self.reader([
                "apps.ids": .init(.stringArray(["chat"]), isSecret: false),
            ]))
        }
        #expect(throws: BeckonConfigurationError.invalid(key: "apps.chat.user-token-secret", "must be at least 32 bytes")) {
            try BeckonServerConfiguration(reading: Self.reader([
                "apps.ids": .init(.stringArray(["chat"]), isSecret: false),
                "apps.chat.bundle-id": "b", "apps.chat.team-id": "t", "apps.chat.user-token-secret": "short",
            ]))
        }
        #expect(throws: BeckonConfigurationError.self) {
            try BeckonServerConfiguration(reading: Self.reader(["admin.token": "short"]))
        }
    }

    @Test func anAppsAPNsKeyAndDeliveryDefaultsAreRead() throws {
        let configuration = try BeckonServerConfiguration(reading: Self.reader([
            "apps.ids": .init(.stringArray(["chat"]), isSecret: false),
            "apps.chat.bundle-id": "com.example.chat", "apps.chat.team-id": "TEAM",
            "apps.chat.user-token-secret": .init(.string(Self.secret), isSecret: true),
            "apps.chat.apns.key-path": "/keys/AuthKey_ABC.p8", "apps.chat.apns.key-id": "ABC1234567",
            "apps.chat.delivery.strategy": "service-extension",
            "apps.chat.delivery.reconnect-window-seconds": 30,
            "apps.chat.delivery.background-pushes-per-hour": 2,
            "apps.chat.delivery.message-loc-key": "NEW_CHAT_MESSAGE",
            "apps.chat.delivery.alert-ttl-seconds": 600,
            "apps.chat.delivery.clear-all-interval-seconds": 60,
            "limits.messages-per-second": 500,
            "delivery.attempts": 3, "delivery.sends-per-app": 50, "delivery.claim-lease-seconds": 120,
        ]))
        let app = try #require(configuration.apps.first)
        #expect(app.apnsKeyPath == "/keys/AuthKey_ABC.p8")
        #expect(app.apnsKeyID == "ABC1234567")
        #expect(app.delivery.strategy == .serviceExtension)
        #expect(app.delivery.reconnectWindow == 30)
        #expect(app.delivery.backgroundPushesPerHour == 2)
        #expect(app.delivery.callTimeout == 45)  // Unset: the default.
        #expect(app.delivery.messageLocKey == "NEW_CHAT_MESSAGE")
        #expect(app.delivery.alertTimeToLive == 600)
        #expect(app.delivery.clearAllInterval == 60)
        #expect(configuration.delivery.retry.maximumAttempts == 3)
        #expect(configuration.delivery.sendsPerApp == 50)
        #expect(configuration.delivery.claimLease == 120)
        #expect(configuration.delivery.retry.backoff.base == 5)  // Unset: the default.
        #expect(configuration.limits.messagesPerSecond == 500)
        #expect(configuration.limits.registrationsPerMinute == 30)
    }

    @Test func theThrottledAlertDelayIsSecondsOrNever() throws {
        let base: [AbsoluteConfigKey: ConfigValue] = [
            "apps.ids": .init(.stringArray(["chat"]), isSecret: false),
            "apps.chat.bundle-id": "b", "apps.chat.team-id": "t",
            "apps.chat.user-token-secret": .init(.string(Self.secret), isSecret: true),
        ]
        func delay(_ value: ConfigValue?) throws -> Double? {
            var values = base
            if let value { values["apps.chat.delivery.throttled-alert-delay-seconds"] = value }
            return try #require(try BeckonServerConfiguration(reading: Self.reader(values)).apps.first).delivery.throttledAlertDelay
        }
        #expect(try delay(nil) == 60, "about a reconnect window by default")
        #expect(try delay(120) == 120)
        #expect(try delay("never") == nil)
        #expect(throws: BeckonConfigurationError.invalid(
            key: "apps.chat.delivery.throttled-alert-delay-seconds", "must be positive, or \"never\"")
        ) { try delay(0) }
    }

    @Test func badDeliverySettingsAreNamed() {
        let base: [AbsoluteConfigKey: ConfigValue] = [
            "apps.ids": .init(.stringArray(["chat"]), isSecret: false),
            "apps.chat.bundle-id": "b", "apps.chat.team-id": "t",
            "apps.chat.user-token-secret": .init(.string(Self.secret), isSecret: true),
        ]
        #expect(throws: BeckonConfigurationError.invalid(
            key: "apps.chat.delivery.strategy", "\"shout\" is not wake, service-extension, filtering or content")
        ) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging(["apps.chat.delivery.strategy": "shout"]) { $1 }))
        }
        #expect(throws: BeckonConfigurationError.self) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging(["apps.chat.apns.key-id": "ABC1234567"]) { $1 }))
        }
        #expect(throws: BeckonConfigurationError.self) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging(["limits.messages-per-second": -1]) { $1 }))
        }
    }

    /// The drop-ins' settings (docs/drop-ins.md): Matrix app ids, gorush access, and the
    /// environment of tokens a drop-in does not qualify.
    @Test func dropInSettingsAreReadAndChecked() throws {
        let base: [AbsoluteConfigKey: ConfigValue] = [
            "apps.ids": .init(.stringArray(["chat", "mail"]), isSecret: false),
            "apps.chat.bundle-id": "b", "apps.chat.team-id": "t",
            "apps.chat.user-token-secret": .init(.string(Self.secret), isSecret: true),
            "apps.mail.bundle-id": "m", "apps.mail.team-id": "t", "apps.mail.environments": .init(.stringArray(["sandbox"]), isSecret: false),
            "apps.mail.user-token-secret": .init(.string(Self.secret), isSecret: true),
        ]
        let read = try BeckonServerConfiguration(reading: Self.reader(base.merging([
            "apps.chat.matrix.app-ids": .init(.stringArray(["im.example.ios", "im.example.ios.dev"]), isSecret: false),
            "apps.chat.gorush": "key", "apps.chat.drop-in-environment": "sandbox",
        ]) { $1 }))
        #expect(read.apps[0].matrixAppIDs == ["im.example.ios", "im.example.ios.dev"])
        #expect(read.apps[0].gorush == .key && read.apps[1].gorush == .off)
        #expect(read.apps[0].defaultDropInEnvironment == .sandbox)
        #expect(read.apps[1].defaultDropInEnvironment == .sandbox, "the app's only environment")
        #expect(throws: BeckonConfigurationError.invalid(key: "apps.chat.gorush", "\"yes\" is not off, open or key")) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging(["apps.chat.gorush": "yes"]) { $1 }))
        }
        #expect(throws: BeckonConfigurationError.self) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging(["apps.mail.drop-in-environment": "production"]) { $1 }))
        }
        #expect(throws: BeckonConfigurationError.self) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging([
                "apps.chat.matrix.app-ids": .init(.stringArray(["same"]), isSecret: false),
                "apps.mail.matrix.app-ids": .init(.stringArray(["same"]), isSecret: false),
            ]) { $1 }))
        }
    }

    /// `xmpp.*`: the XEP-0357 component's settings, all or nothing.
    @Test func xmppSettingsAreReadAndChecked() throws {
        let base: [AbsoluteConfigKey: ConfigValue] = [
            "apps.ids": .init(.stringArray(["chat"]), isSecret: false),
            "apps.chat.bundle-id": "b", "apps.chat.team-id": "t",
            "apps.chat.user-token-secret": .init(.string(Self.secret), isSecret: true),
        ]
        #expect(try BeckonServerConfiguration(reading: Self.reader(base)).xmpp == nil)
        let full = base.merging([
            "xmpp.host": "xmpp.example.com", "xmpp.component-jid": "push.example.com",
            "xmpp.component-secret": .init(.string("component-secret-0123456789"), isSecret: true), "xmpp.app": "chat",
            "xmpp.open-registration": true,
        ]) { $1 }
        let read = try #require(try BeckonServerConfiguration(reading: Self.reader(full)).xmpp)
        #expect(read.port == 5347 && read.componentJID == "push.example.com" && read.appID == "chat" && read.openRegistration)
        #expect(read.secret(forNode: "xmpp-1") != read.secret(forNode: "xmpp-2"))
        #expect(throws: BeckonConfigurationError.invalid(key: "xmpp.app", "must name one of apps.ids")) {
            try BeckonServerConfiguration(reading: Self.reader(full.merging(["xmpp.app": "mail"]) { $1 }))
        }
        #expect(throws: BeckonConfigurationError.self) {
            try BeckonServerConfiguration(reading: Self.reader(full.merging(["xmpp.component-secret": "short"]) { $1 }))
        }
    }

    @Test func sqliteMemorySettingsAreReadAndChecked() throws {
        let defaults = try BeckonServerConfiguration(reading: Self.reader([:]))
        #expect(defaults.database.cacheMiB == 32 && defaults.database.mmapMiB == 0)
        let set = try BeckonServerConfiguration(reading: Self.reader(["database.cache-mib": 8, "database.mmap-mib": 256]))
        #expect(set.database.cacheMiB == 8 && set.database.mmapMiB == 256)
        #expect(throws: BeckonConfigurationError.invalid(key: "database.cache-mib", "must be at least 1")) {
            try BeckonServerConfiguration(reading: Self.reader(["database.cache-mib": 0]))
        }
        #expect(throws: BeckonConfigurationError.invalid(key: "database.mmap-mib", "must not be negative (0 disables it)")) {
            try BeckonServerConfiguration(reading: Self.reader(["database.mmap-mib": -1]))
        }
    }

    @Test func anAPNsEndpointAndClusterSettingsAreReadAndChecked() throws {
        let base: [AbsoluteConfigKey: ConfigValue] = [
            "apps.ids": .init(.stringArray(["chat"]), isSecret: false),
            "apps.chat.bundle-id": "b", "apps.chat.team-id": "t",
            "apps.chat.user-token-secret": .init(.string(Self.secret), isSecret: true),
        ]
        let key: [AbsoluteConfigKey: ConfigValue] = ["apps.chat.apns.key-path": "/k.p8", "apps.chat.apns.key-id": "ABC1234567"]
        let configuration = try BeckonServerConfiguration(reading: Self.reader(base.merging(key) { $1 }.merging([
            "apps.chat.apns.host": "127.0.0.1", "apps.chat.apns.port": 2197, "apps.chat.apns.ca-file": "/ca.pem",
            "cluster.heartbeat-seconds": 1, "cluster.node-timeout-seconds": 5, "delivery.deadline-lease-seconds": 10,
        ]) { $1 }))
        #expect(configuration.apps.first?.apnsEndpoint == APNSEndpoint(host: "127.0.0.1", port: 2197, caFile: "/ca.pem"))
        #expect(configuration.cluster.heartbeatSeconds == 1 && configuration.cluster.nodeTimeoutSeconds == 5)
        #expect(configuration.delivery.deadlineLease == 10)
        #expect(configuration.cluster.pollSeconds == 2)  // Unset: the default.

        // An endpoint checks the app's key, so it needs one; a port or CA needs a host.
        #expect(throws: BeckonConfigurationError.invalid(
            key: "apps.chat.apns.host", "needs apns.key-path and apns.key-id (the endpoint checks the app's key)")
        ) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging(["apps.chat.apns.host": "proxy"]) { $1 }))
        }
        #expect(throws: BeckonConfigurationError.invalid(key: "apps.chat.apns.host", "is required with apns.port or apns.ca-file")) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging(key) { $1 }.merging(["apps.chat.apns.port": 443]) { $1 }))
        }
        // A node is taken for dead only after it missed more than two heartbeats.
        #expect(throws: BeckonConfigurationError.invalid(
            key: "cluster.node-timeout-seconds", "must be more than twice cluster.heartbeat-seconds")
        ) {
            try BeckonServerConfiguration(reading: Self.reader(base.merging([
                "cluster.heartbeat-seconds": 5, "cluster.node-timeout-seconds": 10,
            ]) { $1 }))
        }
    }

    static func webhookApp(_ extra: [AbsoluteConfigKey: ConfigValue]) throws -> AppDeclaration {
        var values: [AbsoluteConfigKey: ConfigValue] = [
            "apps.ids": .init(.stringArray(["chat"]), isSecret: false),
            "apps.chat.bundle-id": "com.example.chat", "apps.chat.team-id": "TEAM",
            "apps.chat.user-token-secret": .init(.string(Self.secret), isSecret: true),
        ]
        values.merge(extra) { $1 }
        return try BeckonServerConfiguration(reading: Self.reader(values)).apps[0]
    }

    @Test func anAppsWebhookIsRead() throws {
        #expect(try Self.webhookApp([:]).events == nil, "no webhook: no event log")
        let app = try Self.webhookApp([
            "apps.chat.webhook.url": "https://hooks.example.com/beckon",
            "apps.chat.webhook.secret": .init(.string("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), isSecret: true),
            "apps.chat.webhook.batch-size": 50, "apps.chat.webhook.backlog": 1_000,
            "apps.chat.webhook.retry-initial-seconds": 2, "apps.chat.webhook.retry-max-seconds": 60.5,
            "apps.chat.webhook.retention-hours": 48, "apps.chat.webhook.timeout-seconds": 5,
        ])
        let events = try #require(app.events)
        #expect(events.webhook.url.description == "https://hooks.example.com/beckon" && events.webhook.batchSize == 50)
        #expect(events.backlog == 1_000 && events.retention == 48 * 3_600)
        #expect(events.webhook.retryInitial == 2 && events.webhook.retryMax == 60.5 && events.webhook.timeout == 5)
        #expect(!"\(events.webhook)".contains("whsec"), "the secret is never printed")
    }

    @Test func aWebhooksMistakesAreNamed() {
        let secret = ConfigValue(.string("a secret of at least 24 bytes"), isSecret: true)
        #expect(throws: BeckonConfigurationError.invalid(key: "apps.chat.webhook.url", "\"ftp://x\" is not an http or https URL with a host")) {
            try Self.webhookApp(["apps.chat.webhook.url": "ftp://x", "apps.chat.webhook.secret": secret])
        }
        #expect(throws: BeckonConfigurationError.self) {
            try Self.webhookApp(["apps.chat.webhook.url": "https://h.example/", "apps.chat.webhook.secret": "short"])
        }
        #expect(throws: BeckonConfigurationError.invalid(key: "apps.chat.webhook.url", "is required with apps.chat.webhook.secret")) {
            try Self.webhookApp(["apps.chat.webhook.secret": secret])
        }
        #expect(throws: BeckonConfigurationError.invalid(key: "apps.chat.webhook.batch-size", "must be 1 to 10000")) {
            try Self.webhookApp([
                "apps.chat.webhook.url": "https://h.example/", "apps.chat.webhook.secret": secret, "apps.chat.webhook.batch-size": 0,
            ])
        }
        #expect(throws: BeckonConfigurationError.invalid(key: "apps.chat.webhook.retry-max-seconds", "must be at least retry-initial-seconds")) {
            try Self.webhookApp([
                "apps.chat.webhook.url": "https://h.example/", "apps.chat.webhook.secret": secret,
                "apps.chat.webhook.retry-initial-seconds": 10, "apps.chat.webhook.retry-max-seconds": 5,
            ])
        }
    }
}
