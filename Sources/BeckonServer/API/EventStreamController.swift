import BeckonEvents
import BeckonStore
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers
import ServiceLifecycle

/// `GET /v1/events`: the app's event log as server-sent events, for an operator's console or a
/// `curl -N` (docs/webhooks.md, "The stream"). The same events as the webhook, read from the same
/// log, each `id:` the event's id: a client that reconnects with `Last-Event-ID` (or `?after=`)
/// goes on where it was, as long as the events are kept; without one it starts at the newest.
struct EventStreamController: Sendable {
    let store: any EventLog
    let apps: [String: AppEvents]
    let limits: LimitsConfiguration
    let auth: Authenticator
    let now: @Sendable () -> Date
    /// Streams open on this node (`limits.event-streams`).
    let open = NIOLockedValueBox(0)

    /// How often an idle stream looks at the log, and sends a comment to keep proxies from closing it.
    static let pollInterval: Duration = .milliseconds(250)
    static let keepAliveInterval: Duration = .seconds(15)
    static let batch = 500

    func addRoutes(to router: Router<some RequestContext>) {
        router.get("v1/events") { request, _ in try await stream(request) }
    }

    func stream(_ request: Request) async throws -> Response {
        let key = try await auth.apiKey(request.headers[.authorization])
        guard apps[key.appID] != nil else {
            throw APIError.notFound("app \(key.appID) has no event log: it comes with a webhook (apps.\(key.appID).webhook.url)")
        }
        let appID = key.appID
        let start: EventPosition
        if let text = request.headers[.lastEventID] ?? request.uri.queryParameters["after"].map(String.init) {
            guard let id = Int64(text), let found = try await store.eventPosition(appID: appID, id: id) else {
                throw APIError.notFound("event \(text) is not kept for app \(appID): read from the newest (no Last-Event-ID)")
            }
            start = found
        } else {
            start = try await store.eventPosition(appID: appID, before: now())
        }
        guard let slot = StreamSlot(open, limit: limits.eventStreams) else {
            throw APIError(
                status: .serviceUnavailable, code: .unavailable,
                message: "\(limits.eventStreams) event streams are open on this node (limits.event-streams)")
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-store"
        let store = store
        return Response(status: .ok, headers: headers, body: ResponseBody { writer in
            // Held while the body is: freed when it ends, or when the response is dropped unsent.
            _ = slot
            try await writer.write(ByteBuffer(string: "retry: 2000\n\n"))
            let stopping = NIOLockedValueBox(false)
            // Ends when the client goes (the write fails) or the node shuts down.
            try await withGracefulShutdownHandler {
                var position = start
                var quiet = ContinuousClock.now
                while !Task.isCancelled, !stopping.withLockedValue({ $0 }) {
                    let events = try await store.events(appID: appID, after: position, limit: Self.batch)
                    if let last = events.last {
                        var text = ByteBuffer()
                        for event in events {
                            text.writeString("id: \(event.id)\nevent: \(event.kind.rawValue)\ndata: ")
                            text.writeBytes(event.json)
                            text.writeString("\n\n")
                        }
                        try await writer.write(text)
                        position = last.position
                        quiet = .now
                        continue
                    }
                    if ContinuousClock.now - quiet >= Self.keepAliveInterval {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        quiet = .now
                    }
                    try? await Task.sleep(for: Self.pollInterval)
                }
            } onGracefulShutdown: {
                stopping.withLockedValue { $0 = true }
            }
            try await writer.finish(nil)
        })
    }
}

extension HTTPField.Name {
    static let lastEventID = Self("Last-Event-ID")!
}
