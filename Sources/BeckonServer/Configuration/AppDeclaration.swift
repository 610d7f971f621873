import BeckonDelivery
import BeckonEvents
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

    /// `apps.<id>.apns.key-path` and `apps.<id>.apns.key-id`: the app's APNs auth key (.p8).
    /// Without them the app's pushes go to the built-in APNs emulator (sandbox).
    public var apnsKeyPath: String?
    public var apnsKeyID: String?
    /// `apps.<id>.apns.host`, `.port` and `.ca-file`: where the app's pushes go instead of
    /// Apple's hosts (a staging proxy, a standalone `beckon apns-emulator` shared by several
    /// nodes), and a CA (PEM) to trust for it beside the system's. Needs the app's key.
    public var apnsEndpoint: APNSEndpoint?
    /// `apps.<id>.delivery.*`: the delivery planner's defaults for the app.
    public var delivery: DeliveryPolicy = DeliveryPolicy()
    /// `apps.<id>.matrix.app-ids`: the Matrix pusher app ids (Sygnal's `app_id`) whose
    /// notifications `POST /_matrix/push/v1/notify` takes for this app (docs/drop-ins.md); an
    /// entry may be a glob (`*`, `?`; `MatrixAppIDs`).
    public var matrixAppIDs: [String] = []
    /// `apps.<id>.matrix.sandbox-app-ids`: Matrix app ids whose pushkeys are sandbox tokens (a
    /// development build's pusher, as Sygnal configures a platform per app id); served as well.
    public var matrixSandboxAppIDs: [String] = []
    /// `apps.<id>.gorush`: whether `POST /api/push` takes gorush requests for this app.
    public var gorush: GorushAccess = .off
    /// `apps.<id>.drop-in-environment`: the APNs environment of tokens a drop-in names when its
    /// request does not say (Matrix never does). Default: the app's only environment, else
    /// production.
    public var dropInEnvironment: PushEnvironment?

    /// `apps.<id>.webhook.*`: where the app's delivery events are POSTed (docs/webhooks.md); nil:
    /// no webhook, and no event log.
    public var events: AppEvents?

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

    /// The environment of a token a drop-in names without saying which.
    var defaultDropInEnvironment: PushEnvironment {
        dropInEnvironment ?? (environments.count == 1 ? environments.first! : .production)
    }

    /// The store's view of the app; limits come from the server-wide configuration.
    func storeApp(limits: AppLimits) -> App {
        App(id: id, bundleID: bundleID, teamID: teamID, environments: environments, limits: limits)
    }
}

// The user-token secret never goes into text: a declaration printed in a log shows the rest.
extension AppDeclaration: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "AppDeclaration(id: \(id), bundleID: \(bundleID), teamID: \(teamID))" }
    public var debugDescription: String { description }
}

/// Who may call the gorush drop-in for an app (`apps.<id>.gorush`).
public enum GorushAccess: String, Sendable, Equatable {
    /// `POST /api/push` does not serve the app.
    case off
    /// Anyone who reaches the listener, as with gorush itself: for a private network only.
    case open
    /// The app's API key as a bearer token.
    case key
}

/// An APNs endpoint other than Apple's (`apps.<id>.apns.host`, `.port`, `.ca-file`).
public struct APNSEndpoint: Hashable, Sendable {
    public var host: String
    public var port: Int
    /// A PEM file of certificates to trust for it, beside the system's.
    public var caFile: String?

    public init(host: String, port: Int = 443, caFile: String? = nil) {
        self.host = host
        self.port = port
        self.caFile = caFile
    }
}
