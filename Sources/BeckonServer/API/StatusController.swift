import BeckonDelivery
import BeckonStore
import Foundation
import Hummingbird

/// The status page (the admin token, or Basic auth from a browser).
struct StatusController: Sendable {
    let store: any (DeliveryReports & MessageTraceStore & MailboxStore & EventLog)
    /// The declared apps, in the order of `apps.ids`.
    let declared: [AppDeclaration]
    let apps: [String: AppDeclaration]
    let auth: Authenticator
    let syncHub: SyncHub?
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("status") { request, context in try await statusPage(request, context) }
        router.get("status/trace") { request, context in try await tracePage(request, context) }
    }

    /// `GET /status?sinceSeconds=N`: the operator's page (`StatusPage`) behind the admin token.
    /// A browser cannot send a bearer token by itself, so HTTP Basic works too (any user name, the
    /// admin token as password): a 401 asks for it, and the browser's own prompt appears.
    func statusPage(_ request: Request, _ context: some RequestContext) async throws -> Response {
        if let refusal = adminRefusal(request.headers[.authorization]) { throw refusal }
        let window = try DeliveryReportController.window(request, default: 86_400)
        let snapshot = try await statusSnapshot(since: now().addingTimeInterval(-window), buckets: 24)
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: StatusPage(snapshot: snapshot).html)))
    }

    /// `GET /status/trace?app=A&message=ID`: a message's trace; `…&user=U`: the user's last
    /// messages, each linked to its trace. The same admin check as the page.
    func tracePage(_ request: Request, _ context: some RequestContext) async throws -> Response {
        if let refusal = adminRefusal(request.headers[.authorization]) { throw refusal }
        let query = request.uri.queryParameters
        let app = query["app"].map(String.init) ?? declared.first?.id ?? ""
        let message = query["message"].map(String.init).flatMap { $0.isEmpty ? nil : $0.lowercased() }
        let user = query["user"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        let content: TracePage.Content
        if let message {
            content = try await store.traceRecords(appID: app, messageID: message)
                .map { .trace(MessageTrace($0, now: now())) } ?? .notFound("No message \(message) in app \(app).")
        } else if let user {
            let owner = UserRef(appID: app, userID: user)
            let last = try await store.lastSequence(of: owner)
            let entries = try await store.messages(for: owner, after: max(0, last - Int64(Self.userMessages)), limit: Self.userMessages)
            content = .messages(user: user, entries.reversed().map { ($0.message.id, $0.message.kind.rawValue, $0.message.createdAt) })
        } else {
            content = .notFound("Give a message id, or a user.")
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: TracePage(app: app, content: content).html)))
    }

    /// How many of a user's last messages `tracePage` lists.
    static let userMessages = 20

    /// Every declared app's counts and the wake and failure figures of its pushes since `since`.
    func statusSnapshot(since: Date, buckets: Int) async throws -> StatusSnapshot {
        let generatedAt = now()
        let step = StatusSnapshot.bucketSeconds(since: since, now: generatedAt, buckets: buckets)
        var apps: [StatusSnapshot.App] = []
        for app in declared {
            let records = try await store.pushRecords(appID: app.id, since: since)
            let unreachable = try await store.unreachableDeviceCount(appID: app.id)
            let report = DeliveryReport(appID: app.id, since: since, records: records, unreachableDevices: unreachable)
            apps.append(StatusSnapshot.App(
                id: app.id, bundleID: app.bundleID, counts: try await store.appCounts(appID: app.id),
                unreachable: unreachable, pushes: report.pushes,
                sent: report.kinds.reduce(0) { $0 + $1.sent }, failed: report.kinds.reduce(0) { $0 + $1.failed },
                wakeSuccessRate: report.wakeSuccessRate,
                strategies: StatusSnapshot.strategies(records, since: since, bucketSeconds: step, buckets: buckets),
                failures: StatusSnapshot.failures(records),
                shown: try await store.shownShares(appID: app.id, from: since, to: generatedAt.addingTimeInterval(-60), within: 60),
                webhook: try await webhook(of: app, now: generatedAt)))
        }
        return StatusSnapshot(
            generatedAt: generatedAt, since: since, bucketSeconds: step, sessions: await syncHub?.sessionCount ?? 0, apps: apps)
    }

    private func webhook(of app: AppDeclaration, now: Date) async throws -> StatusSnapshot.Webhook? {
        guard let events = app.events, let status = try await store.eventLogStatus(appID: app.id, now: now) else { return nil }
        return StatusSnapshot.Webhook(url: events.webhook.url.description, status: status)
    }

    /// Why the page is refused, if it is; a 401 also offers Basic, so a browser prompts.
    private func adminRefusal(_ authorization: String?) -> APIError? {
        do {
            try auth.admin(Self.bearer(fromBasic: authorization))
            return nil
        } catch {
            var refusal = error
            if refusal.status == .unauthorized {
                refusal.headers[.wwwAuthenticate] = #"Basic realm="beckon status", Bearer realm="beckon""#
            }
            return refusal
        }
    }

    /// `Authorization: Basic base64(user:token)` as `Bearer token`; anything else as it came.
    static func bearer(fromBasic header: String?) -> String? {
        guard let header, header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst("basic ".count)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return header }
        return "Bearer " + text[text.index(after: colon)...]
    }
}
