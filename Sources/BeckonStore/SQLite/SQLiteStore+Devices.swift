import BeckonProtocol
import Foundation
import GRDB

extension SQLiteStore: DeviceDirectory, DeviceRegistry {
    @discardableResult
    public func registerDevice(_ registration: DeviceRegistration) async throws -> Device {
        try await register(registration, issuing: nil)
    }

    public func registerDeviceIssuingCredential(_ registration: DeviceRegistration) async throws -> (device: Device, credential: String) {
        let issued = SecretToken.issue(kind: SecretToken.deviceCredentialPrefix)
        return (try await register(registration, issuing: issued), issued.text)
    }

    /// The registration, and with `issued` the device's new credential, in one piece of a
    /// group commit.
    private func register(_ registration: DeviceRegistration, issuing issued: SecretToken.Issued?) async throws -> Device {
        let (pushToken, voipToken) = try PushTokens.checked(registration)
        let capabilities = try StoreJSON.encode(registration.capabilities)
        let now = timestamp
        let logger = self.logger

        // Shares commits with concurrent writes (GroupCommit): one fsync per registration made
        // registering a fleet a matter of minutes.
        return try await groupCommit.write { db in
            guard let app = try Self.fetchApp(db, id: registration.appID) else {
                throw BeckonStoreError.appNotFound(registration.appID)
            }
            guard app.environments.contains(registration.environment) else {
                throw BeckonStoreError.invalidArgument(
                    field: "environment", reason: "app \(app.id) does not accept \(registration.environment.rawValue) devices")
            }
            let previous = try Self.fetchDevice(db, registration.ref)

            // A token moves to the install that registers it last (see DeviceRegistration).
            for (column, token) in [("push_token", pushToken), ("voip_token", voipToken)] {
                guard let token else { continue }
                try db.cachedStatement(sql: """
                    UPDATE device SET \(column) = NULL, \(column)_registered_at = NULL, updated_at = ?
                    WHERE app_id = ? AND \(column) = ? AND id <> ?
                    """
                ).execute(arguments: [now, registration.appID, token, registration.deviceID])
                if db.changesCount > 0 {
                    logger.info("token moved to another device", metadata: [
                        "device": "\(registration.ref)", "token": "\(column)",
                    ])
                }
            }

            let userChanged = previous.map { $0.userID != registration.userID } ?? false
            if userChanged {
                // Sequences are per user: the old cursor means nothing in the new mailbox, and the
                // old credential must not open it.
                try db.execute(
                    sql: "DELETE FROM device_cursor WHERE app_id = ? AND device_id = ?",
                    arguments: [registration.appID, registration.deviceID])
                // Nor may the planner's state (owed pushes name the previous user's messages).
                try db.execute(
                    sql: "DELETE FROM delivery_state WHERE app_id = ? AND device_id = ?",
                    arguments: [registration.appID, registration.deviceID])
            }

            try db.cachedStatement(sql: """
                INSERT INTO device (app_id, id, user_id, bundle_id, environment,
                                    push_token, push_token_registered_at, voip_token, voip_token_registered_at,
                                    capabilities, locale, app_version, content_key, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app_id, id) DO UPDATE SET
                    user_id = excluded.user_id, bundle_id = excluded.bundle_id,
                    environment = excluded.environment,
                    push_token = excluded.push_token, push_token_registered_at = excluded.push_token_registered_at,
                    voip_token = excluded.voip_token, voip_token_registered_at = excluded.voip_token_registered_at,
                    capabilities = excluded.capabilities, locale = excluded.locale,
                    app_version = excluded.app_version, content_key = excluded.content_key,
                    updated_at = excluded.updated_at,
                    push_problem = NULL,
                    credential_id = CASE WHEN ? THEN NULL ELSE credential_id END,
                    credential_hash = CASE WHEN ? THEN NULL ELSE credential_hash END
                """
            ).execute(arguments: [
                registration.appID, registration.deviceID, registration.userID, registration.bundleID,
                registration.environment.rawValue,
                pushToken, pushToken == nil ? nil : PushTokens.registeredAt(registration, now: now),
                voipToken, voipToken == nil ? nil : now,
                capabilities, registration.locale, registration.appVersion, registration.contentKey, now, now,
                userChanged, userChanged,
            ])
            if let issued { try Self.setCredential(db, issued, of: registration.ref, now: now) }
            return try Self.fetchDevice(db, registration.ref)!
        }
    }

