import APNSCore
import BeckonJSON
import Foundation

/// An error the control API answers as `{"error":{"code":...,"message":...}}`.
struct ControlError: Error, Sendable {
    var status: Int
    var code: String
    var message: String

    static func badRequest(_ message: String, code: String = "bad-request") -> ControlError {
        ControlError(status: 400, code: code, message: message)
    }

    static func notFound(_ message: String, code: String = "not-found") -> ControlError {
        ControlError(status: 404, code: code, message: message)
    }

    static func unknownDevice(_ token: String) -> ControlError {
        .notFound("no device with token \(token)", code: "unknown-device")
    }
}

/// What the control API answers: a status and a JSON document.
struct ControlResponse: Sendable {
    var status: Int
    var body: [UInt8]

    init(status: Int = 200, json: JSONValue) {
        self.status = status
        body = json.bytes + [UInt8(ascii: "\n")]
    }

    init(error: ControlError) {
        self.init(status: error.status, json: ["error": ["code": .string(error.code), "message": .string(error.message)]])
    }
}

/// A request body as a JSON object, with typed accessors that fail as 400s naming the field.
struct ControlBody {
    let fields: [String: JSONValue]

    init(_ bytes: [UInt8]) throws {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            fields = [:]  // An empty body is an empty object: every field optional then.
            return
        }
        guard let value = try? JSONParser.parse(bytes) else {
            throw ControlError.badRequest("the body is not valid JSON", code: "invalid-json")
        }
        guard case .object(let object) = value else {
            throw ControlError.badRequest("the body must be a JSON object", code: "invalid-json")
        }
        fields = object
    }

    private func present(_ key: String) -> JSONValue? {
        guard let value = fields[key], value != .null else { return nil }
        return value
    }

    func string(_ key: String) throws -> String? {
        guard let value = present(key) else { return nil }
        guard let string = value.stringValue else { throw ControlError.badRequest("`\(key)` must be a string") }
        return string
    }

    func requiredString(_ key: String) throws -> String {
        guard let value = try string(key) else { throw ControlError.badRequest("`\(key)` is required") }
        return value
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = present(key) else { return nil }
        guard let bool = value.boolValue else { throw ControlError.badRequest("`\(key)` must be true or false") }
        return bool
    }

    func int(_ key: String) throws -> Int? {
        guard let value = present(key) else { return nil }
        switch value {
        case .int(let int): return int
        case .double(let double) where double.rounded() == double: if let int = Int(exactly: double) { return int }
        default: break
        }
        throw ControlError.badRequest("`\(key)` must be an integer")
    }

    func requiredInt(_ key: String, minimum: Int = 0) throws -> Int {
        guard let value = try int(key) else { throw ControlError.badRequest("`\(key)` is required") }
        guard value >= minimum else { throw ControlError.badRequest("`\(key)` must be at least \(minimum)") }
        return value
    }

    func double(_ key: String) throws -> Double? {
        guard let value = present(key) else { return nil }
        switch value {
        case .int(let int): return Double(int)
        case .double(let double): return double
        default: throw ControlError.badRequest("`\(key)` must be a number")
        }
    }

    func reason(_ key: String) throws -> APNSReason? {
        guard let text = try string(key) else { return nil }
        let reason = APNSReason(rawValue: text)
        guard reason.status != nil else {
            throw ControlError.badRequest("`\(key)`: \(text) is not a reason APNs documents", code: "unknown-reason")
        }
        return reason
    }
}

/// How the control API renders the emulator's values. Times are milliseconds since the epoch, as
/// APNs writes the 410 `timestamp` (apns.md A.5).
enum ControlJSON {
    /// JSON `null` for nil.
    static func nullable(_ value: JSONValue?) -> JSONValue { value ?? .null }

