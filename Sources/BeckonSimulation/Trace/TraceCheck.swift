import BeckonDelivery
import DeviceSimulator

/// Checks each message's trace (docs/trace.md) against what the run itself recorded: the APNs
/// emulator's accepted pushes, each phone's timeline, and the receipts the SDK still holds. The
/// trace is the server's account; the timeline and the emulator are the ground truth here, so a
/// disagreement is a finding, except a receipt that cannot have reached the server yet
/// (`ShownStatus.queued`, `.awaitingApp`).
struct TraceCheck {
    /// The messages to check (ids).
    var messages: [String]
    /// Message id → its trace; a posted message without one is a finding.
    var traces: [String: MessageTrace]
    /// The run's events, with ids (not yet renamed).
    var events: [TimelineEvent]
    var accepted: [AcceptedPush]
    /// Device → what its SDK holds back.
    var phones: [String: PhoneReceipts]
    /// Device → the messages its user read there.
    var reads: [String: Set<String>]
    /// Message ids → the scenario's names, for the findings.
    var names: [String: String] = [:]

    /// What the timeline says happened on each phone, by message.
    private struct PhoneRecord {
        var shown: Set<String> = []
        /// When each message was first shown.
        var shownAt: [String: Double] = [:]
        /// When the app last came to the front.
        var lastInFront: Double?
        var tapped: Set<String> = []
        var stored: Set<String> = []
        var connected = false
        /// Messages of alerts the extension finished (rewritten, or its fallback) while the app
        /// was in front: iOS asked the app (`willPresent`), which shows new messages itself.
        var presentedInFront: Set<String> = []
    }

    private var records: [String: PhoneRecord] {
        var records: [String: PhoneRecord] = [:]
        var showing: [String: [String]] = [:]  // device + identifier → the messages it shows
        var inFront: Set<String> = []
        let standsFor = Dictionary(accepted.map { ($0.device + "\u{1}" + $0.apnsID, $0.messages) }, uniquingKeysWith: { a, _ in a })
        for event in events {
            let key = event.device + "\u{1}"
            switch event.what {
            case .appState(let state):
                if state == .foreground {
                    inFront.insert(event.device)
                    records[event.device, default: PhoneRecord()].lastInFront = event.time
                } else {
                    inFront.remove(event.device)
                }
            case .extensionFinished(let push, let outcome)
            where inFront.contains(event.device) && (outcome == "rewritten" || outcome.hasPrefix("fallback-")):
                records[event.device, default: PhoneRecord()].presentedInFront.formUnion(standsFor[key + push.lowercased()] ?? [])
            case .notificationShown(let identifier, let messages, _):
                let shows = messages.isEmpty ? [identifier] : messages
                showing[key + identifier] = shows
                records[event.device, default: PhoneRecord()].shown.formUnion(shows)
                for id in shows where records[event.device]?.shownAt[id] == nil { records[event.device]?.shownAt[id] = event.time }
            case .notificationRemoved(let identifier, "tapped"):
                records[event.device, default: PhoneRecord()].tapped.formUnion(showing[key + identifier] ?? [identifier])
            case .messageStored(let id): records[event.device, default: PhoneRecord()].stored.insert(id)
            case .syncConnected: records[event.device, default: PhoneRecord()].connected = true
            default: break
            }
        }
        return records
    }

    /// Every device's shown status for every message it was shown or reported shown.
    func shownStatuses() -> [String: [String: ShownStatus]] {
        let records = self.records
        var statuses: [String: [String: ShownStatus]] = [:]
        for id in messages {
            var devices = Set(records.filter { $0.value.shown.contains(id) }.keys)
            for device in traces[id]?.devices ?? [] where device.events.contains(where: { $0.type == .shown }) {
                devices.insert(device.deviceId)
            }
            for device in devices {
                statuses[id, default: [:]][device] = shownStatus(id, on: device, records[device] ?? PhoneRecord())
            }
        }
        return statuses
    }

    private func shownStatus(_ id: String, on device: String, _ record: PhoneRecord) -> ShownStatus {
        let reported = events(of: id, on: device).contains { $0.type == .shown }
        let shown = record.shown.contains(id)
        switch (shown, reported) {
        case (true, true): return .reported
        case (false, true): return record.presentedInFront.contains(id) ? .declinedInFront : .unfounded
        case (false, false): return .notShown
        case (true, false):
            let phone = phones[device] ?? PhoneReceipts()
            if phone.isPending(id, .shown) { return .queued }
            // Unknown to the SDK is honest only until the app next comes to the front.
            let cameBack = record.lastInFront.map { $0 >= (record.shownAt[id] ?? 0) } ?? false
            return phone.inLedger.contains(id) || cameBack ? .lost : .awaitingApp
        }
    }

    private func events(of id: String, on device: String) -> [TraceEvent] {
        traces[id]?.devices.first { $0.deviceId == device }?.events ?? []
    }

