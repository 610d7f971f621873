import BeckonStore
import Crypto
import Foundation

/// Who a request is, from its `Authorization` header: an app API key, a device credential or the
/// admin token. One place for the API's routes and the sync gateway's upgrade, so both answer
/// the same 401 with the same words. (User tokens are checked where devices register,
/// `UserTokenVerifier`, since they name an app and a user rather than a stored credential.)
struct Authenticator: Sendable {
    let store: any CredentialVerifier
    /// The admin token's SHA-256: compared in constant time, and the token itself is not kept.
    let adminTokenHash: [UInt8]?
    let now: @Sendable () -> Date
    /// API keys seen in the last seconds: a backend's every post need not read the database.
    let apiKeys = APIKeyCache()

    init(store: any CredentialVerifier, adminToken: String?, now: @escaping @Sendable () -> Date) {
        self.store = store
        self.adminTokenHash = adminToken.map { Array(SHA256.hash(data: Data($0.utf8))) }
        self.now = now
    }

    /// The API key presented. 401 if there is none or it is unknown or revoked.
    func apiKey(_ authorization: String?) async throws -> AppAPIKey {
        guard let credential = BearerCredential(authorization: authorization) else {
            throw APIError.unauthorized("this route needs an app API key: Authorization: Bearer bk_…")
        }
        guard case .apiKey(let secret) = credential else {
            throw APIError.unauthorized("this route takes an app API key (bk_…), not another credential")
        }
        if let key = apiKeys.key(for: secret, now: now()) { return key }
        guard let key = try await store.authenticateAPIKey(secret) else {
            throw APIError.unauthorized("the API key is not valid or was revoked")
        }
        apiKeys.remember(key, for: secret, now: now())
        return key
    }

    /// The device whose credential is presented. 401 if none or not current.
    func device(_ authorization: String?) async throws -> Device {
        guard let credential = BearerCredential(authorization: authorization) else {
            throw APIError.unauthorized("this route needs a device credential: Authorization: Bearer bkd_…")
        }
        guard case .device(let secret) = credential else {
            throw APIError.unauthorized("this route takes a device credential (bkd_…), not another credential")
        }
        guard let device = try await store.authenticateDevice(credential: secret) else {
            throw APIError.unauthorized("the device credential is not valid (replaced, or the device was deleted)")
        }
        return device
    }

    /// Checks the admin token in constant time (hashes first, so even the length does not leak).
    func admin(_ authorization: String?) throws(APIError) {
        guard let adminTokenHash else {
            throw .forbidden("the admin API is disabled: set admin.token to enable it")
        }
        guard let header = authorization, header.lowercased().hasPrefix("bearer ") else {
            throw .unauthorized("this route needs the admin token: Authorization: Bearer <admin.token>")
        }
        let presented = SHA256.hash(data: Data(header.dropFirst("bearer ".count).utf8))
        guard Self.constantTimeEquals(Array(presented), adminTokenHash) else {
            throw .unauthorized("the admin token is wrong")
        }
    }

    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
