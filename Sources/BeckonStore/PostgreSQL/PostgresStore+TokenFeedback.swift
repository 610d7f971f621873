import BeckonProtocol
import Foundation
import PostgresNIO

extension PostgresStore: TokenFeedback {
    public func removeToken(_ device: DeviceRef, kind: PushTokenKind, token: String, invalidSince: Date) async throws -> Bool {
        guard let token = try? PushTokens.normalized(token, field: "token") else { return false }
        let column = PushTokens.column(kind)
        let now = timestamp
        // APNs: "Stop pushing notifications until the device registers a token with a later
        // timestamp" (docs/apns.md A.5, E.7).
        let removed = try await returnsRow(
            """
            UPDATE device SET \(unescaped: column) = NULL, \(unescaped: column)_registered_at = NULL, updated_at = \(now)
            WHERE app_id = \(device.appID) AND id = \(device.deviceID) AND \(unescaped: column) = \(token)
              AND \(unescaped: column)_registered_at <= \(invalidSince.millisecondsSince1970) RETURNING id
            """)
        if removed {
            logger.info("token removed after APNs reported it invalid", metadata: ["device": "\(device)", "kind": "\(kind)"])
        }
        return removed
    }

    public func setPushProblem(_ device: DeviceRef, problem: String?) async throws {
        try await client.query(
            "UPDATE device SET push_problem = \(problem) WHERE app_id = \(device.appID) AND id = \(device.deviceID)",
            logger: logger)
    }
}
