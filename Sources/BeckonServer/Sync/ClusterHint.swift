import BeckonJSON
import BeckonProtocol
import BeckonStore
import Foundation

/// What one node tells the others over PostgreSQL's NOTIFY (docs/cluster.md, "Hints"): small
/// wake-ups, never message bodies. A node that gets `mailbox` wakes its sessions of those users,
/// which read the mailbox by cursor as they always do; a lost hint costs latency only (the
/// polling fallback finds the change), never a message.
public enum ClusterHint: Codable, Hashable, Sendable {
    /// New messages in these users' mailboxes.
    case mailbox(app: String, users: [String])
    /// New messages for so many users of the app that naming them would not fit: wake all.
    case mailboxAll(app: String)
    /// A call ended: live sessions of these users end it in CallKit (rule 6).
    case callEnded(app: String, users: [String], callID: String, outcome: CallEndOutcome)
    /// The user's device `device` read these: the user's other sessions clear them (rule 7).
    case read(app: String, user: String, device: String, ids: [String], badge: Int)
    /// The device was deleted or registered again at `at` (ms): close its sessions that
    /// connected before then with 4003 (a session of the new registration may be live already).
    case revoke(app: String, device: String, at: Int64)
    /// A newer session took this one's slot on another node: close it (4001, or 4002 for an
    /// extension session preempted by the app).
    case close(node: String, app: String, device: String, session: String, code: UInt16)

    /// Past this many users a mailbox hint says "everyone of the app" instead.
    static let mostNamedUsers = 1_000

    /// Two hints that say together what this one says, when it is too long for one NOTIFY; nil
    /// if it cannot be split.
    func halves() -> (ClusterHint, ClusterHint)? {
        func split<T>(_ items: [T]) -> ([T], [T])? {
            items.count < 2 ? nil : (Array(items[..<(items.count / 2)]), Array(items[(items.count / 2)...]))
        }
        switch self {
        case .mailbox(let app, let users):
            return split(users).map { (.mailbox(app: app, users: $0), .mailbox(app: app, users: $1)) }
        case .callEnded(let app, let users, let callID, let outcome):
            return split(users).map {
                (.callEnded(app: app, users: $0, callID: callID, outcome: outcome),
                 .callEnded(app: app, users: $1, callID: callID, outcome: outcome))
            }
        case .read(let app, let user, let device, let ids, let badge):
            return split(ids).map {
                (.read(app: app, user: user, device: device, ids: $0, badge: badge),
                 .read(app: app, user: user, device: device, ids: $1, badge: badge))
            }
        case .mailboxAll, .revoke, .close:
            return nil
        }
    }
}

/// One NOTIFY's payload: the sending node (which ignores its own) and its hints.
struct ClusterHintBatch: Codable, Sendable {
    var from: String
    var hints: [ClusterHint]

    /// PostgreSQL refuses payloads of 8000 bytes or more; this leaves room.
    static let maximumPayloadBytes = 7_800

    /// The payloads that carry `hints` from `node`, each under the limit, in order. A hint that
    /// cannot fit even alone is dropped (and counted): a lost hint costs only latency.
    static func payloads(from node: String, _ hints: [ClusterHint], dropped: inout Int) -> [String] {
        let encoder = JSONStreamEncoder()
        let overhead = (try? encoder.encode(ClusterHintBatch(from: node, hints: [])).count) ?? 64
        var payloads: [String] = []
        var current: [ClusterHint] = []
        var size = overhead
        var pending = hints[...]
        while let hint = pending.popFirst() {
            guard let encoded = try? encoder.encode(hint) else { dropped += 1; continue }
            if overhead + encoded.count > maximumPayloadBytes {
                if let (first, second) = hint.halves() {
                    pending = [first, second] + pending
                } else {
                    dropped += 1
                }
                continue
            }
            if size + encoded.count + 1 > maximumPayloadBytes {
                payloads.append(encode(node, current, encoder))
                current = []
                size = overhead
            }
            current.append(hint)
            size += encoded.count + 1
        }
        if !current.isEmpty { payloads.append(encode(node, current, encoder)) }
        return payloads
    }

    private static func encode(_ node: String, _ hints: [ClusterHint], _ encoder: JSONStreamEncoder) -> String {
        String(decoding: (try? encoder.encode(ClusterHintBatch(from: node, hints: hints))) ?? [], as: UTF8.self)
    }
}
