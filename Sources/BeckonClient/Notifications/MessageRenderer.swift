/// The app's text for a message: its title and body from the payload, which only the app
/// understands. Nil keeps the generic text.
public typealias MessageRenderer = @Sendable (DisplayableMessage) -> NotificationContent?
