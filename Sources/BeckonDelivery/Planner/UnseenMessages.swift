/// What a disconnected device has not seen (rule 11): the alertable messages that arrived since
/// its last session, or crossed its `bye` unacknowledged, less those read elsewhere or shown by
/// its extension. Every message alert names them, because an offline phone gets only the last
/// alert APNs holds for it (apns.md E.1): that one must stand for all of them.
struct UnseenMessages: Hashable, Sendable, Codable {
    /// The newest ids, oldest first; at most the policy's `maximumIDsPerPush`.
    private(set) var ids: [String] = []
    /// How many in all, counting the older ones no longer in `ids`.
    private(set) var count = 0
    /// The collapse id of every alert about them: the first one's id. On a phone that is online
    /// each alert then replaces the one before (apns.md E.2) instead of showing the earlier
    /// messages a second time; offline, the one APNs keeps names them all.
    private(set) var batchID: String?

    var isEmpty: Bool { count == 0 }

    mutating func add(_ new: [String], limit: Int) {
        for id in new where !ids.contains(id) {
            ids.append(id)
            count += 1
            if batchID == nil { batchID = id }
        }
        ids = Array(ids.suffix(max(limit, 1)))
    }

    /// The user has these (read, or shown by the extension). Those dropped from `ids` cannot be
    /// recognised, so `count` may stay too high for them: it only ever says "and N more".
    mutating func forget(_ gone: Set<String>) {
        let before = ids.count
        ids.removeAll { gone.contains($0) }
        count = ids.isEmpty ? 0 : count - (before - ids.count)
        if ids.isEmpty { batchID = nil }
    }
}
