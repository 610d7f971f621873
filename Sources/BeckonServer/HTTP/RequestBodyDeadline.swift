/// When a request's body must be in: the transitions of `RequestBodyDeadlineHandler`, free of
/// channels and timers.
///
/// Why a deadline for the whole body and not a read timeout: a slow-body attack sends a byte
/// every few seconds, which resets any idle timer for ever (docs/reliability.md, slowloris). The
/// deadline runs from the request head to the body's end, whatever arrives in between, and also
/// after the server answered early (a 401 before the body was read): the connection is not kept
/// to drain a body no one will read.
struct RequestBodyDeadline: Sendable {
    enum State: Sendable, Equatable {
        /// Between requests (the idle timeout and the head deadline cover this).
        case idle
        /// A head came and its body has not ended. `answered`: a response head went out.
        case receiving(answered: Bool)
        /// The deadline passed: the connection is closing; nothing else is read.
        case expired
    }

    enum Action: Sendable, Equatable {
        case none
        case arm
        case cancel
        /// The body did not end in time and nothing was answered: 408, then close.
        case answerTimeoutAndClose
        /// The body did not end in time after an answer went out: close.
        case close
    }

    private(set) var state: State = .idle
    /// Request heads received and responses ended on the connection. A client may send the next
    /// request before the last answer (pipelining): a response head then belongs to an earlier
    /// request, and a 408 must not be written before an earlier answer.
    private var heads = 0
    private var responsesEnded = 0

    /// A request head; only one that declares a body arms the deadline.
    mutating func headReceived(expectsBody: Bool = true) -> Action {
        guard state != .expired else { return .none }
        heads += 1
        guard expectsBody else { return .none }
        state = .receiving(answered: false)
        return .arm
    }

    mutating func endReceived() -> Action {
        guard case .receiving = state else { return .none }
        state = .idle
        return .cancel
    }

    /// A response head went out: the current request's only if every earlier one has ended.
    mutating func responseHeadSent() {
        if case .receiving = state, responsesEnded == heads - 1 { state = .receiving(answered: true) }
    }

    mutating func responseEnded() {
        responsesEnded += 1
    }

    mutating func deadlinePassed() -> Action {
        guard case .receiving(let answered) = state else { return .none }
        state = .expired
        // An earlier request's answer is still to come: a 408 now would read as its answer.
        return answered || responsesEnded < heads - 1 ? .close : .answerTimeoutAndClose
    }

    /// Whether inbound parts still go up the pipeline (not after the deadline passed: the
    /// handler above must not see the rest of a body it was told had timed out).
    var forwardsInbound: Bool { state != .expired }
}
