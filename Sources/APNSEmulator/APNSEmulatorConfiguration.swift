import APNSCore
import Crypto
import Foundation

/// A provider signing key the emulator accepts (apns.md B.1, B.2).
public struct APNSEmulatorAuthKey: Sendable {
    /// The 10-character key id: the JWT header's `kid`.
    public var keyID: String
    /// The 10-character team id: the JWT claim `iss` must equal it.
    public var teamID: String
    /// Verifies the ES256 signature (stored as X9.63 bytes: swift-crypto keys aren't `Sendable`).
    public var publicKey: P256.Signing.PublicKey {
        get { try! P256.Signing.PublicKey(x963Representation: publicKeyX963) }
        set { publicKeyX963 = newValue.x963Representation }
    }
    var publicKeyX963: Data
    /// Keys made since 2025 are scoped to one environment; nil = valid in both (apns.md B.2).
    /// A token from a key of the other environment gets 403 `BadEnvironmentKeyIdInToken`.
    public var environment: APNSEnvironment?
    /// nil = a team-scoped key, valid for every topic of the team. Otherwise a topic-specific key:
    /// it may push only to these bundle ids (with any push-type suffix); others get `TopicDisallowed`.
    public var bundleIDs: Set<String>?
    /// A topic-specific key may have one related key whose tokens may share a connection (apns.md B.2).
    public var relatedKeyID: String?

    public init(
        keyID: String,
        teamID: String,
        publicKey: P256.Signing.PublicKey,
        environment: APNSEnvironment? = nil,
        bundleIDs: Set<String>? = nil,
        relatedKeyID: String? = nil
    ) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKeyX963 = publicKey.x963Representation
        self.environment = environment
        self.bundleIDs = bundleIDs
        self.relatedKeyID = relatedKeyID
    }

    /// From a PEM file's text: either the `.p8` private key Apple hands out, or its public key.
    public init(keyID: String, teamID: String, pem: String, environment: APNSEnvironment? = nil) throws {
        let publicKey: P256.Signing.PublicKey
        if pem.contains("PRIVATE KEY") {
            publicKey = try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey
        } else {
            publicKey = try P256.Signing.PublicKey(pemRepresentation: pem)
        }
        self.init(keyID: keyID, teamID: teamID, publicKey: publicKey, environment: environment)
    }
}

/// Where the emulator's TLS identity comes from.
public enum APNSEmulatorTLS: Sendable {
    /// A fresh self-signed CA and a leaf for `localhost` / 127.0.0.1, made at `init`.
    /// Clients trust `APNSEmulator.caCertificatePEM`.
    case generated
    /// A certificate chain and key, PEM text (leaf first).
    case pem(certificateChain: String, privateKey: String)
    /// The same, read from files.
    case files(certificateChainPath: String, privateKeyPath: String)
}

/// Everything an `APNSEmulator` is built from. All fields have working defaults.
public struct APNSEmulatorConfiguration: Sendable {
    /// Address to listen on; only loopback is sensible.
    public var host: String = "127.0.0.1"
    /// 0 = any free port; read `APNSEmulator.port` after `start()`.
    public var port: Int = 0
    /// The emulated service. `apns-unique-id` is only sent in sandbox (apns.md A.5).
    public var environment: APNSEnvironment = .sandbox
    public var tls: APNSEmulatorTLS = .generated
    /// When set, the generated CA certificate is also written to this file at `init`.
    public var caCertificateOutputPath: String?

    /// Provider keys for token authentication.
    public var authKeys: [APNSEmulatorAuthKey] = []
    /// Bundle ids this team may push to. An empty list allows any topic (bundle id = topic minus
    /// the push type's suffix) — handy for benchmarks.
    public var bundleIDs: [String] = []
    /// An unknown but well-formed token becomes a device of the request's bundle id (online), in this
    /// environment, the first time it is used. Otherwise unknown tokens get `BadDeviceToken`.
    public var autoRegister: Bool = false

    /// What token-authenticated connections get once a request carried a valid token, and what
    /// certificate connections get at once (apns.md C.2: 1000 observed).
    public var maxConcurrentStreams: Int = 1000
    /// What token connections advertise before the first valid token ("only one stream", apns.md C.1).
    public var initialStreamsBeforeAuthentication: Int = 1
    /// Quiet connections get GOAWAY `IdleTimeout` after this long; nil = never.
    public var idleTimeout: Duration? = .seconds(3600)

    /// A token whose `iat` is further than this from now gets `ExpiredProviderToken` (apns.md B.1).
    public var providerTokenMaximumAge: TimeInterval = 3600
    /// A connection may change to another token at most once in this interval; the first token a
    /// connection uses counts as a change (apns.md B.1 → 429 `TooManyProviderTokenUpdates`).
    public var providerTokenUpdateInterval: TimeInterval = 20 * 60
    /// Accept `"iat": "1700000000"` (APNSwift sends a string; apns.md B.1). Integers are always accepted.
    public var acceptStringIssuedAt: Bool = false
    /// Once a connection answered `ExpiredProviderToken`, it answers it to everything (apns.md B.3).
    public var wedgeOnExpiredToken: Bool = false
    /// After a rejected request, advertise MAX_CONCURRENT_STREAMS = 1 until the next 200 (apns.md C.2).
    public var throttleOnReject: Bool = false

    /// Close connections that send too many bad requests (apns.md C.4); nil = never (the default).
    public var errorBudget: APNSEmulatorErrorBudget? = nil

    /// Client certificates (mTLS) are requested and verified against these CA PEMs; a connection that
    /// presents one is certificate-authenticated (topic base from the subject's UID, apns.md B.4).
    /// Empty = token authentication only.
    public var trustedClientCAPEMs: [String] = []

    /// How many notifications each device keeps in its received log, and on its screen: the
    /// newest, exactly (a ring). What the emulator keeps per push, so with the devices it bounds
    /// its memory however long it runs (`beckon serve` runs its built-in emulator for months).
    /// `beckon apns-emulator --log-limit`.
    public var deliveryLogLimit: Int = 1_000
    /// Event-loop threads; nil = the number of cores.
    public var threads: Int? = nil
    /// The emulator's clock, for JWT age, 20-minute rules, expirations and timestamps.
    public var now: @Sendable () -> Date = { Date() }

    public init() {}

    /// The usual test setup: one key, some apps, tokens registered on first use.
    public init(
        authKeys: [APNSEmulatorAuthKey],
        bundleIDs: [String],
        environment: APNSEnvironment = .sandbox,
        autoRegister: Bool = true
    ) {
        self.authKeys = authKeys
        self.bundleIDs = bundleIDs
        self.environment = environment
        self.autoRegister = autoRegister
    }
}