    /// Fills in the traces and the phones' receipts with `read`, and again while there are
    /// findings, at most `looks` times, 100 ms apart: a receipt or an ack still on its way over
    /// loopback gets a moment before it counts as missing. Returns the last look's findings.
    mutating func settle(looks: Int = 10, _ read: (inout TraceCheck) async throws -> Void) async throws -> [TraceFinding] {
        var findings: [TraceFinding] = []
        for look in 0..<max(1, looks) {
            if look > 0 { try await Task.sleep(for: .milliseconds(100)) }
            try await read(&self)
            findings = self.findings()
            if findings.isEmpty { break }
        }
        return findings
    }

    /// Every disagreement, message by message and device by device.
    func findings() -> [TraceFinding] {
        let records = self.records
        let statuses = shownStatuses()
        var findings: [TraceFinding] = []
        for id in messages {
            let name = names[id] ?? id
            guard let trace = traces[id] else {
                findings.append(TraceFinding(device: "server", message: name, problem: "the server has no trace of it"))
                continue
            }
            var devices = Set(trace.devices.map(\.deviceId))
            devices.formUnion(accepted.filter { $0.messages.contains(id) }.map(\.device))
            devices.formUnion(records.filter { $0.value.shown.contains(id) || $0.value.stored.contains(id) }.keys)
            devices.formUnion(reads.filter { $0.value.contains(id) }.keys)
            for device in devices.sorted() {
                var problems = check(id, on: device, record: records[device] ?? PhoneRecord(), trace: trace)
                switch statuses[id]?[device] {
                case .lost?:
                    problems.append(
                        "shown on the timeline, known to the SDK or followed by the app in front, but no shown receipt was queued or reached the server")
                case .unfounded?: problems.append("the trace says shown; the timeline never showed it")
                default: break
                }
                findings += problems.map { TraceFinding(device: device, message: name, problem: $0) }
            }
        }
        return findings
    }

    private func check(_ id: String, on device: String, record: PhoneRecord, trace: MessageTrace) -> [String] {
        let events = self.events(of: id, on: device)
        let kinds = Set(events.map(\.type))
        let phone = phones[device] ?? PhoneReceipts()
        var problems: [String] = []
        // Every push APNs accepted for it is in the trace, decided and sent, under its apns-id.
        let pushes = Dictionary(events.filter { $0.type == .push }.map { ($0.pushId ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        for push in accepted where push.device == device && push.messages.contains(id) {
            guard let decided = events.first(where: { $0.type == .push && $0.apnsId?.lowercased() == push.apnsID }) else {
                problems.append("APNs accepted \(push.reason ?? push.type) push \(push.apnsID); the trace has no push with that apns-id")
                continue
            }
            if !events.contains(where: { $0.type == .apns && $0.pushId == decided.pushId && $0.outcome == "sent" }) {
                problems.append("APNs accepted push \(push.apnsID); the trace has no apns sent for it")
            }
        }
        // Every push the trace says APNs accepted, the emulator accepted for this phone.
        for attempt in events where attempt.type == .apns && attempt.outcome == "sent" {
            let apnsID = attempt.pushId.flatMap { pushes[$0]?.apnsId?.lowercased() }
            if !accepted.contains(where: { $0.device == device && $0.apnsID == apnsID }) {
                problems.append("the trace says APNs accepted push \(apnsID ?? "?"); the emulator has no such push for this phone")
            }
        }
        // Taps are `opened`, and only taps.
        if record.tapped.contains(id), !kinds.contains(.opened), !phone.isPending(id, .opened) {
            problems.append("tapped on the timeline; no opened receipt queued or in the trace")
        }
        if kinds.contains(.opened), !record.tapped.contains(id) {
            problems.append("the trace says opened; no notification showing it was tapped")
        }
        // What the phone stored its sync acknowledged, or its extension fetched.
        if record.stored.contains(id), !kinds.contains(.synced) {
            problems.append("stored on the phone; the trace has no synced")
        }
        if kinds.contains(.synced), !record.stored.contains(id), !record.shown.contains(id) {
            problems.append("the trace says synced; the phone never stored or showed it")
        }
        // Reads here and elsewhere.
        let readHere = reads[device]?.contains(id) ?? false
        if readHere != kinds.contains(.read) {
            problems.append(readHere ? "read on this phone; the trace has no read" : "the trace says read here; it was not")
        }
        let user = trace.devices.first { $0.deviceId == device }?.userId
        let readers = reads.filter { $0.key != device && $0.value.contains(id) }.keys
            .filter { reader in trace.devices.contains { $0.deviceId == reader && $0.userId == user } }
        for reader in readers.sorted()
        where !events.contains(where: { $0.type == .readElsewhere && $0.deviceId == reader }) {
            problems.append("read on \(reader); the trace has no read-elsewhere naming it")
        }
        if kinds.contains(.woke), !record.connected {
            problems.append("the trace says the app woke; the phone never connected")
        }
        if kinds.contains(.expired), record.stored.contains(id) {
            problems.append("the trace says expired; the phone stored it")
        }
        return problems
    }
}
