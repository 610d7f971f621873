import BeckonStore

/// The dispatcher's bookkeeping of claimed pushes as a value type with pure transitions: which
/// app may claim more and how many, which claimed pushes may start now, and what a finished send
/// frees. No store, clock or network here (OutboxQueueStateMachineTests).
///
/// Each app has `slots` sends in flight at most (a bulkhead: an app whose pushes hang holds only
/// its own slots) and holds at most `holdLimit` claimed pushes, queued or in flight, so a held
/// push starts within a couple of send deadlines — well inside its claim's lease.
struct OutboxQueueStateMachine {
    /// A claimed push and its device as read at claim time.
    struct Item {
        var push: OutboxPush
        var device: Device?
        var app: String { push.device.appID }
    }

    let slots: Int
    var holdLimit: Int { slots * 2 }

    private var queued: [String: [Item]] = [:]
    private var inFlight: [String: Int] = [:]
    private var held: [String: Int] = [:]
    /// Held ids: a claim that brings one back (its lease ran out while it waited here) does not
    /// queue it a second time.
    private var heldIDs: Set<String> = []

    init(slots: Int) {
        self.slots = max(1, slots)
    }

    /// How many pushes `app` should claim now, or nil to skip it: claims come in pages of at
    /// least half the hold limit, not a slot at a time, since each claim is a write.
    func claimSize(for app: String) -> Int? {
        let room = holdLimit - held[app, default: 0]
        return room >= holdLimit / 2 ? room : nil
    }

    /// Takes a page of claimed pushes; those already held are ignored.
    mutating func claimed(_ items: [Item]) {
        for item in items where heldIDs.insert(item.push.id).inserted {
            queued[item.app, default: []].append(item)
            held[item.app, default: 0] += 1
        }
    }

    /// The queued pushes that fit their app's free slots, now counted in flight.
    mutating func takeStartable() -> [Item] {
        var startable: [Item] = []
        for (app, queue) in queued where !queue.isEmpty {
            let free = slots - inFlight[app, default: 0]
            guard free > 0 else { continue }
            let taken = queue.prefix(free)
            startable += taken
            queued[app] = Array(queue.dropFirst(taken.count))
            inFlight[app, default: 0] += taken.count
        }
        return startable
    }

    /// A send ended (whatever its result): its slot and its hold are free.
    mutating func finished(_ push: OutboxPush) {
        let app = push.device.appID
        inFlight[app, default: 1] -= 1
        held[app, default: 1] -= 1
        heldIDs.remove(push.id)
    }

    /// Pushes held for `app`, queued or in flight.
    func heldCount(for app: String) -> Int { held[app, default: 0] }
}
