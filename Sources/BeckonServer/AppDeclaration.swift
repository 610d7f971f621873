import BeckonStore

/// An app as the operator declares it in the configuration (`apps.ids` and `apps.<id>.*`).
///
/// The configuration is the source of truth: at start every declared app is saved to the store
/// (`BeckonStore.saveApp`). The user-token secret is the one thing the store never sees: it lives
/// only in the configuration and in memory, where `UserTokenVerifier` uses it.
public struct AppDeclaration: Sendable, Equatable {
    public var id: String
    public var bundleID: String
    public var teamID: String
    public var environments: Set<PushEnvironment>
    /// The HS256 key the app's backend signs user tokens with (`apps.<id>.user-token-secret`).
    public var userTokenSecret: String

    /// HS256 with a short key can be brute-forced offline from one captured token (RFC 7518
    /// §3.2: the key must be at least as long as the hash output, 256 bits).
    public static let minimumSecretBytes = 32

    public init(
        id: String, bundleID: String, teamID: String,
        environments: Set<PushEnvironment> = [.sandbox, .production], userTokenSecret: String
    ) {
        self.id = id
        self.bundleID = bundleID
        self.teamID = teamID
        self.environments = environments
        self.userTokenSecret = userTokenSecret
    }

    /// The store's view of the app; limits come from the server-wide configuration.
    func storeApp(limits: AppLimits) -> App {
        App(id: id, bundleID: bundleID, teamID: teamID, environments: environments, limits: limits)
    }
}