    public func device(_ device: DeviceRef) async throws -> Device? {
        try await writer.read { db in try Self.fetchDevice(db, device) }
    }

    public func devices(of user: UserRef) async throws -> [Device] {
        try await devices(of: [user])[user] ?? []
    }

    public func devices(of users: [UserRef]) async throws -> [UserRef: [Device]] {
        guard !users.isEmpty else { return [:] }
        return try await writer.read { db in
            var found = Dictionary(users.map { ($0, [Device]()) }, uniquingKeysWith: { first, _ in first })
            try Self.forEachRow(
                db, select: "SELECT \(Device.columns) FROM device WHERE app_id = ? AND user_id IN",
                keys: users.lazy.map { ($0.appID, $0.userID) }
            ) { row in
                let device = try Device(row: row)
                found[device.user, default: []].append(device)
            }
            // Sorted here, not by `ORDER BY id`: with it SQLite prefers the primary key's index
            // and walks every device of the app instead of the users' few (device_user).
            return found.mapValues { $0.sorted { $0.id < $1.id } }
        }
    }

    public func devices(_ refs: [DeviceRef]) async throws -> [DeviceRef: Device] {
        guard !refs.isEmpty else { return [:] }
        return try await writer.read { db in
            var found: [DeviceRef: Device] = [:]
            try Self.forEachRow(
                db, select: "SELECT \(Device.columns) FROM device WHERE app_id = ? AND id IN",
                keys: refs.lazy.map { ($0.appID, $0.deviceID) }
            ) { row in
                let device = try Device(row: row)
                found[device.ref] = device
            }
            return found
        }
    }

    public func device(appID: String, token: String, kind: PushTokenKind) async throws -> Device? {
        guard let token = try? PushTokens.normalized(token, field: "token") else { return nil }
        let column = PushTokens.column(kind)
        return try await writer.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Device.columns) FROM device WHERE app_id = ? AND \(column) = ?", arguments: [appID, token]
            ).map(Device.init(row:))
        }
    }

    public func deleteDevice(_ device: DeviceRef) async throws -> Bool {
        try await writer.write { db in
            try db.execute(
                sql: "DELETE FROM device WHERE app_id = ? AND id = ?", arguments: [device.appID, device.deviceID])
            return db.changesCount > 0
        }
    }

    public func issueDeviceCredential(_ device: DeviceRef) async throws -> String {
        let issued = SecretToken.issue(kind: SecretToken.deviceCredentialPrefix)
        let now = timestamp
        try await groupCommit.write { db in try Self.setCredential(db, issued, of: device, now: now) }
        return issued.text
    }

    private static func setCredential(_ db: Database, _ issued: SecretToken.Issued, of device: DeviceRef, now: Int64) throws {
        try db.cachedStatement(
            sql: "UPDATE device SET credential_id = ?, credential_hash = ?, updated_at = ? WHERE app_id = ? AND id = ?"
        ).execute(arguments: [issued.id, issued.hash, now, device.appID, device.deviceID])
        if db.changesCount == 0 {
            throw BeckonStoreError.deviceNotFound(appID: device.appID, deviceID: device.deviceID)
        }
    }

    // MARK: Helpers

    static func fetchDevice(_ db: Database, _ device: DeviceRef) throws -> Device? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(Device.columns) FROM device WHERE app_id = ? AND id = ?"),
            arguments: [device.appID, device.deviceID]
        ).map(Device.init(row:))
    }

    /// The device's user, or `deviceNotFound`.
    static func requireUser(_ db: Database, of device: DeviceRef) throws -> String {
        guard let userID = try String.fetchOne(
            db.cachedStatement(sql: "SELECT user_id FROM device WHERE app_id = ? AND id = ?"),
            arguments: [device.appID, device.deviceID])
        else { throw BeckonStoreError.deviceNotFound(appID: device.appID, deviceID: device.deviceID) }
        return userID
    }
}
