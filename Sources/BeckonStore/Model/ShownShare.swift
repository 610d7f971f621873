/// Of an app's messages in a window, how many a device reported shown in time (its `shown`
/// receipt), by the strategy of the pushes that stood for them: `live` for messages no push stood
/// for (they went over a connection). A message counts once, shown when any recipient device
/// showed it.
public struct ShownShare: Hashable, Sendable {
    public var strategy: String
    public var messages: Int
    public var shown: Int

    public init(strategy: String, messages: Int, shown: Int) {
        self.strategy = strategy
        self.messages = messages
        self.shown = shown
    }

    /// `shown ÷ messages`; nil with no message.
    public var share: Double? { messages == 0 ? nil : Double(shown) / Double(messages) }
}
