import BeckonDelivery
import Foundation

extension SimulationServer {
    /// A message's trace, built as `GET /v1/messages/{id}/trace` builds it (docs/trace.md), from
    /// the node's store. Nil when the app has no such message.
    func trace(of messageID: String) async throws -> MessageTrace? {
        guard let records = try await store.traceRecords(appID: Self.appID, messageID: messageID) else { return nil }
        return MessageTrace(records, now: Date())
    }

    /// The traces of `messageIDs`, by id (a message the store does not know is left out).
    func traces(of messageIDs: some Sequence<String>) async throws -> [String: MessageTrace] {
        var traces: [String: MessageTrace] = [:]
        for id in messageIDs { traces[id] = try await trace(of: id) }
        return traces
    }
}
