import BeckonDelivery
import BeckonJSON
import BeckonProtocol
import DeviceSimulator
import Foundation

extension Scenario {
    /// Reads a scenario file (docs/simulator.md, "Writing a scenario"). Durations are virtual
    /// seconds. Every error names the field.
    public init(json: JSONValue) throws(ScenarioError) {
        let root = try ScenarioReader(
            json, path: "",
            allowed: [
                "name", "summary", "timeScale", "seed", "strategy", "delivery", "devices", "steps", "duration", "checks",
                "allowViolations",
            ])
        let devices = try Self.list(root, "devices") { (reader) throws(ScenarioError) in try ScenarioDevice(reader) }
        guard !devices.isEmpty else { throw ScenarioError("devices", "needs at least one device") }
        let steps = try Self.list(root, "steps") { (reader) throws(ScenarioError) in try ScenarioStep(reader) }
        let checks = try Self.list(root, "checks") { (reader) throws(ScenarioError) in try ScenarioCheck(reader) }
        var allowed: Set<TimelineEvent.Violation> = []
        for name in try root.strings("allowViolations") ?? [] {
            guard let violation = TimelineEvent.Violation(rawValue: name) else {
                throw ScenarioError("allowViolations", "unknown violation \"\(name)\"")
            }
            allowed.insert(violation)
        }
        let timeScale = try root.number("timeScale") ?? 50
        // Below 1 the phones and the server would run at different speeds.
        guard timeScale >= 1, timeScale <= 1000 else { throw ScenarioError("timeScale", "must be from 1 to 1000") }
        let seed = try root.number("seed") ?? 1
        guard seed >= 0, seed < 0x1p53, seed.rounded() == seed else {
            throw ScenarioError("seed", "must be a whole number from 0 to 2^53")
        }
        self.init(
            name: try root.required("name"), summary: try root.string("summary") ?? "",
            timeScale: timeScale, seed: UInt64(seed),
            strategy: try root.enumeration("strategy", DeliveryStrategy.self) ?? .wake,
            delivery: try DeliveryPolicy(scenario: root.object["delivery"]),
            devices: devices, steps: steps, duration: try root.number("duration") ?? 120, checks: checks,
            allowedViolations: allowed)
        let names = Set(devices.map(\.name))
        for (index, step) in steps.enumerated() {
            if let device = step.action.device, !names.contains(device) {
                throw ScenarioError("steps[\(index)].device", "no device named \"\(device)\"")
            }
        }
        for (index, check) in checks.enumerated() where !names.contains(check.device) {
            throw ScenarioError("checks[\(index)].device", "no device named \"\(check.device)\"")
        }
    }

    /// Reads a scenario file from disk.
    public init(file path: String) throws(ScenarioError) {
        let bytes: [UInt8]
        do {
            bytes = Array(try ContentsOfFile.read(path))
        } catch {
            throw ScenarioError("", "cannot read \(path): \(error)")
        }
        guard let json = try? JSONParser.parse(bytes) else { throw ScenarioError("", "\(path) is not JSON") }
        try self.init(json: json)
    }

    private static func list<Item>(
        _ root: ScenarioReader, _ key: String, _ read: (ScenarioReader) throws(ScenarioError) -> Item
    ) throws(ScenarioError) -> [Item] {
        guard let value = root.object[key] else { return [] }
        guard case .array(let items) = value else { throw ScenarioError(key, "must be an array") }
        var result: [Item] = []
        for (index, item) in items.enumerated() {
            result.append(try read(try ScenarioReader(item, path: "\(key)[\(index)]", allowed: Self.fields(key))))
        }
        return result
    }

    private static func fields(_ list: String) -> Set<String> {
        switch list {
        case "devices": ["name", "user", "app", "ios"]
        case "steps": ["at", "do", "device", "message", "messages", "to", "text", "kind", "urgency", "as", "call", "outcome"]
        default: ["check", "device", "messages", "kind", "fields", "min", "max", "at"]
        }
    }
}

