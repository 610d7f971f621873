import APNSCore
import BeckonJSON
import Foundation

/// A request that passed every check a connection can make; the shared device registry decides the rest.
struct ValidatedRequest: Sendable {
    var deviceToken: String
    var bundleID: String
    var topic: String
    var pushType: APNSPushType
    var priority: Int
    /// The raw `apns-expiration`: nil = omitted, 0 = deliver once, never store.
    var expiration: Int64?
    var collapseID: String?
    var apnsID: String
    var headers: [String: String]
    var payload: [UInt8]
}

enum Evaluation: Sendable {
    case rejected(APNSReason, apnsID: String, deviceToken: String?)
    case accepted(ValidatedRequest)
}

/// The APNs rules one connection applies, as pure transitions: how it authenticated, which team and
/// key it is bound to, its token history, its advertised stream limit, its error budget. Part of
/// `ConnectionStateMachine`, which holds the connection's HTTP/2 state beside it.
struct ConnectionRules: Sendable {
    enum Authentication: Sendable, Hashable {
        /// JWT in `authorization` (apns.md B.1).
        case token
        /// A client certificate whose subject UID is the base topic (apns.md B.4).
        case certificate(baseTopic: String)
    }

    let authentication: Authentication
    private(set) var boundTeamID: String?
    private(set) var boundKeyID: String?
    private(set) var currentToken: Substring?
    private(set) var lastTokenChange: Date?
    private var tokenCache: [Substring: TokenCheck] = [:]
    /// The verification of `currentToken`.
    private var currentCheck: TokenCheck?
    /// Answers `ExpiredProviderToken` to everything (apns.md B.3, G.4).
    var isWedged = false
    /// The MAX_CONCURRENT_STREAMS we last told the client.
    private(set) var advertisedStreamLimit: Int
    /// What the connection gets when authenticated and not throttled.
    private(set) var configuredStreamLimit: Int
    private(set) var hasValidatedToken = false
    private var isThrottled = false
    /// Complete requests seen so far (for fault rules counted per connection).
    var requestsReceived = 0
    /// Rejections counted against the error budget (apns.md C.4).
    private(set) var budgetedErrors = 0
    private(set) var badDeviceTokenErrors = 0

    init(authentication: Authentication, configuredStreamLimit: Int, initialStreamsBeforeAuthentication: Int) {
        self.authentication = authentication
        self.configuredStreamLimit = configuredStreamLimit
        switch authentication {
        case .token:
            advertisedStreamLimit = min(initialStreamsBeforeAuthentication, configuredStreamLimit)
        case .certificate:
            advertisedStreamLimit = configuredStreamLimit
            hasValidatedToken = true
        }
    }

    // MARK: Stream limit

    /// Called after each answer; returns a new MAX_CONCURRENT_STREAMS to advertise, if any.
    mutating func responded(status: Int, throttleOnReject: Bool) -> Int? {
        if throttleOnReject {
            // apns.md C.2: limit → 1 after a rejection, restored after the next accepted request.
            if status != 200, status != 410, !isThrottled {
                isThrottled = true
                return setAdvertised(1)
            }
            if status == 200, isThrottled {
                isThrottled = false
                return setAdvertised(effectiveLimit)
            }
        } else if isThrottled {
            isThrottled = false
            return setAdvertised(effectiveLimit)
        }
        return nil
    }

    // MARK: Error budget

    /// Called after each answer; true when this answer spent the connection's error budget and the
    /// connection must get GOAWAY (apns.md C.4: 4xx other than 410 count; `BadDeviceToken` has
    /// its own, lower limit because APNs "disconnects sooner" on it, A.7).
    mutating func countError(status: Int, reason: APNSReason?, budget: APNSEmulatorErrorBudget?) -> Bool {
        guard let budget, (400..<500).contains(status), status != 410 else { return false }
        budgetedErrors += 1
        if reason == .badDeviceToken { badDeviceTokenErrors += 1 }
        if let limit = budget.errors, budgetedErrors >= limit { return true }
        if reason == .badDeviceToken, let limit = budget.badDeviceTokenErrors, badDeviceTokenErrors >= limit { return true }
        return false
    }

