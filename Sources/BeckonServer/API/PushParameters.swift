import BeckonProtocol
import BeckonStore

/// A device's APNs tokens as RFC 8599 push parameters, in the form Linphone and Flexisip send
/// them (reference seed 003, "Update Contact URI parameters"), which extends RFC 8599 §9.1 to
/// carry two tokens, because an iOS ≥ 13 VoIP app needs one for PushKit and one for remote
/// notifications:
///
/// ```
/// pn-provider = "apns" / "apns.dev"
/// pn-param    = TeamId "." BundleId "." service *( "&" service )
/// pn-prid     = token [ ":" service ] *( "&" token ":" service )
/// service     = "voip" / "remote"
/// ```
///
/// `apns.dev` is Flexisip's name for the sandbox; `apns` is production unless the body says
/// `environment: sandbox`.
struct PushParameters: Equatable {
    var teamID: String
    var bundleID: String
    /// Nil when the provider (`apns`) does not say.
    var environment: PushEnvironment?
    var remoteToken: String?
    var voipToken: String?

    /// - Parameter path: where the parameters are in the body, for error messages.
    init(provider: String, param: String, prid: String, path: String) throws(APIError) {
        switch provider {
        case "apns": environment = nil
        case "apns.dev": environment = .sandbox
        default: throw .invalidField("\(path).pn-provider", "must be apns or apns.dev (RFC 8599 §9.1)")
        }

        // TeamId.BundleId.services: the team id has no dots, the bundle id has some, and the
        // services come after the last one.
        guard let firstDot = param.firstIndex(of: "."), let lastDot = param.lastIndex(of: "."), firstDot < lastDot else {
            throw .invalidField("\(path).pn-param", "must be TEAMID.BUNDLEID.remote&voip")
        }
        teamID = String(param[..<firstDot])
        bundleID = String(param[param.index(after: firstDot)..<lastDot])
        let services = param[param.index(after: lastDot)...].split(separator: "&", omittingEmptySubsequences: false)
            .map(String.init)
        guard !teamID.isEmpty, !bundleID.isEmpty, !services.isEmpty,
            services.allSatisfy({ PushTokenKind(rawValue: $0) != nil }), Set(services).count == services.count
        else {
            throw .invalidField("\(path).pn-param", "must be TEAMID.BUNDLEID followed by .remote, .voip or .remote&voip")
        }

        let entries = prid.split(separator: "&", omittingEmptySubsequences: false)
        guard !prid.isEmpty else { throw .invalidField("\(path).pn-prid", "must not be empty") }
        var tokens: [PushTokenKind: String] = [:]
        for entry in entries {
            let pieces = entry.split(separator: ":", omittingEmptySubsequences: false)
            let kind: PushTokenKind
            switch pieces.count {
            case 1 where entries.count == 1 && services.count == 1:
                // A lone token without a service is for the one service pn-param names.
                kind = PushTokenKind(rawValue: services[0])!
            case 2:
                guard let named = PushTokenKind(rawValue: String(pieces[1])), services.contains(named.rawValue) else {
                    throw .invalidField("\(path).pn-prid", "service \(pieces[1]) is not one pn-param lists")
                }
                kind = named
            default:
                throw .invalidField("\(path).pn-prid", "must be token:service, joined with &")
            }
            let token = String(pieces[0])
            guard !token.isEmpty, token.count % 2 == 0, token.allSatisfy(\.isHexDigit) else {
                throw .invalidField("\(path).pn-prid", "tokens must be hex")
            }
            guard tokens[kind] == nil else { throw .invalidField("\(path).pn-prid", "has two \(kind.rawValue) tokens") }
            tokens[kind] = token
        }
        remoteToken = tokens[.remote]
        voipToken = tokens[.voip]
    }
}