extension ScenarioAction {
    /// The phone a step acts on, if it acts on one.
    var device: String? {
        switch self {
        case .user(let device, _), .tap(let device, _), .swipeAway(let device, _), .read(let device, _): device
        case .post, .endCall: nil
        }
    }
}

extension ScenarioCheck {
    /// The phone a check looks at.
    var device: String {
        switch self {
        case .stored(let device, _), .notified(let device, _), .notNotified(let device, _), .showing(let device, _, _),
            .opened(let device, _), .events(let device, _, _, _, _):
            device
        }
    }
}

extension ScenarioDevice {
    init(_ reader: ScenarioReader) throws(ScenarioError) {
        let name = try reader.required("name")
        var app = AppTraits()
        if let value = reader.object["app"] {
            let traits = try ScenarioReader(
                value, path: reader.at("app"),
                allowed: ["serviceExtension", "filtering", "remoteNotificationMode", "voip", "reportsCalls"])
            app.serviceExtension = try traits.bool("serviceExtension") ?? app.serviceExtension
            app.filtering = try traits.bool("filtering") ?? app.filtering
            app.remoteNotificationMode = try traits.bool("remoteNotificationMode") ?? app.remoteNotificationMode
            app.voip = try traits.bool("voip") ?? app.voip
            app.reportsCalls = try traits.bool("reportsCalls") ?? app.reportsCalls
        }
        var ios = IOSPolicy()
        if let value = reader.object["ios"] {
            let keys: [(String, WritableKeyPath<IOSPolicy, Double>)] = [
                ("backgroundPushSeconds", \.backgroundPushSeconds), ("backgroundTaskSeconds", \.backgroundTaskSeconds),
                ("suspendGraceSeconds", \.suspendGraceSeconds), ("extensionSeconds", \.extensionSeconds),
                ("backgroundLaunchesPerHour", \.backgroundLaunchesPerHour), ("backgroundBurst", \.backgroundBurst),
                ("backgroundDropRate", \.backgroundDropRate), ("rebootLaunchDeferralSeconds", \.rebootLaunchDeferralSeconds),
                ("networkLatencySeconds", \.networkLatencySeconds),
            ]
            let policy = try ScenarioReader(
                value, path: reader.at("ios"), allowed: Set(keys.map(\.0) + ["extensionMemoryBytes", "voipFailuresBeforeBlock"]))
            for (key, path) in keys { if let number = try policy.number(key) { ios[keyPath: path] = number } }
            if let bytes = try policy.number("extensionMemoryBytes") { ios.extensionMemoryBytes = Int(bytes) }
            if let count = try policy.number("voipFailuresBeforeBlock") { ios.voipFailuresBeforeBlock = Int(count) }
        }
        self.init(name, user: try reader.string("user") ?? name, app: app, ios: ios)
    }
}

