import BeckonClient
import BeckonClientTestSupport
import BeckonJSON
import Foundation
import Testing

/// The extension's fetch (`GET /v1/messages/{id}`) against the real server, over URLSession.
@Suite(.serialized) struct NotificationServiceEndToEndTests {
    static func push(_ id: String) -> IncomingNotification {
        IncomingNotification(
            identifier: id,
            payload: ["aps": ["alert": ["loc-key": "BECKON_NEW_MESSAGE"], "mutable-content": 1], "beckon": ["reason": "alert", "ids": .array([.string(id)])]])
    }

    @Test func theNamedMessageIsFetchedAndItsTextShown() async throws {
        try await ClientTestServer.with { server in
            let device = try await ClientTestDevice(server: server, user: "u1", device: "d1", role: .extension)
            defer { device.remove() }
            let id = try await server.post(to: ["u1"], text: "x", notification: ["title": "Anna", "body": "Lunch at one?"])
            let handler = NotificationServiceHandler(fetcher: device.fetcher, clock: SystemClock())
            let outcome = await handler.handle(Self.push(id))
            #expect(outcome.content?.title == "Anna")
            #expect(outcome.content?.body == "Lunch at one?")
        }
    }

    @Test func anUnknownMessageFallsBackToThePushsText() async throws {
        try await ClientTestServer.with { server in
            let device = try await ClientTestDevice(server: server, user: "u1", device: "d1", role: .extension)
            defer { device.remove() }
            let handler = NotificationServiceHandler(fetcher: device.fetcher, clock: SystemClock())
            let outcome = await handler.handle(Self.push(UUID().uuidString.lowercased()))
            guard case .fallback(let content, .fetchFailed) = outcome else {
                Issue.record("expected the fallback: \(outcome)")
                return
            }
            #expect(content.locKey == "BECKON_NEW_MESSAGE")
        }
    }

    @Test func aMessageOverTheBudgetIsAbandonedUnread() async throws {
        try await ClientTestServer.with { server in
            let device = try await ClientTestDevice(server: server, user: "u1", device: "d1", role: .extension)
            defer { device.remove() }
            let id = try await server.post(to: ["u1"], text: String(repeating: "x", count: 20_000))
            let fetcher = device.fetcher
            // A budget of 64 KB reads at most what parses within 32 KB: 1,170 bytes of one answer.
            await #expect(throws: MessageFetchError.tooLarge(limit: (32 << 10) / ExtensionBudget.answerFootprint)) {
                try await fetcher.fetch(messageID: id, byteLimit: ExtensionBudget(memoryBytes: 64 << 10).messageBytes)
            }
            let handler = NotificationServiceHandler(
                configuration: .init(budget: ExtensionBudget(memoryBytes: 64 << 10)), fetcher: fetcher, clock: SystemClock())
            guard case .fallback(let content, .tooLarge) = await handler.handle(Self.push(id)) else {
                Issue.record("expected the fallback")
                return
            }
            #expect(content.locKey == "BECKON_NEW_MESSAGE")
        }
    }

    @Test func aRevokedCredentialIsAnAuthorizationFailure() async throws {
        try await ClientTestServer.with { server in
            let fetcher = URLSessionMessageFetcher(baseURL: server.baseURL, credential: "bkd_nobody")
            await #expect(throws: MessageFetchError.unauthorized) { try await fetcher.fetch(messageID: "m", byteLimit: 1 << 20) }
        }
    }
}
