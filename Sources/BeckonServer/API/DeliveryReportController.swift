import BeckonDelivery
import BeckonStore
import Foundation
import Hummingbird

/// The delivery report, for the app's backend and for the operator.
struct DeliveryReportController: Sendable {
    let store: any (AppRegistry & DeliveryReports)
    let apps: [String: AppDeclaration]
    let auth: Authenticator
    let now: @Sendable () -> Date

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("v1/delivery/report") { request, context in try await deliveryReport(request, context) }
        router.get("v1/admin/apps/{appId}/delivery/report") { request, context in try await adminDeliveryReport(request, context) }
    }

    /// `GET /v1/delivery/report?sinceSeconds=N`: the wake figures of the key's app over the last
    /// N seconds (default a day, at most 30 days): what each kind of push achieved (design rule 10).
    func deliveryReport(_ request: Request, _ context: some RequestContext) async throws -> Response {
        let key = try await auth.apiKey(request.headers[.authorization])
        return APIResponse.json(.ok, try await report(appID: key.appID, request))
    }

    /// `GET /v1/admin/apps/{appId}/delivery/report`: the same report for the operator (admin token).
    func adminDeliveryReport(_ request: Request, _ context: some RequestContext) async throws -> Response {
        try auth.admin(request.headers[.authorization])
        let appID = try Identifier.path("appId", of: context)
        guard try await store.app(id: appID) != nil else { throw APIError.notFound("no app \(appID)") }
        return APIResponse.json(.ok, try await report(appID: appID, request))
    }

    private func report(appID: String, _ request: Request) async throws -> DeliveryReport {
        let since = now().addingTimeInterval(-(try Self.window(request, default: 86_400)))
        return DeliveryReport(
            appID: appID, since: since, records: try await store.pushRecords(appID: appID, since: since),
            unreachableDevices: try await store.unreachableDeviceCount(appID: appID))
    }

    /// `sinceSeconds`: how far back a report or the status page looks (a day unless given, at
    /// most 30 days).
    static func window(_ request: Request, default seconds: TimeInterval) throws -> TimeInterval {
        guard let text = request.uri.queryParameters["sinceSeconds"] else { return seconds }
        guard let seconds = Int(text), (1...30 * 86_400).contains(seconds) else {
            throw APIError.invalidField("sinceSeconds", "must be a whole number of seconds from 1 to 2592000 (30 days)")
        }
        return TimeInterval(seconds)
    }
}