extension ScenarioStep {
    init(_ reader: ScenarioReader) throws(ScenarioError) {
        guard let at = try reader.number("at") else { throw ScenarioError(reader.at("at"), "is required") }
        let verb = try reader.required("do")
        func device() throws(ScenarioError) -> String { try reader.required("device") }
        func message() throws(ScenarioError) -> String { try reader.required("message") }
        let action: ScenarioAction
        switch verb {
        case "launch": action = .user(device: try device(), .launch)
        case "home": action = .user(device: try device(), .home)
        case "open-switcher": action = .user(device: try device(), .openSwitcher)
        case "close-switcher": action = .user(device: try device(), .closeSwitcher)
        case "force-quit": action = .user(device: try device(), .forceQuit)
        case "reboot": action = .user(device: try device(), .reboot)
        case "unlock": action = .user(device: try device(), .unlock)
        case "go-offline": action = .user(device: try device(), .goOffline)
        case "go-online": action = .user(device: try device(), .goOnline)
        case "tap": action = .tap(device: try device(), message: try message())
        case "swipe-away": action = .swipeAway(device: try device(), message: try message())
        case "read":
            // `messages` for several, `message` for one.
            var messages = try reader.strings("messages") ?? []
            if messages.isEmpty { messages = [try message()] }
            action = .read(device: try device(), messages: messages)
        case "post":
            action = .post(
                name: try reader.required("as"), to: try reader.strings("to") ?? [],
                text: try reader.string("text") ?? "", kind: try reader.enumeration("kind", MessageKind.self) ?? .message,
                urgency: try reader.enumeration("urgency", MessageUrgency.self))
        case "end-call":
            guard let outcome = try reader.enumeration("outcome", CallEndOutcome.self) else {
                throw ScenarioError(reader.at("outcome"), "is required")
            }
            action = .endCall(call: try reader.required("call"), outcome: outcome)
        default:
            throw ScenarioError(
                reader.at("do"),
                "unknown action \"\(verb)\"; expected launch, home, open-switcher, close-switcher, force-quit, reboot, unlock, go-offline, go-online, tap, swipe-away, read, post or end-call"
            )
        }
        self.init(at: at, action)
    }
}

extension ScenarioCheck {
    init(_ reader: ScenarioReader) throws(ScenarioError) {
        let device = try reader.required("device")
        let messages = try reader.strings("messages") ?? []
        switch try reader.required("check") {
        case "stored": self = .stored(device: device, messages: messages)
        case "notified": self = .notified(device: device, messages: messages)
        case "not-notified": self = .notNotified(device: device, messages: messages)
        case "showing": self = .showing(device: device, messages: messages, at: try reader.number("at"))
        case "opened": self = .opened(device: device, messages: messages)
        case "events":
            var fields: [String: String] = [:]
            if let value = reader.object["fields"] {
                let object = try ScenarioReader(
                    value, path: reader.at("fields"), allowed: Set(value.objectValue?.keys.map { $0 } ?? []))
                for key in object.object.keys {
                    guard let text = try object.string(key) else { continue }
                    fields[key] = text
                }
            }
            self = .events(
                device: device, kind: try reader.required("kind"), fields: fields, min: Int(try reader.number("min") ?? 1),
                max: try reader.number("max").map { Int($0) })
        case let other:
            throw ScenarioError(
                reader.at("check"),
                "unknown check \"\(other)\"; expected stored, notified, not-notified, showing, opened or events")
        }
    }
}

extension DeliveryPolicy {
    /// The scenario's `delivery` object: the settings a scenario may change, in virtual seconds.
    init(scenario value: JSONValue?) throws(ScenarioError) {
        self.init()
        guard let value else { return }
        let seconds: [(String, WritableKeyPath<DeliveryPolicy, TimeInterval>)] = [
            ("reconnectWindow", \.reconnectWindow), ("backgroundThrottleWindow", \.backgroundThrottleWindow),
            ("repushInitialDelay", \.repushInitialDelay), ("callRingInterval", \.callRingInterval),
            ("callTimeout", \.callTimeout), ("clearAllInterval", \.clearAllInterval),
            ("alertTimeToLive", \.alertTimeToLive), ("backgroundTimeToLive", \.backgroundTimeToLive),
        ]
        let reader = try ScenarioReader(
            value, path: "delivery",
            allowed: Set(seconds.map(\.0) + ["throttledAlertDelay", "backgroundPushesPerHour", "repushLimit"]))
        for (key, path) in seconds { if let number = try reader.number(key) { self[keyPath: path] = number } }
        if let delay = try reader.number("throttledAlertDelay") { throttledAlertDelay = delay }
        if let count = try reader.number("backgroundPushesPerHour") { backgroundPushesPerHour = Int(count) }
        if let count = try reader.number("repushLimit") { repushLimit = Int(count) }
    }
}
