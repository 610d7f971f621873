import BeckonStore
import NIOCore

/// The dispatcher's bookkeeping of claimed pushes as a value type with pure transitions: which
/// app may claim more and how many, which claimed pushes may start now, and what a finished send
/// frees. No store, clock or network here (OutboxQueueStateMachineTests).
///
/// Each app has `slots` requests to APNs in flight at most (a bulkhead: an app whose pushes hang
/// holds only its own slots) and holds at most `holdLimit` claimed pushes, queued, in flight or
/// with their result not yet stored, so a held push starts inside its claim's lease.
///
/// Pushes come in two ways. The planner hands over the pushes it decides while their app has
/// room (`reserve`, then `handedOver` once they are saved, already claimed): the common case
/// costs no claim. Whatever does not fit stays pending in the outbox, and so do retries and other
/// nodes' pushes; the outbox is claimed only while it may hold due pushes (`mayHoldDue`). While it
/// holds pushes the planner saved without handing them over (a backlog), nothing is handed over,
/// so pushes still go out in the order they were decided.
struct OutboxQueueStateMachine {
    /// A claimed push and its device as read at claim time.
    struct Item {
        var push: OutboxPush
        var device: Device?
        var app: String { push.device.appID }
    }

    let slots: Int
    /// Claimed pushes an app may hold per slot (`PushDispatcher.holdPerSlot(lease:)`: eight with
    /// the default lease). Two means small claim pages, one commit each: in a 100,000-device
    /// burst that caps the sender at about 4,000 pushes/s.
    let holdPerSlot: Int
    var holdLimit: Int { slots * holdPerSlot }

    private var queued: [String: CircularBuffer<Item>] = [:]
    private var inFlight: [String: Int] = [:]
    private var held: [String: Int] = [:]
    /// Held ids: a claim that brings one back (its lease ran out while it waited here) does not
    /// queue it a second time.
    private var heldIDs: Set<String> = []
    /// Apps whose outbox may hold due pushes that are not held here, with when that was last
    /// said: a claim that finds the outbox drained clears the mark only if it was not said again
    /// while the claim ran (pushes saved meanwhile would wait for the next poll otherwise).
    private var mayHoldDue: [String: UInt64] = [:]
    private var told: UInt64 = 0
    /// Apps whose outbox holds pushes decided before the ones the planner is deciding now.
    private var backlogged: Set<String> = []
    /// Nothing is handed over before the first poll: the dispatcher releases the claims of a
    /// previous run first, and the outbox's backlog goes before new pushes.
    private var polled = false

    init(slots: Int, holdPerSlot: Int = 8) {
        self.slots = max(1, slots)
        self.holdPerSlot = max(2, holdPerSlot)
    }

    /// How many pushes `app` should claim now, or nil to skip it: only while its outbox may
    /// hold due pushes, and in pages of at least half the hold limit, not a slot at a time,
    /// since each claim is a write.
    func claimSize(for app: String) -> Int? {
        guard mayHoldDue[app] != nil else { return nil }
        let room = holdLimit - held[app, default: 0]
        return room >= holdLimit / 2 ? room : nil
    }

    /// Taken before a claim of `app` and given back with its page (`claimed(_:of:asked:ticket:)`).
    func claimTicket(for app: String) -> UInt64 { mayHoldDue[app] ?? 0 }

    /// Takes a page of claimed pushes; those already held are ignored. A page shorter than
    /// `asked` took every due push there was: unless the outbox was said to hold more since
    /// `ticket` was taken, `app` is not claimed again until told.
    mutating func claimed(_ items: [Item], of app: String, asked: Int, ticket: UInt64) {
        for item in items where heldIDs.insert(item.push.id).inserted {
            queued[item.app, default: []].append(item)
            held[item.app, default: 0] += 1
        }
        if items.count < asked, mayHoldDue[app] == ticket {
            mayHoldDue[app] = nil
            backlogged.remove(app)
        }
    }

    /// The outbox of `app` may hold due pushes this queue does not hold: due again (a retry's
    /// time, a lapsed lease, another node's), or, with `backlog`, saved without being handed over.
    mutating func mayHoldDue(_ app: String, backlog: Bool = false) {
        told += 1
        mayHoldDue[app] = told
        if backlog { backlogged.insert(app) }
    }

    /// Every app's outbox may hold due pushes, so each is claimed once more: at the start (with
    /// `backlog`: what a previous run left goes first), then at every idle poll (retries falling
    /// due, leases run out, other nodes' pushes).
    mutating func pollAll(_ apps: some Sequence<String>, backlog: Bool = false) {
        for app in apps { mayHoldDue(app, backlog: backlog) }
        polled = true
    }

    /// Room for up to `count` pushes the planner is about to save: how many of them it may hand
    /// over (they count as held from now on). None while the app has a backlog, so that it goes
    /// first; what is not granted stays pending in the outbox (a backlog now).
    mutating func reserve(for app: String, upTo count: Int) -> Int {
        guard polled, !backlogged.contains(app) else { return 0 }
        let granted = max(0, min(count, holdLimit - held[app, default: 0]))
        held[app, default: 0] += granted
        if granted < count { mayHoldDue(app, backlog: true) }
        return granted
    }

    /// Reserved pushes, saved already claimed: queued to be sent.
    mutating func handedOver(_ items: [Item]) {
        for item in items where heldIDs.insert(item.push.id).inserted {
            queued[item.app, default: []].append(item)
        }
    }

    /// Reserved room that was not used (the save failed, or left these pushes out).
    mutating func cancelReservation(for app: String, count: Int) {
        held[app, default: 0] -= count
    }

    /// The queued pushes that fit their app's free slots, now counted in flight.
    mutating func takeStartable() -> [Item] {
        var startable: [Item] = []
        // The keys copied out: iterating `queued.keys` itself would share the dictionary's
        // storage, and every `removeFirst` below would copy the app's whole queue.
        for app in Array(queued.keys) {
            let free = slots - inFlight[app, default: 0]
            guard free > 0 else { continue }
            let count = min(free, queued[app]?.count ?? 0)
            for _ in 0..<count { startable.append(queued[app]!.removeFirst()) }
            inFlight[app, default: 0] += count
        }
        return startable
    }

    /// APNs answered a push (whatever the answer): its slot is free for the next send. Its hold
    /// lasts until `finished`, so pushes whose results wait for the store count against the
    /// app's hold limit rather than piling up.
    mutating func answered(_ push: OutboxPush) {
        inFlight[push.device.appID, default: 1] -= 1
    }

    /// A push's result is stored (after `answered`): its hold is free.
    mutating func finished(_ push: OutboxPush) {
        held[push.device.appID, default: 1] -= 1
        heldIDs.remove(push.id)
    }

    /// Pushes held for `app`, queued or in flight.
    func heldCount(for app: String) -> Int { held[app, default: 0] }
}
