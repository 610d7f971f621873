/// The newest notifications of one device, oldest first, at most `limit` of them
/// (`APNSEmulatorConfiguration.deliveryLogLimit`): a ring, so a device that receives a million
/// pushes costs O(1) per push and exactly `limit` entries, however long the emulator runs (a
/// `beckon serve` on its built-in emulator runs for months).
struct DeliveryLog: Sendable {
    private var storage: [APNSEmulatorNotification] = []
    /// Where the oldest entry is once the ring is full (0 until then).
    private var oldest = 0

    /// Entries kept.
    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }

    /// Oldest first.
    var entries: [APNSEmulatorNotification] {
        oldest == 0 ? storage : Array(storage[oldest...] + storage[..<oldest])
    }

    /// Appends `notification`, replacing the oldest entry when `limit` are kept already.
    mutating func append(_ notification: APNSEmulatorNotification, limit: Int) {
        if storage.count < limit {
            storage.append(notification)
        } else {
            storage[oldest] = notification
            oldest = (oldest + 1) % storage.count
        }
    }

    /// Removes the entries `predicate` matches (O(n): only for collapse ids, which replace).
    mutating func removeAll(where predicate: (APNSEmulatorNotification) -> Bool) {
        guard storage.contains(where: predicate) else { return }
        storage = entries.filter { !predicate($0) }
        oldest = 0
    }

    mutating func removeAll() {
        storage = []
        oldest = 0
    }
}