    /// The operator changed the limit on live connections.
    mutating func changeConfiguredStreamLimit(_ limit: Int) -> Int? {
        configuredStreamLimit = limit
        return isThrottled ? nil : setAdvertised(effectiveLimit)
    }

    private var effectiveLimit: Int {
        hasValidatedToken ? configuredStreamLimit : advertisedStreamLimit
    }

    private mutating func setAdvertised(_ value: Int) -> Int? {
        guard value != advertisedStreamLimit else { return nil }
        advertisedStreamLimit = value
        return value
    }

    // MARK: Requests

    /// Checks everything that doesn't need the device registry, in this order: duplicate headers,
    /// method, path, `apns-id`, authentication (before any device-token check, unlike pushy — apns.md
    /// A.9), then topic, push type, priority, expiration, collapse id, payload.
    ///
    /// `settings` is a new MAX_CONCURRENT_STREAMS to advertise: the first valid token lifts the
    /// one-stream limit (apns.md C.1).
    mutating func evaluate(
        _ head: RequestHead,
        body: [UInt8],
        now: Date,
        policy: RequestPolicy,
        makeID: () -> String
    ) -> (evaluation: Evaluation, settings: Int?) {
        requestsReceived += 1
        var settings: Int?
        let givenID = head.apnsID
        func reject(_ reason: APNSReason, _ token: String? = nil) -> (Evaluation, Int?) {
            let id = givenID.flatMap { RequestSyntax.isUUID($0) ? $0 : nil } ?? makeID()
            return (.rejected(reason, apnsID: id, deviceToken: token), settings)
        }

        if head.hasDuplicates { return reject(.duplicateHeaders) }
        guard head.method == "POST" else { return reject(.methodNotAllowed) }
        guard let path = head.path, path.hasPrefix("/3/device/") else { return reject(.badPath) }
        let token = path.dropFirst("/3/device/".count)
        if token.isEmpty { return reject(.missingDeviceToken) }
        // Byte checks: `StringProtocol.contains(_:)` goes through Foundation (visible in profiles).
        if token.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) { return reject(.badPath) }
        if let id = givenID, !RequestSyntax.isUUID(id) { return reject(.badMessageId) }
        let apnsID = givenID ?? makeID()

        // Authentication.
        var keyBundleIDs: Set<String>?
        switch authentication {
        case .token:
            if isWedged { return reject(.expiredProviderToken) }
            switch authenticate(head.authorization, now: now, policy: policy) {
            case .failure(let reason):
                return reject(reason)
            case .success(let key):
                keyBundleIDs = key.bundleIDs
                if !hasValidatedToken {
                    hasValidatedToken = true
                    if !isThrottled { settings = setAdvertised(configuredStreamLimit) }
                }
            }
        case .certificate:
            break  // APNs ignores `authorization` on certificate connections (apns.md A.2).
        }

        // Push type and topic.
        var pushType: APNSPushType?
        if let text = head.pushType {
            guard let type = APNSPushType(rawValue: text) else { return reject(.invalidPushType) }
            pushType = type
        }
        let topic: String
        let bundleID: String
        switch authentication {
        case .certificate(let base):
            // pushy: base, base.voip, base.complication; anything else is BadTopic (apns.md B.4).
            topic = head.topic ?? base
            guard topic == base || topic == base + ".voip" || topic == base + ".complication" else {
                return reject(.badTopic)
            }
            bundleID = base
            let implied: APNSPushType =
                topic.hasSuffix(".voip") ? .voip : topic.hasSuffix(".complication") ? .complication : .alert
            if pushType == .location { return reject(.invalidPushType) }  // token-only (apns.md A.3)
            if let type = pushType, type != implied, !(implied == .alert && type.topicSuffix.isEmpty) {
                return reject(.invalidPushType)
            }
            pushType = pushType ?? implied
        case .token:
            guard let text = head.topic else { return reject(.missingTopic) }
            guard RequestSyntax.isValidTopic(text) else { return reject(.badTopic) }
            topic = text
            switch Self.resolve(topic: text, pushType: pushType, policy: policy) {
            case .failure(let reason): return reject(reason)
            case .success(let resolvedBundleID, let resolvedType):
                bundleID = resolvedBundleID
                pushType = resolvedType
            }
            if let allowed = keyBundleIDs, !allowed.contains(bundleID) { return reject(.topicDisallowed) }
        }
        let type = pushType ?? .alert

