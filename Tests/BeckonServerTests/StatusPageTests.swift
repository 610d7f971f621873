@testable import BeckonServer
import BeckonStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The status page: what it computes from push records, and who may see it.
@Suite struct StatusPageTests {
    static let since = Date(timeIntervalSince1970: 1_000)

    static func record(
        at offset: TimeInterval, strategy: String = "wake", reason: String = "wake", pushType: String = "background",
        state: String = "sent", wake: String? = nil, latency: TimeInterval? = nil, apnsReason: String? = nil, status: Int? = 200
    ) -> PushRecord {
        PushRecord(
            reason: reason, strategy: strategy, pushType: pushType, state: state, status: status, messageCount: 1,
            wake: wake, wakeLatency: latency, createdAt: since.addingTimeInterval(offset), apnsReason: apnsReason)
    }

    @Test func measuredPushesAreBucketedPerStrategyAndClearsAreLeftOut() {
        let records = [
            Self.record(at: 5, wake: "observed", latency: 1),
            Self.record(at: 8, wake: "observed", latency: 3),
            Self.record(at: 9, wake: "missed"),
            Self.record(at: 35, wake: "observed", latency: 2),
            Self.record(at: 12, wake: nil),  // not measured yet
            Self.record(at: 15, strategy: "content", reason: "alert", pushType: "alert", wake: "missed"),
            Self.record(at: 15, reason: "clear", wake: "observed", latency: 9),  // a clear waits for no one
        ]
        let series = StatusSnapshot.strategies(records, since: Self.since, bucketSeconds: 10, buckets: 4)
        #expect(series.map(\.strategy) == ["content", "wake"])
        let wake = series[1].buckets
        #expect(wake.map(\.measured) == [3, 0, 0, 1])
        #expect(wake.map(\.observed) == [2, 0, 0, 1])
        #expect(wake[0].successRate == 2.0 / 3)
        #expect(wake[1].successRate == nil, "nothing measured is not zero")
        #expect(wake.map(\.latencyP50) == [1, nil, nil, 2])
        #expect(wake.map(\.start) == [0, 10, 20, 30].map { Self.since.addingTimeInterval($0) })
        #expect(series[0].buckets[1].successRate == 0)
    }