    static func milliseconds(_ date: Date) -> JSONValue {
        .int(Int((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    static func device(_ device: APNSEmulatorDevice) -> [String: JSONValue] {
        var json: [String: JSONValue] = [
            "token": .string(device.token),
            "bundleId": .string(device.bundleID),
            "environment": .string(device.environment.rawValue),
            "kind": .string(device.kind.rawValue),
            "online": .bool(device.isOnline),
            "registeredAt": milliseconds(device.registeredAt),
        ]
        if let gone = device.unregisteredAt { json["unregisteredAt"] = milliseconds(gone) }
        return json
    }

    static func notification(_ notification: APNSEmulatorNotification) -> JSONValue {
        var json: [String: JSONValue] = [
            "apnsId": .string(notification.apnsID),
            "deviceToken": .string(notification.deviceToken),
            "topic": .string(notification.topic),
            "pushType": .string(notification.pushType.rawValue),
            "priority": .int(notification.priority),
            "headers": .object(notification.headers.mapValues(JSONValue.string)),
            "payloadSize": .int(notification.payload.count),
            "acceptedAt": milliseconds(notification.acceptedAt),
        ]
        if let expiration = notification.expiration { json["expiration"] = .int(Int(expiration)) }
        if let collapseID = notification.collapseID { json["collapseId"] = .string(collapseID) }
        if let delivered = notification.deliveredAt { json["deliveredAt"] = milliseconds(delivered) }
        // The payload as JSON when it is JSON (it nearly always is); otherwise as text.
        if let payload = try? JSONParser.parse(notification.payload) {
            json["payload"] = payload
        } else {
            json["payload"] = .null
            json["payloadText"] = .string(notification.payloadString)
        }
        return .object(json)
    }

    static func counters(_ counters: APNSEmulatorCounters) -> JSONValue {
        [
            "requests": .int(counters.requests),
            "byStatus": .object(Dictionary(uniqueKeysWithValues: counters.byStatus.map { (String($0.key), .int($0.value)) })),
            "byReason": .object(counters.byReason.mapValues(JSONValue.int)),
            "refusedStreams": .int(counters.refusedStreams),
            "unanswered": .int(counters.unanswered),
            "goAwaysSent": .int(counters.goAwaysSent),
            "pingsReceived": .int(counters.pingsReceived),
            "connectionsAccepted": .int(counters.connectionsAccepted),
            "connectionResets": .int(counters.connectionResets),
            "errorBudgetDisconnects": .int(counters.errorBudgetDisconnects),
            "delivered": .int(counters.delivered),
        ]
    }

    static func faults(_ snapshot: FaultSnapshot) -> JSONValue {
        let rules: [JSONValue] = snapshot.rules.map { rule in
            var json: [String: JSONValue]
            switch rule.fault {
            case .respond(let reason): json = ["type": "respond", "reason": .string(reason.rawValue)]
            case .neverRespond: json = ["type": "never-respond"]
            case .delay(let duration): json = ["type": "delay", "milliseconds": milliseconds(duration)]
            }
            json["deviceToken"] = nullable(rule.deviceToken.map(JSONValue.string))
            json["remaining"] = nullable(rule.remaining.map(JSONValue.int))
            return .object(json)
        }
        let faults = snapshot.connectionFaults
        return [
            "rules": .array(rules),
            "internalServerErrorRate": .double(faults.internalServerErrorRate),
            "serviceUnavailableRate": .double(faults.serviceUnavailableRate),
            "responseDelayMilliseconds": nullable(faults.responseDelay.map(milliseconds)),
            "goAwayAfterStreams": nullable(faults.goAwayAfterStreams.map(JSONValue.int)),
            "goAwayReason": .string(faults.goAwayReason.rawValue),
            "resetAfterStreams": nullable(faults.resetAfterStreams.map(JSONValue.int)),
            "wedgeOnExpiredToken": .bool(faults.wedgeOnExpiredToken),
            "throttleOnReject": .bool(faults.throttleOnReject),
            "maxConcurrentStreams": .int(snapshot.maxConcurrentStreams),
            "errorBudget": nullable(faults.errorBudget.map { budget in
                [
                    "errors": nullable(budget.errors.map(JSONValue.int)),
                    "badDeviceTokenErrors": nullable(budget.badDeviceTokenErrors.map(JSONValue.int)),
                ]
            }),
        ]
    }

    static func milliseconds(_ duration: Duration) -> JSONValue {
        let (seconds, attoseconds) = duration.components
        return .int(Int(seconds * 1000 + attoseconds / 1_000_000_000_000_000))
    }
}