        // Priority: 10, 5 or 1; default 10 (apns.md A.2).
        var priority = 10
        if let text = head.priority {
            switch text {
            case "10": priority = 10
            case "5": priority = 5
            case "1": priority = 1
            default: return reject(.badPriority)
            }
        } else if type == .background {
            priority = 5  // Omitted on a background push: treated as 5, not rejected.
        }
        // "Using priority 10 is an error" for background pushes (apns.md A.3). Apple's reply is not
        // documented; the emulator answers BadPriority.
        if type == .background, priority == 10 { return reject(.badPriority) }

        var expiration: Int64?
        if let text = head.expiration {
            guard let seconds = RequestSyntax.epochSeconds(text) else { return reject(.badExpirationDate) }
            expiration = seconds
        }
        if let collapse = head.collapseID, collapse.utf8.count > 64 { return reject(.badCollapseId) }

        if body.isEmpty { return reject(.payloadEmpty) }
        if body.count > type.maximumPayloadSize { return reject(.payloadTooLarge) }
        // A background push may not ask for user interaction (apns.md D.4); Apple's reply is not
        // documented, the emulator answers InvalidPushType.
        if type == .background, Self.requestsUserInteraction(body) { return reject(.invalidPushType) }

        guard RequestSyntax.isDeviceToken(token) else { return reject(.badDeviceToken) }