    @Test func failuresAreCountedByApplesReasonMostFrequentFirst() {
        let records = [
            Self.record(at: 1, state: "failed", apnsReason: "BadDeviceToken", status: 400),
            Self.record(at: 2, state: "failed", apnsReason: "Unregistered", status: 410),
            Self.record(at: 7, state: "failed", apnsReason: "Unregistered", status: 410),
            Self.record(at: 3, state: "failed", apnsReason: nil, status: 0),
            Self.record(at: 4, state: "sent"),
        ]
        #expect(StatusSnapshot.failures(records) == [
            .init(reason: "Unregistered", count: 2, last: Self.since.addingTimeInterval(7)),
            .init(reason: "BadDeviceToken", count: 1, last: Self.since.addingTimeInterval(1)),
            .init(reason: "no answer", count: 1, last: Self.since.addingTimeInterval(3)),
        ])
    }

    @Test func thePageEscapesWhatItPrintsAndDrawsEachStrategy() {
        var app = StatusSnapshot.App(
            id: "chat", bundleID: "com.example.<chat>", counts: AppCounts(devices: 3, devicesWithoutToken: 1, pendingPushes: 2),
            unreachable: 1, pushes: 4, sent: 3, failed: 1, wakeSuccessRate: 0.5, strategies: [], failures: [])
        app.strategies = StatusSnapshot.strategies(
            [Self.record(at: 5, wake: "observed", latency: 1), Self.record(at: 25, wake: "missed")],
            since: Self.since, bucketSeconds: 10, buckets: 3)
        app.failures = [.init(reason: "<script>", count: 1, last: Self.since)]
        app.shown = [ShownShare(strategy: "content", messages: 4, shown: 3), ShownShare(strategy: "live", messages: 2, shown: 2)]
        let html = StatusPage(snapshot: StatusSnapshot(
            generatedAt: Self.since.addingTimeInterval(30), since: Self.since, bucketSeconds: 10, sessions: 7, apps: [app])).html
        #expect(html.contains("com.example.&lt;chat&gt;"))
        #expect(html.contains("&lt;script&gt;") && !html.contains("<script>"))
        #expect(html.contains(#"data-series="wake""#))
        #expect(html.contains(#"<span class="value">7</span>"#))
        #expect(html.contains(#"<td class="rate">50 %</td>"#))
        #expect(html.contains(#"<tr><td>content</td><td>4</td><td>3</td><td class="rate">75 %</td></tr>"#), "shown within a minute")
        #expect(html.contains(#"id="find""#), "the trace's search form")
    }

    /// Behind the admin token, as a bearer token or as HTTP Basic's password (what a browser
    /// sends after its prompt); a 401 offers Basic so that the prompt appears.
    @Test func onlyTheAdminTokenOpensThePage() async throws {
        try await APITestFixture.with { fixture, client in
            let refused = try await client.execute(uri: "/status", method: .get, headers: [:], body: nil)
            #expect(refused.status == .unauthorized)
            #expect(refused.headers[.wwwAuthenticate]?.contains("Basic") == true)
            let wrong = "Basic " + Data("ops:not-the-token".utf8).base64EncodedString()
            #expect(try await client.execute(uri: "/status", method: .get, headers: [.authorization: wrong], body: nil)
                .status == .unauthorized)
            #expect(try await client.execute(uri: "/status", method: .get, headers: APITestFixture.headers(bearer: fixture.chatKey), body: nil)
                .status == .unauthorized)

            let basic = "Basic " + Data("ops:\(APITestFixture.adminToken)".utf8).base64EncodedString()
            let page = try await client.execute(uri: "/status", method: .get, headers: [.authorization: basic], body: nil)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            let html = String(buffer: page.body)
            #expect(html.contains(#"<tr class="app-row" data-app="chat">"#))
            #expect(html.contains(#"<tr class="app-row" data-app="mail">"#))
            let bearer = try await client.execute(
                uri: "/status?sinceSeconds=60", method: .get, headers: APITestFixture.headers(bearer: APITestFixture.adminToken),
                body: nil)
            #expect(bearer.status == .ok)
            #expect(String(buffer: bearer.body).contains("last 60 s"))
            let bad = try await client.execute(
                uri: "/status?sinceSeconds=0", method: .get, headers: APITestFixture.headers(bearer: APITestFixture.adminToken),
                body: nil)
            #expect(bad.status == .badRequest)
        }
    }

    /// "Find a message": its trace by id, a user's last messages linked to theirs, escaped; behind
    /// the admin token as the page is.
    @Test func theTracePageFindsAMessageOrAUsersLastMessages() async throws {
        try await APITestFixture.with { fixture, client in
            _ = try await fixture.store.registerDevice(DeviceRegistration(
                appID: "chat", deviceID: "phone<1>", userID: "alice", bundleID: "com.example.chat", environment: .production))
            let appended = try await fixture.store.appendMessages(appID: "chat", [NewMessage(recipients: ["alice"]), NewMessage(recipients: ["alice"])])
            let first = appended[0].message.id
            let admin = APITestFixture.headers(bearer: APITestFixture.adminToken)
            func page(_ query: String, _ headers: HTTPFields) async throws -> (HTTPResponse.Status, String) {
                let response = try await client.execute(uri: "/status/trace?\(query)", method: .get, headers: headers, body: nil)
                return (response.status, String(buffer: response.body))
            }
            let (status, trace) = try await page("app=chat&message=\(first.uppercased())", admin)
            #expect(status == .ok)
            #expect(trace.contains("Message \(first)"))
            #expect(trace.contains(#"data-device="phone&lt;1&gt;""#), "the device id is escaped")
            #expect(trace.contains(#"<tr class="event stored">"#) && trace.contains("sequence=1"))

            let (_, list) = try await page("app=chat&user=alice", admin)
            #expect(list.contains("/status/trace?app=chat&amp;message=\(appended[1].message.id)"), "newest first, linked")
            #expect(list.range(of: appended[1].message.id)!.lowerBound < list.range(of: first)!.lowerBound)

            #expect(try await page("app=chat&message=nope", admin).1.contains(#"id="not-found""#))
            #expect(try await page("app=chat&message=\(first)", APITestFixture.headers(bearer: fixture.chatKey)).0 == .unauthorized)
            let (_, status2) = try await page("", admin)
            #expect(status2.contains("Give a message id"))
        }
    }
}
