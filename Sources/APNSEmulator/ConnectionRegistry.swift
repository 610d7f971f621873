import NIOConcurrencyHelpers
import NIOCore

/// A live connection, for the emulator's API (shutdown, faults on live connections).
struct ConnectionHandle: Sendable {
    let channel: Channel
    let handler: NIOLoopBound<EmulatorConnectionHandler>

    func run(_ body: @escaping @Sendable (EmulatorConnectionHandler) -> Void) {
        let handler = self.handler
        channel.eventLoop.execute { body(handler.value) }
    }
}

final class ConnectionRegistry: Sendable {
    private let state = NIOLockedValueBox<(next: Int, handles: [Int: ConnectionHandle])>((0, [:]))

    func add(_ handle: ConnectionHandle) -> Int {
        state.withLockedValue { state in
            state.next += 1
            state.handles[state.next] = handle
            return state.next
        }
    }

    func remove(_ id: Int) { _ = state.withLockedValue { $0.handles.removeValue(forKey: id) } }

    var all: [ConnectionHandle] { state.withLockedValue { Array($0.handles.values) } }
}
