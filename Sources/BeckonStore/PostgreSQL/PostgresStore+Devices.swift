import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore: DeviceDirectory, DeviceRegistry {
    @discardableResult
    public func registerDevice(_ registration: DeviceRegistration) async throws -> Device {
        try await register(registration, issuing: nil)
    }

    public func registerDeviceIssuingCredential(_ registration: DeviceRegistration) async throws -> (device: Device, credential: String) {
        let issued = SecretToken.issue(kind: SecretToken.deviceCredentialPrefix)
        return (try await register(registration, issuing: issued), issued.text)
    }

    /// The registration, and with `issued` the device's new credential, in one transaction.
    private func register(_ registration: DeviceRegistration, issuing issued: SecretToken.Issued?) async throws -> Device {
        let (pushToken, voipToken) = try PushTokens.checked(registration)
        guard let app = try await app(id: registration.appID) else { throw BeckonStoreError.appNotFound(registration.appID) }
        guard app.environments.contains(registration.environment) else {
            throw BeckonStoreError.invalidArgument(
                field: "environment", reason: "app \(app.id) does not accept \(registration.environment.rawValue) devices")
        }
        let capabilities = try StoreJSON.encode(registration.capabilities)
        let now = timestamp
        let (appID, deviceID) = (registration.appID, registration.deviceID)
        let logger = self.logger
        try await transaction { connection in
            // The device row, locked for the registration: two nodes registering it at once
            // take turns (the user change below must see the row as it is).
            var previousUser: String?
            for try await user in try await connection.query(
                "SELECT user_id FROM device WHERE app_id = \(appID) AND id = \(deviceID) FOR UPDATE", logger: logger
            ).decode(String.self) {
                previousUser = user
            }
            // A token moves to the install that registers it last (see DeviceRegistration).
            for (column, token) in [("push_token", pushToken), ("voip_token", voipToken)] {
                guard let token else { continue }
                try await connection.query(
                    """
                    UPDATE device SET \(unescaped: column) = NULL, \(unescaped: column)_registered_at = NULL, updated_at = \(now)
                    WHERE app_id = \(appID) AND \(unescaped: column) = \(token) AND id <> \(deviceID)
                    """, logger: logger)
            }
            let userChanged = previousUser.map { $0 != registration.userID } ?? false
            if userChanged {
                // Sequences are per user: the old cursor and the planner's state mean nothing now.
                try await connection.query(
                    "DELETE FROM device_cursor WHERE app_id = \(appID) AND device_id = \(deviceID)", logger: logger)
                try await connection.query(
                    "DELETE FROM delivery_state WHERE app_id = \(appID) AND device_id = \(deviceID)", logger: logger)
            }
            let pushRegisteredAt: Int64? = pushToken == nil ? nil : PushTokens.registeredAt(registration, now: now)
            let voipRegisteredAt: Int64? = voipToken == nil ? nil : now
            try await connection.query(
                """
                INSERT INTO device (app_id, id, user_id, bundle_id, environment, push_token, push_token_registered_at,
                                    voip_token, voip_token_registered_at, capabilities, locale, app_version, content_key,
                                    created_at, updated_at)
                VALUES (\(appID), \(deviceID), \(registration.userID), \(registration.bundleID),
                        \(registration.environment.rawValue), \(pushToken), \(pushRegisteredAt), \(voipToken),
                        \(voipRegisteredAt), \(capabilities), \(registration.locale), \(registration.appVersion),
                        \(registration.contentKey), \(now), \(now))
                ON CONFLICT (app_id, id) DO UPDATE SET
                    user_id = excluded.user_id, bundle_id = excluded.bundle_id, environment = excluded.environment,
                    push_token = excluded.push_token, push_token_registered_at = excluded.push_token_registered_at,
                    voip_token = excluded.voip_token, voip_token_registered_at = excluded.voip_token_registered_at,
                    capabilities = excluded.capabilities, locale = excluded.locale, app_version = excluded.app_version,
                    content_key = excluded.content_key, updated_at = excluded.updated_at, push_problem = NULL,
                    credential_id = CASE WHEN \(userChanged) THEN NULL ELSE device.credential_id END,
                    credential_hash = CASE WHEN \(userChanged) THEN NULL ELSE device.credential_hash END
                """, logger: logger)
            if let issued {
                try await connection.query(try Self.setCredential(issued, of: registration.ref, now: now), logger: logger)
            }
        }
        return try await device(registration.ref)!
    }

    public func device(_ device: DeviceRef) async throws -> Device? {
        try await devices(where: "WHERE app_id = \(device.appID) AND id = \(device.deviceID)").first
    }

    public func devices(of user: UserRef) async throws -> [Device] {
        try await devices(where: "WHERE app_id = \(user.appID) AND user_id = \(user.userID) ORDER BY id")
    }

    public func devices(of users: [UserRef]) async throws -> [UserRef: [Device]] {
        var found: [UserRef: [Device]] = [:]
        for user in users { found[user] = [] }
        // One round trip for the batch: the users' (app, user) pairs as two parallel arrays.
        let appIDs = users.map(\.appID)
        let userIDs = users.map(\.userID)
        for device in try await devices(
            where: "WHERE (app_id, user_id) IN (SELECT * FROM unnest(\(appIDs)::text[], \(userIDs)::text[])) ORDER BY id")
        {
            found[UserRef(appID: device.appID, userID: device.userID), default: []].append(device)
        }
        return found
    }

    public func devices(_ refs: [DeviceRef]) async throws -> [DeviceRef: Device] {
        let appIDs = refs.map(\.appID)
        let deviceIDs = refs.map(\.deviceID)
        let found = try await devices(
            where: "WHERE (app_id, id) IN (SELECT * FROM unnest(\(appIDs)::text[], \(deviceIDs)::text[]))")
        return Dictionary(uniqueKeysWithValues: found.map { ($0.ref, $0) })
    }

    public func device(appID: String, token: String, kind: PushTokenKind) async throws -> Device? {
        guard let token = try? PushTokens.normalized(token, field: "token") else { return nil }
        return try await devices(where: "WHERE app_id = \(appID) AND \(unescaped: PushTokens.column(kind)) = \(token)").first
    }

    public func deleteDevice(_ device: DeviceRef) async throws -> Bool {
        try await returnsRow("DELETE FROM device WHERE app_id = \(device.appID) AND id = \(device.deviceID) RETURNING id")
    }

    public func issueDeviceCredential(_ device: DeviceRef) async throws -> String {
        let issued = SecretToken.issue(kind: SecretToken.deviceCredentialPrefix)
        let now = timestamp
        guard try await returnsRow(try Self.setCredential(issued, of: device, now: now)) else {
            throw BeckonStoreError.deviceNotFound(appID: device.appID, deviceID: device.deviceID)
        }
        return issued.text
    }

    /// Replaces the device's credential; returns its id if the device exists.
    private static func setCredential(_ issued: SecretToken.Issued, of device: DeviceRef, now: Int64) throws -> PostgresQuery {
        try """
        UPDATE device SET credential_id = \(issued.id), credential_hash = \(issued.hash), updated_at = \(now)
        WHERE app_id = \(device.appID) AND id = \(device.deviceID) RETURNING id
        """
    }

    // MARK: Helpers

    static let deviceColumns = """
        app_id, id, user_id, bundle_id, environment, push_token, push_token_registered_at, voip_token,
        voip_token_registered_at, capabilities, locale, app_version, credential_hash IS NOT NULL AS has_credential,
        push_problem, content_key, created_at, updated_at
        """

    func devices(where clause: PostgresQuery) async throws -> [Device] {
        var query: PostgresQuery = "SELECT \(unescaped: Self.deviceColumns) FROM device"
        query.sql += " " + clause.sql
        query.binds = clause.binds
        var devices: [Device] = []
        for try await row in try await client.query(query, logger: logger) {
            devices.append(try Device(postgres: row.makeRandomAccess()))
        }
        return devices
    }

    /// The device's user, or `deviceNotFound`.
    static func requireUser(_ runner: some PostgresQueryRunner, of device: DeviceRef, logger: Logger) async throws -> String {
        for try await userID in try await runner.run(
            "SELECT user_id FROM device WHERE app_id = \(device.appID) AND id = \(device.deviceID)", logger: logger
        ).decode(String.self) {
            return userID
        }
        throw BeckonStoreError.deviceNotFound(appID: device.appID, deviceID: device.deviceID)
    }
}