        return (
            .accepted(
                ValidatedRequest(
                    deviceToken: token.lowercased(),
                    bundleID: bundleID,
                    topic: topic,
                    pushType: type,
                    priority: priority,
                    expiration: expiration,
                    collapseID: head.collapseID,
                    apnsID: apnsID,
                    headers: head.recorded,
                    payload: body
                )
            ),
            settings
        )
    }

    private enum AuthResult {
        case success(APNSEmulatorAuthKey)
        case failure(APNSReason)
    }

    /// apns.md B.1–B.2: bearer token, cached verification per token string, environment-scoped keys,
    /// one team and related keys per connection, `iat` age, token changes at most every 20 minutes.
    private mutating func authenticate(_ authorization: String?, now: Date, policy: RequestPolicy) -> AuthResult {
        guard let authorization, authorization.utf8.count > 7,
            authorization.utf8.prefix(7).lazy.map({ $0 | 0x20 }).elementsEqual("bearer ".utf8)  // ASCII, any case
        else { return .failure(.missingProviderToken) }
        let token = authorization.dropFirst(7)
        if token.isEmpty { return .failure(.missingProviderToken) }

        let check: TokenCheck
        // Nearly every request repeats the connection's current token: a byte comparison settles
        // it without hashing ~200 bytes or verifying a signature again (verify once per connection).
        let isCurrent = currentToken.map { $0.utf8.elementsEqual(token.utf8) } ?? false
        if isCurrent, let current = currentCheck {
            check = current
        } else if let cached = tokenCache[token] {
            check = cached
        } else {
            check = policy.verifier.verify(token)
            if tokenCache.count >= 8 { tokenCache.removeAll(keepingCapacity: true) }
            tokenCache[token] = check
        }
        guard case .valid(let verified) = check, let key = policy.verifier.keys[verified.keyID] else {
            if case .invalid(let reason) = check { return .failure(reason) }
            return .failure(.invalidProviderToken)
        }
        if let environment = key.environment, environment != policy.environment {
            return .failure(.badEnvironmentKeyIdInToken)
        }
        if let team = boundTeamID, team != verified.teamID {
            // One team per connection; pushy's mock and Apple (pushy#399) say InvalidProviderToken.
            return .failure(.invalidProviderToken)
        }
        if let boundKeyID, boundKeyID != key.keyID, let bound = policy.verifier.keys[boundKeyID] {
            let bothTeamScoped = bound.bundleIDs == nil && key.bundleIDs == nil
            let related = bound.relatedKeyID == key.keyID || key.relatedKeyID == bound.keyID
            if !bothTeamScoped && !related { return .failure(.unrelatedKeyIdInToken) }
        }
        let age = now.timeIntervalSince(verified.issuedAt)
        if abs(age) > policy.tokenMaximumAge { return .failure(.expiredProviderToken) }

        if !isCurrent {
            if let last = lastTokenChange, now.timeIntervalSince(last) < policy.tokenUpdateInterval {
                return .failure(.tooManyProviderTokenUpdates)
            }
            currentToken = token
            currentCheck = check
            lastTokenChange = now
        }
        boundTeamID = verified.teamID
        if boundKeyID == nil { boundKeyID = key.keyID }
        return .success(key)
    }

    private enum TopicResult {
        case success(bundleID: String, pushType: APNSPushType)
        case failure(APNSReason)
    }

    /// The topic must be a known bundle id plus the push type's suffix (apns.md A.3). A known bundle
    /// with another type's suffix → InvalidPushType; an unknown bundle → TopicDisallowed.
    private static func resolve(topic: String, pushType: APNSPushType?, policy: RequestPolicy) -> TopicResult {
        if let pushType {
            let suffix = pushType.topicSuffix
            if topic.hasSuffix(suffix) {
                let base = topic.dropLast(suffix.count)
                if !base.isEmpty, policy.allows(bundleID: base) {
                    if !suffix.isEmpty || policy.bundleIDs.isEmpty == false || !hasKnownSuffix(topic) {
                        return .success(bundleID: String(base), pushType: pushType)
                    }
                }
            }
            if let (base, _) = splitKnownSuffix(topic), policy.allows(bundleID: base) {
                return .failure(.invalidPushType)
            }
            if policy.allows(bundleID: Substring(topic)) { return .failure(.invalidPushType) }
            return .failure(.topicDisallowed)
        }
        // No apns-push-type: infer it from the suffix (recommended, not required, on iOS).
        if let (base, type) = splitKnownSuffix(topic), policy.allows(bundleID: base) {
            return .success(bundleID: String(base), pushType: type)
        }
        if policy.allows(bundleID: Substring(topic)) { return .success(bundleID: topic, pushType: .alert) }
        return .failure(.topicDisallowed)
    }

    private static let suffixedTypes: [APNSPushType] = APNSPushType.allCases
        .filter { !$0.topicSuffix.isEmpty }
        .sorted { $0.topicSuffix.count > $1.topicSuffix.count }

    private static func hasKnownSuffix(_ topic: String) -> Bool { splitKnownSuffix(topic) != nil }

    private static func splitKnownSuffix(_ topic: String) -> (Substring, APNSPushType)? {
        for type in suffixedTypes where topic.hasSuffix(type.topicSuffix) {
            let base = topic.dropLast(type.topicSuffix.count)
            if !base.isEmpty { return (base, type) }
        }
        return nil
    }

    /// True when `aps` has `alert`, `badge` or `sound`.
    static func requestsUserInteraction(_ body: [UInt8]) -> Bool {
        guard case .object(let aps)? = (try? JSONParser.parse(body))?["aps"] else { return false }
        return aps["alert"] != nil || aps["badge"] != nil || aps["sound"] != nil
    }
}
