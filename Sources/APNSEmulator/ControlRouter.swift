import APNSCore
import BeckonJSON
import Foundation

/// Maps control-API requests to the emulator's Swift API; no sockets here. Every route and body
/// is documented in `docs/apns-emulator.md`.
struct ControlRouter: Sendable {
    let emulator: APNSEmulator

    func handle(method: String, uri: String, body: [UInt8]) -> ControlResponse {
        do {
            return try route(method: method.uppercased(), uri: uri, body: body)
        } catch let error as ControlError {
            return ControlResponse(error: error)
        } catch APNSEmulatorError.unknownDevice(let token) {
            return ControlResponse(error: .unknownDevice(token))
        } catch APNSEmulatorError.invalidDeviceToken(let token) {
            return ControlResponse(
                error: .badRequest("\(token) is not an even-length hex token of 64–200 digits", code: "invalid-token")
            )
        } catch {
            return ControlResponse(error: ControlError(status: 500, code: "internal", message: "\(error)"))
        }
    }

    private func route(method: String, uri: String, body: [UInt8]) throws -> ControlResponse {
        let path = String(uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        guard let resource = Resource(path: path) else { throw ControlError.notFound("no route for \(method) \(path)") }

        switch (method, resource) {
        case ("GET", .health):
            return ControlResponse(json: [
                "status": "ok", "environment": .string(emulator.configuration.environment.rawValue),
                "port": .int(emulator.port),
            ])

        case ("GET", .devices):
            let devices = emulator.devices.sorted { $0.registeredAt < $1.registeredAt }
            return ControlResponse(json: ["devices": .array(devices.map { .object(ControlJSON.device($0)) })])
        case ("POST", .devices):
            return try createDevice(ControlBody(body))
        case ("GET", .device(let token)):
            return try deviceDetail(token)
        case ("DELETE", .device(let token)), ("POST", .deviceAction(let token, .unregister)):
            // The app was removed: the token answers 410 Unregistered from now on (apns.md A.7, E.7).
            try emulator.unregisterDevice(token: token)
            return try deviceDetail(token)
        case ("POST", .deviceAction(let token, .online)):
            try emulator.setDeviceOnline(token: token, true)
            return try deviceDetail(token)
        case ("POST", .deviceAction(let token, .offline)):
            try emulator.setDeviceOnline(token: token, false)
            return try deviceDetail(token)
        case ("GET", .deviceAction(let token, .received)):
            try requireDevice(token)
            return ControlResponse(json: ["notifications": .array(emulator.deliveries(to: token).map(ControlJSON.notification))])
        case ("GET", .deviceAction(let token, .displayed)):
            try requireDevice(token)
            return ControlResponse(json: [
                "notifications": .array(emulator.displayedNotifications(on: token).map(ControlJSON.notification))
            ])
        case ("GET", .deviceAction(let token, .stored)):
            try requireDevice(token)
            let stored = emulator.storedNotification(for: token)
            return ControlResponse(json: ["notification": ControlJSON.nullable(stored.map(ControlJSON.notification))])

        case ("GET", .faults):
            return ControlResponse(json: ControlJSON.faults(emulator.faultSnapshot))
        case ("POST", .faults):
            try injectFault(ControlBody(body))
            return ControlResponse(status: 201, json: ControlJSON.faults(emulator.faultSnapshot))
        case ("DELETE", .faults):
            emulator.clearFaults()
            return ControlResponse(json: ControlJSON.faults(emulator.faultSnapshot))

        case ("GET", .connections):
            return ControlResponse(json: ["live": .int(emulator.liveConnectionCount)])
        case ("POST", .connectionAction(.goaway)):
            let reason = try ControlBody(body).reason("reason") ?? .shutdown
            emulator.goAwayLiveConnections(reason: reason)
            return ControlResponse(json: ["live": .int(emulator.liveConnectionCount)])
        case ("POST", .connectionAction(.reset)):
            emulator.resetLiveConnections()
            return ControlResponse(json: ["live": .int(emulator.liveConnectionCount)])
        case ("POST", .connectionAction(.wedge)):
            emulator.wedgeLiveConnections()
            return ControlResponse(json: ["live": .int(emulator.liveConnectionCount)])

        case ("POST", .reset):
            emulator.reset()
            return ControlResponse(json: ControlJSON.counters(emulator.counters))
        case ("GET", .counters):
            return ControlResponse(json: ControlJSON.counters(emulator.counters))

        default:
            throw ControlError(status: 405, code: "method-not-allowed", message: "\(method) is not allowed on \(path)")
        }
    }

    /// The paths the control API knows.
    enum Resource: Hashable {
        enum DeviceAction: String { case unregister, online, offline, received, displayed, stored }
        enum ConnectionAction: String { case goaway, reset, wedge }

        case health, devices, faults, connections, reset, counters
        case device(String)
        case deviceAction(String, DeviceAction)
        case connectionAction(ConnectionAction)

        init?(path: String) {
            let segments = path.split(separator: "/").map(String.init)
            switch segments.count {
            case 1:
                switch segments[0] {
                case "health": self = .health
                case "devices": self = .devices
                case "faults": self = .faults
                case "connections": self = .connections
                case "reset": self = .reset
                case "counters": self = .counters
                default: return nil
                }
            case 2 where segments[0] == "devices":
                self = .device(segments[1])
            case 2 where segments[0] == "connections":
                guard let action = ConnectionAction(rawValue: segments[1]) else { return nil }
                self = .connectionAction(action)
            case 3 where segments[0] == "devices":
                guard let action = DeviceAction(rawValue: segments[2]) else { return nil }
                self = .deviceAction(segments[1], action)
            default:
                return nil
            }
        }
    }

    private func requireDevice(_ token: String) throws {
        guard emulator.device(token: token) != nil else { throw ControlError.unknownDevice(token.lowercased()) }
    }

    private func deviceDetail(_ token: String) throws -> ControlResponse {
        guard let device = emulator.device(token: token) else { throw ControlError.unknownDevice(token.lowercased()) }
        var json = ControlJSON.device(device)
        json["stored"] = ControlJSON.nullable(emulator.storedNotification(for: token).map(ControlJSON.notification))
        json["discarded"] = .int(emulator.discardedCount(for: token))
        return ControlResponse(json: .object(json))
    }

    private func createDevice(_ body: ControlBody) throws -> ControlResponse {
        let bundleID = try body.requiredString("bundleId")
        var kind = APNSEmulatorDevice.Kind.app
        if let text = try body.string("kind") {
            guard let parsed = APNSEmulatorDevice.Kind(rawValue: text) else {
                throw ControlError.badRequest("`kind` must be app or voip")
            }
            kind = parsed
        }
        var environment: APNSEnvironment?
        if let text = try body.string("environment") {
            guard let parsed = APNSEnvironment(rawValue: text) else {
                throw ControlError.badRequest("`environment` must be sandbox or production")
            }
            environment = parsed
        }
        let device = try emulator.registerDevice(
            token: try body.string("token"), bundleID: bundleID, kind: kind, environment: environment,
            online: try body.bool("online") ?? true
        )
        return ControlResponse(status: 201, json: .object(ControlJSON.device(device)))
    }

    /// One fault per request; `type` picks the Swift API call it stands for.
    private func injectFault(_ body: ControlBody) throws {
        let type = try body.requiredString("type")
        let deviceToken = try body.string("deviceToken")
        let count = try body.int("count")
        if let count, count < 1 { throw ControlError.badRequest("`count` must be at least 1") }
        if let deviceToken, !RequestSyntax.isDeviceToken(Substring(deviceToken)) {
            throw ControlError.badRequest("`deviceToken`: \(deviceToken) is not a device token", code: "invalid-token")
        }
        func rate(_ key: String) throws -> Double {
            let value = try body.double(key) ?? 0
            guard (0...1).contains(value) else { throw ControlError.badRequest("`\(key)` must be between 0 and 1") }
            return value
        }

        switch type {
        case "respond":
            guard let reason = try body.reason("reason") else { throw ControlError.badRequest("`reason` is required") }
            emulator.respond(with: reason, deviceToken: deviceToken, count: count)
        case "too-many-requests":
            guard let deviceToken else { throw ControlError.badRequest("`deviceToken` is required") }
            emulator.respondTooManyRequests(deviceToken: deviceToken, count: count)
        case "never-respond":
            emulator.neverRespond(deviceToken: deviceToken, count: count)
        case "delay":
            let milliseconds = try body.requiredInt("milliseconds")
            emulator.injectFault(.delay(.milliseconds(milliseconds)), deviceToken: deviceToken, count: count)
        case "response-delay":
            let milliseconds = try body.int("milliseconds")
            if let milliseconds, milliseconds < 0 { throw ControlError.badRequest("`milliseconds` must be at least 0") }
            emulator.setResponseDelay(milliseconds.map { .milliseconds($0) })
        case "random-failures":
            emulator.setRandomFailures(
                internalServerErrorRate: try rate("internalServerErrorRate"),
                serviceUnavailableRate: try rate("serviceUnavailableRate")
            )
        case "goaway-after-streams":
            let streams = try body.int("streams")
            if let streams, streams < 1 { throw ControlError.badRequest("`streams` must be at least 1") }
            emulator.goAway(afterStreams: streams, reason: try body.reason("reason") ?? .shutdown)
        case "reset-after-streams":
            let streams = try body.int("streams")
            if let streams, streams < 0 { throw ControlError.badRequest("`streams` must be at least 0") }
            emulator.resetConnections(afterStreams: streams)
        case "wedge-on-expired-token":
            emulator.setWedgeOnExpiredToken(try body.bool("enabled") ?? true)
        case "throttle-on-reject":
            emulator.setThrottleOnReject(try body.bool("enabled") ?? true)
        case "max-concurrent-streams":
            let limit = try body.requiredInt("limit", minimum: 1)
            emulator.setMaxConcurrentStreams(limit, refuseExcessInFlight: try body.bool("refuseExcessInFlight") ?? false)
        case "error-budget":
            emulator.setErrorBudget(
                errors: try body.int("errors"),
                badDeviceTokenErrors: try body.int("badDeviceTokenErrors")
            )
        default:
            throw ControlError.badRequest("unknown fault type \(type)", code: "unknown-fault")
        }
    }
}
