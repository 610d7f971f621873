import NIOCore

/// Apple: on a mostly idle connection, send a PING; idle connections are also reset silently by
/// middleboxes (apns.md C.1, G.6). A PING unanswered for a whole interval means the connection
/// is dead.
struct APNSKeepAlive {
    enum Action: Equatable {
        case none
        /// Send a PING and flush.
        case ping
        /// Close the connection: the last PING went unanswered.
        case close
    }

    let interval: TimeAmount
    private var lastActivity: NIODeadline
    private var lastCheck: NIODeadline
    private var pingOutstanding = false

    init(interval: TimeAmount, now: NIODeadline) {
        self.interval = interval
        lastActivity = now
        lastCheck = now
    }

    mutating func sawActivity(_ now: NIODeadline) { lastActivity = now }

    mutating func pingAnswered() { pingOutstanding = false }

    /// Called on every tick; decides once per interval.
    mutating func check(now: NIODeadline) -> Action {
        guard now - lastCheck >= interval else { return .none }
        lastCheck = now
        if pingOutstanding { return .close }
        guard now - lastActivity >= interval else { return .none }
        pingOutstanding = true
        return .ping
    }
}
