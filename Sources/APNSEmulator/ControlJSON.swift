import APNSCore
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

    init(status: Int = 200, json: Any) {
        self.status = status
        // Only dictionaries, arrays, strings, numbers, Bool and NSNull are ever passed in.
        let data = (try? JSONSerialization.data(withJSONObject: json, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data(#"{"error":{"code":"internal","message":"unencodable answer"}}"#.utf8)
        body = Array(data) + [UInt8(ascii: "\n")]
    }

    init(error: ControlError) {
        self.init(status: error.status, json: ["error": ["code": error.code, "message": error.message]])
    }
}

/// A request body as a JSON object, with typed accessors that fail as 400s naming the field.
struct ControlBody {
    let fields: [String: Any]

    init(_ bytes: [UInt8]) throws {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            fields = [:]  // An empty body is an empty object: every field optional then.
            return
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) else {
            throw ControlError.badRequest("the body is not valid JSON", code: "invalid-json")
        }
        guard let dictionary = object as? [String: Any] else {
            throw ControlError.badRequest("the body must be a JSON object", code: "invalid-json")
        }
        fields = dictionary
    }

    private func present(_ key: String) -> Any? {
        guard let value = fields[key], !(value is NSNull) else { return nil }
        return value
    }

    func string(_ key: String) throws -> String? {
        guard let value = present(key) else { return nil }
        guard let string = value as? String else { throw ControlError.badRequest("`\(key)` must be a string") }
        return string
    }

    func requiredString(_ key: String) throws -> String {
        guard let value = try string(key) else { throw ControlError.badRequest("`\(key)` is required") }
        return value
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = present(key) else { return nil }
        guard let number = value as? NSNumber, Self.isBoolean(number) else {
            throw ControlError.badRequest("`\(key)` must be true or false")
        }
        return number.boolValue
    }

    func int(_ key: String) throws -> Int? {
        guard let value = present(key) else { return nil }
        guard let number = value as? NSNumber, !Self.isBoolean(number), number.doubleValue.rounded() == number.doubleValue,
            let int = Int(exactly: number.doubleValue)
        else { throw ControlError.badRequest("`\(key)` must be an integer") }
        return int
    }

    func requiredInt(_ key: String, minimum: Int = 0) throws -> Int {
        guard let value = try int(key) else { throw ControlError.badRequest("`\(key)` is required") }
        guard value >= minimum else { throw ControlError.badRequest("`\(key)` must be at least \(minimum)") }
        return value
    }

    func double(_ key: String) throws -> Double? {
        guard let value = present(key) else { return nil }
        guard let number = value as? NSNumber, !Self.isBoolean(number) else {
            throw ControlError.badRequest("`\(key)` must be a number")
        }
        return number.doubleValue
    }

    func reason(_ key: String) throws -> APNSReason? {
        guard let text = try string(key) else { return nil }
        let reason = APNSReason(rawValue: text)
        guard reason.status != nil else {
            throw ControlError.badRequest("`\(key)`: \(text) is not a reason APNs documents", code: "unknown-reason")
        }
        return reason
    }

    /// JSON `true`/`false` decode as NSNumber too; their objCType is "c" on Darwin and Linux.
    private static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}

/// How the control API renders the emulator's values. Times are milliseconds since the epoch, as
/// APNs writes the 410 `timestamp` (apns.md A.5).
enum ControlJSON {
    /// JSON `null` for nil.
    static func nullable<Value>(_ value: Value?) -> Any {
        if let value { return value }
        return NSNull()
    }

    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    static func device(_ device: APNSEmulatorDevice) -> [String: Any] {
        var json: [String: Any] = [
            "token": device.token,
            "bundleId": device.bundleID,
            "environment": device.environment.rawValue,
            "kind": device.kind.rawValue,
            "online": device.isOnline,
            "registeredAt": milliseconds(device.registeredAt),
        ]
        if let gone = device.unregisteredAt { json["unregisteredAt"] = milliseconds(gone) }
        return json
    }

    static func notification(_ notification: APNSEmulatorNotification) -> [String: Any] {
        var json: [String: Any] = [
            "apnsId": notification.apnsID,
            "deviceToken": notification.deviceToken,
            "topic": notification.topic,
            "pushType": notification.pushType.rawValue,
            "priority": notification.priority,
            "headers": notification.headers,
            "payloadSize": notification.payload.count,
            "acceptedAt": milliseconds(notification.acceptedAt),
        ]
        if let expiration = notification.expiration { json["expiration"] = expiration }
        if let collapseID = notification.collapseID { json["collapseId"] = collapseID }
        if let delivered = notification.deliveredAt { json["deliveredAt"] = milliseconds(delivered) }
        // The payload as JSON when it is JSON (it nearly always is); otherwise as text.
        if let object = try? JSONSerialization.jsonObject(with: Data(notification.payload), options: [.fragmentsAllowed]) {
            json["payload"] = object
        } else {
            json["payload"] = NSNull()
            json["payloadText"] = notification.payloadString
        }
        return json
    }

    static func counters(_ counters: APNSEmulatorCounters) -> [String: Any] {
        [
            "requests": counters.requests,
            "byStatus": Dictionary(uniqueKeysWithValues: counters.byStatus.map { (String($0.key), $0.value) }),
            "byReason": counters.byReason,
            "refusedStreams": counters.refusedStreams,
            "unanswered": counters.unanswered,
            "goAwaysSent": counters.goAwaysSent,
            "pingsReceived": counters.pingsReceived,
            "connectionsAccepted": counters.connectionsAccepted,
            "connectionResets": counters.connectionResets,
            "errorBudgetDisconnects": counters.errorBudgetDisconnects,
            "delivered": counters.delivered,
        ]
    }

    static func faults(_ snapshot: FaultSnapshot) -> [String: Any] {
        let rules: [[String: Any]] = snapshot.rules.map { rule in
            var json: [String: Any]
            switch rule.fault {
            case .respond(let reason): json = ["type": "respond", "reason": reason.rawValue]
            case .neverRespond: json = ["type": "never-respond"]
            case .delay(let duration): json = ["type": "delay", "milliseconds": milliseconds(duration)]
            }
            json["deviceToken"] = ControlJSON.nullable(rule.deviceToken)
            json["remaining"] = ControlJSON.nullable(rule.remaining)
            return json
        }
        let faults = snapshot.connectionFaults
        return [
            "rules": rules,
            "internalServerErrorRate": faults.internalServerErrorRate,
            "serviceUnavailableRate": faults.serviceUnavailableRate,
            "responseDelayMilliseconds": ControlJSON.nullable(faults.responseDelay.map(milliseconds)),
            "goAwayAfterStreams": ControlJSON.nullable(faults.goAwayAfterStreams),
            "goAwayReason": faults.goAwayReason.rawValue,
            "resetAfterStreams": ControlJSON.nullable(faults.resetAfterStreams),
            "wedgeOnExpiredToken": faults.wedgeOnExpiredToken,
            "throttleOnReject": faults.throttleOnReject,
            "maxConcurrentStreams": snapshot.maxConcurrentStreams,
            "errorBudget": nullable(faults.errorBudget.map { budget -> [String: Any] in
                ["errors": nullable(budget.errors), "badDeviceTokenErrors": nullable(budget.badDeviceTokenErrors)]
            }),
        ]
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
