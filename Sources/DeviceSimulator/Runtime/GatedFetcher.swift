import BeckonClient
import BeckonJSON

/// The extension's fetch by id, failing like a real one while the phone is offline, and counting
/// what each answer costs the extension's memory once parsed (`ExtensionMemory`).
struct GatedFetcher: MessageFetcherPort {
    let inner: any MessageFetcherPort
    let network: PhoneNetwork
    let memory: ExtensionMemory

    func fetch(messageID: String, byteLimit: Int) async throws(MessageFetchError) -> FetchedMessage {
        guard network.isOnline else { throw .transport("offline") }
        let message = try await inner.fetch(messageID: messageID, byteLimit: byteLimit)
        guard memory.parsed(messageID, footprint: ExtensionMemory.footprint(of: message)) else {
            throw .transport("the extension was killed for its memory")
        }
        return message
    }
}

/// The extension process's memory: a baseline, plus what each answer fetched by a run still in
/// flight took to parse. Over iOS's limit the process is killed (apns.md E.4): `onOverLimit`.
final class ExtensionMemory: Sendable {
    /// What an extension process takes before it loads anything (about 6 MB on a phone).
    static let baseline = 6 << 20

    let limit: Int
    private let inUse = Locked<[String: Int]>([:])
    private let onOverLimit: Locked<(@Sendable () -> Void)?>

    init(limit: Int) {
        self.limit = limit
        self.onOverLimit = Locked(nil)
    }

    func whenOverLimit(_ handler: @escaping @Sendable () -> Void) { onOverLimit.withLock { $0 = handler } }

    /// An answer's parse, at its peak: its size as JSON times the factor measured for
    /// `JSONValue` (`ExtensionBudget.answerFootprint`; docs/client-sdk.md, "The extension's memory").
    static func footprint(of message: FetchedMessage) -> Int {
        let text = JSONValue.object(["payload": message.payload ?? .null]).bytes.count + 200
        return text * ExtensionBudget.answerFootprint
    }

    /// Records the parse of `messageID`; false if that took the process over its limit.
    func parsed(_ messageID: String, footprint: Int) -> Bool {
        let total = inUse.withLock { inUse in
            inUse[messageID, default: 0] += footprint
            return inUse.values.reduce(Self.baseline, +)
        }
        guard total > limit else { return true }
        onOverLimit.withLock { $0 }?()
        return false
    }

    /// A run ended: what it parsed is freed.
    func release(_ messageIDs: [String]) {
        inUse.withLock { inUse in for id in messageIDs { inUse[id] = nil } }
    }

    /// What the SDK's gauge reads (`os_proc_available_memory` on a phone).
    var available: Int { max(0, limit - inUse.withLock { $0.values.reduce(Self.baseline, +) }) }
}

/// The SDK's memory gauge on the simulated phone.
struct ExtensionMemoryGauge: MemoryGaugePort {
    let memory: ExtensionMemory

    func availableBytes() -> Int? { memory.available }
}
