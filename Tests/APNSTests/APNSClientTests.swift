import APNS
import APNSCore
import APNSEmulator
import EmulatorTestSupport
import Foundation
import NIOSSL
import Testing

/// The client against the APNs emulator, over real HTTP/2 and TLS on loopback.
@Suite struct APNSClientTests {
    @Test func everyPushTypeIsAcceptedByApplesRules() async throws {
        try await EmulatorHarness.run { harness in
            let now = Date()
            let notifications: [any APNSNotification] = [
                APNSAlertNotification(alert: .init(title: "T", body: "B"), badge: 1, sound: .default),
                APNSBackgroundNotification(custom: ["sync": true]),
                APNSVoIPNotification(custom: ["call": "c1"]),
                APNSLocationNotification(),
                APNSComplicationNotification(),
                APNSFileProviderNotification(containerIdentifier: "root", domain: "d"),
                APNSMDMNotification(pushMagic: "magic", topic: "com.apple.mgmt.External.1"),
                APNSLiveActivityNotification(event: .update, contentState: ["score": 1], timestamp: now),
                APNSPushToTalkNotification(),
                APNSWidgetsNotification(),
                APNSControlsNotification(),
            ]
            for notification in notifications {
                let token = EmulatorHarness.newToken()
                let request = try APNSRequest(notification, to: token, bundleID: EmulatorHarness.bundleID)
                let response = try await harness.client.send(request, environment: .sandbox, credential: harness.credential)
                #expect(response.status == 200, "\(request.pushType): \(response.reason?.rawValue ?? "")")
                #expect(response.apnsID == request.apnsID)
                #expect(response.uniqueID != nil)  // Sandbox only.
                let delivered = harness.emulator.deliveries(to: token.hex)
                #expect(delivered.count == 1)
                #expect(delivered.first?.topic == request.topic)
                #expect(delivered.first?.payload == request.payload)
                // What went over the wire is what the transport-free model says.
                for (name, value) in request.headers {
                    #expect(delivered.first?.headers[name] == value, "\(request.pushType) \(name)")
                }
            }
        }
    }

    @Test func refusalsComeBackAsAnswersWithReasonAndTimestamp() async throws {
        try await EmulatorHarness.run { harness in
            let token = EmulatorHarness.newToken()
            #expect(try await harness.send(APNSAlertNotification(badge: 1), to: token).status == 200)
            try harness.emulator.unregisterDevice(token: token.hex)
            let gone = try await harness.send(APNSAlertNotification(badge: 2), to: token)
            #expect(gone.status == 410)
            #expect(gone.reason == .unregistered)
            #expect(gone.timestamp != nil)
            // Never-retry reasons are sent once.
            #expect(harness.emulator.counters.count(.unregistered) == 1)
        }
    }

    @Test func streamLimitOfOneRisesAfterTheFirstValidToken() async throws {
        try await EmulatorHarness.run { harness in
            let responses = try await harness.sendConcurrently(300)
            #expect(responses.allSatisfy { $0.status == 200 })
            // The client never opened more streams than the server allowed.
            #expect(harness.emulator.counters.refusedStreams == 0)
            #expect(harness.emulator.counters.connectionsAccepted == 1)
        }
    }

    @Test func loweredStreamLimitIsHonoured() async throws {
        try await EmulatorHarness.run { harness in
            _ = try await harness.sendConcurrently(10)
            harness.emulator.setMaxConcurrentStreams(2)
            // One round trip: the new SETTINGS precede this answer on the connection.
            _ = try await harness.send(APNSAlertNotification(badge: 1))
            let responses = try await harness.sendConcurrently(200)
            #expect(responses.allSatisfy { $0.status == 200 })
            #expect(harness.emulator.counters.refusedStreams == 0)
        }
    }

    @Test func streamsRefusedWhenTheLimitDropsMidFlightAreResent() async throws {
        try await EmulatorHarness.run { harness in
            _ = try await harness.sendConcurrently(5)
            // Long enough that streams are still in flight when the limit drops, however late this
            // task wakes on a loaded machine: the whole suite on two cores held it past 300 ms.
            harness.emulator.setResponseDelay(.seconds(2))
            async let responses = harness.sendConcurrently(200)
            while harness.emulator.counters.requests < 50 { try await Task.sleep(for: .milliseconds(5)) }
            harness.emulator.setMaxConcurrentStreams(1, refuseExcessInFlight: true)
            harness.emulator.setResponseDelay(nil)
            #expect(try await responses.allSatisfy { $0.status == 200 })
            #expect(harness.emulator.counters.refusedStreams > 0)
        }
    }

    @Test func idleConnectionsArePingedAndKept() async throws {
        try await EmulatorHarness.run(configureClient: { $0.pingInterval = .milliseconds(100) }) { harness in
            #expect(try await harness.send(APNSAlertNotification(badge: 1)).status == 200)
            while harness.emulator.counters.pingsReceived < 2 { try await Task.sleep(for: .milliseconds(20)) }
            #expect(try await harness.send(APNSAlertNotification(badge: 1)).status == 200)
            // Answered PINGs keep the connection: still the first one.
            #expect(harness.emulator.counters.connectionsAccepted == 1)
        }
    }

    @Test func goAwayMovesUnprocessedStreamsToANewConnection() async throws {
        try await EmulatorHarness.run { harness in
            _ = try await harness.sendConcurrently(5)
            // The connection answers 20 more, then GOAWAY: the streams above its last-stream-id
            // were never processed and must succeed on a new connection, without using up attempts.
            harness.emulator.goAway(afterStreams: 25)
            async let responses = harness.sendConcurrently(200)
            while harness.emulator.counters.goAwaysSent == 0 { try await Task.sleep(for: .milliseconds(2)) }
            harness.emulator.goAway(afterStreams: nil)
            #expect(try await responses.allSatisfy { $0.status == 200 })
            #expect(harness.emulator.counters.connectionsAccepted >= 2)
        }
    }

    @Test func connectionResetMidFlightIsRetriedOnANewConnection() async throws {
        try await EmulatorHarness.run { harness in
            _ = try await harness.sendConcurrently(5)
            // Long enough that streams are still in flight when the limit drops, however late this
            // task wakes on a loaded machine: the whole suite on two cores held it past 300 ms.
            harness.emulator.setResponseDelay(.seconds(2))  // Keep streams open long enough to cut.
            async let responses = harness.sendConcurrently(200)
            while harness.emulator.counters.requests < 50 { try await Task.sleep(for: .milliseconds(5)) }
            harness.emulator.resetLiveConnections()
            harness.emulator.setResponseDelay(nil)
            #expect(try await responses.allSatisfy { $0.status == 200 })
            #expect(harness.emulator.counters.connectionsAccepted >= 2)
        }
    }

    @Test(arguments: [APNSReason.internalServerError, .serviceUnavailable, .tooManyRequests])
    func retryableAnswersAreRetriedWithTheSameApnsID(reason: APNSReason) async throws {
        try await EmulatorHarness.run { harness in
            let token = EmulatorHarness.newToken()
            harness.emulator.respond(with: reason, deviceToken: token.hex, count: 2)
            let id = UUID()
            let response = try await harness.send(APNSAlertNotification(badge: 1, apnsID: id), to: token)
            #expect(response.status == 200)
            #expect(harness.emulator.counters.count(reason) == 2)
            // The one delivery carries the id the refused attempts had.
            #expect(harness.emulator.deliveries(to: token.hex).map(\.apnsID) == [id.uuidString.lowercased()])
        }
    }

    @Test func retriesStopAtMaximumAttempts() async throws {
        try await EmulatorHarness.run(configureClient: { $0.retry.maximumAttempts = 3 }) { harness in
            let token = EmulatorHarness.newToken()
            harness.emulator.respond(with: .serviceUnavailable, deviceToken: token.hex)
            let response = try await harness.send(APNSAlertNotification(badge: 1), to: token)
            #expect(response.status == 503)
            #expect(harness.emulator.counters.count(.serviceUnavailable) == 3)
        }
    }

    @Test func unansweredStreamFailsAtTheDeadline() async throws {
        try await EmulatorHarness.run { harness in
            let token = EmulatorHarness.newToken()
            harness.emulator.neverRespond(deviceToken: token.hex)
            await #expect(throws: APNSClientError.self) {
                try await harness.send(APNSAlertNotification(badge: 1), to: token, deadline: 0.3)
            }
            // The connection stays usable for others.
            let other = try await harness.send(APNSAlertNotification(badge: 1))
            #expect(other.status == 200)
        }
    }

    /// A sender on the client's loops (`taskExecutor`) whose send the shutdown failed goes on to
    /// record the failure elsewhere and must be resumed after that, although the loops it
    /// prefers have stopped (a loop that stopped drops what is scheduled on it).
    @Test func aSenderOnTheClientsLoopsFinishesAfterTheShutdownFailedItsSend() async throws {
        try await EmulatorHarness.run { harness in
            let token = EmulatorHarness.newToken()
            harness.emulator.neverRespond(deviceToken: token.hex)
            let (outcomes, outcome) = AsyncStream.makeStream(of: String.self)
            Task(executorPreference: harness.client.taskExecutor) {
                let answer = try? await harness.send(APNSAlertNotification(badge: 1), to: token)
                try? await Task.sleep(for: .milliseconds(10))  // Off the loops and back.
                outcome.yield(answer == nil ? "failed, then went on" : "answered")
            }
            while harness.emulator.counters.requests == 0 { try await Task.sleep(for: .milliseconds(5)) }
            await harness.client.shutdown()
            let watchdog = Task {
                try await Task.sleep(for: .seconds(10))
                outcome.yield("never resumed")
            }
            defer { watchdog.cancel() }
            var iterator = outcomes.makeAsyncIterator()
            #expect(await iterator.next() == "failed, then went on")
        }
    }

    @Test func fullQueuePushesBackAtOnce() async throws {
        try await EmulatorHarness.run(
            configureEmulator: { $0.maxConcurrentStreams = 2 },
            configureClient: { $0.maximumQueuedRequests = 2 }
        ) { harness in
            _ = try await harness.send(APNSAlertNotification(badge: 1))
            harness.emulator.neverRespond()
            // 2 streams stuck on the server, 2 waiting in the queue, then the queue is full.
            let stuck = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for _ in 0..<4 { group.addTask { _ = try? await harness.send(APNSAlertNotification(badge: 1), deadline: 2) } }
                    try await group.waitForAll()
                }
            }
            while harness.client.poolSnapshot.queued < 2 { try await Task.sleep(for: .milliseconds(10)) }
            await #expect(throws: APNSClientError.self) {
                try await harness.send(APNSAlertNotification(badge: 1), deadline: 5)
            }
            stuck.cancel()
            harness.emulator.clearFaults()
        }
    }

    @Test func tokenIsRefreshedOnTheInjectedClockAndAcceptedOnTheSameConnection() async throws {
        let clock = TestClock()
        try await EmulatorHarness.run(emulatorClock: clock, clientClock: clock) { harness in
            #expect(try await harness.send(APNSAlertNotification(badge: 1)).status == 200)
            let firstIssued = try #require(harness.source.issuedAt)
            clock.advance(by: 30 * 60)
            #expect(try await harness.send(APNSAlertNotification(badge: 1)).status == 200)
            #expect(harness.source.issuedAt == firstIssued)  // Too young to replace.
            clock.advance(by: 20 * 60)
            #expect(try await harness.send(APNSAlertNotification(badge: 1)).status == 200)
            #expect(harness.source.issuedAt == clock.now)  // 50 minutes old: replaced.
            #expect(harness.emulator.counters.count(.tooManyProviderTokenUpdates) == 0)
            #expect(harness.emulator.counters.connectionsAccepted == 1)
        }
    }

    @Test func expiredProviderTokenIsReplacedAsSoonAsAppleAllowsOnFreshConnections() async throws {
        let serverClock = TestClock()
        let clientClock = TestClock(serverClock.now.addingTimeInterval(-61 * 60))  // Our clock is an hour slow.
        try await EmulatorHarness.run(
            emulatorClock: serverClock, clientClock: clientClock,
            configureEmulator: { $0.wedgeOnExpiredToken = true }
        ) { harness in
            let refused = try await harness.send(APNSAlertNotification(badge: 1))
            #expect(refused.reason == .expiredProviderToken)
            // Still the same token: Apple allows a new one only 20 minutes after the last.
            clientClock.advance(by: 20 * 60)
            let accepted = try await harness.send(APNSAlertNotification(badge: 1))
            #expect(accepted.status == 200)
            // The wedged connection was abandoned for a new one.
            #expect(harness.emulator.counters.connectionsAccepted >= 2)
        }
    }
}

@Suite struct APNSCertificateAuthenticationTests {
    @Test func certificateCredentialPushesWithoutAProviderToken() async throws {
        let identity = try APNSEmulatorClientIdentity.generate(bundleID: EmulatorHarness.bundleID)
        try await EmulatorHarness.run(configureEmulator: { $0.trustedClientCAPEMs = [identity.caCertificatePEM] }) { harness in
            let credential = APNSCredential.certificate(
                name: "com.example.app",
                chain: [try NIOSSLCertificate(bytes: Array(identity.certificatePEM.utf8), format: .pem)],
                privateKey: try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
            let token = EmulatorHarness.newToken()
            let alert = try await harness.client.send(
                APNSAlertNotification(alert: .init(body: "over mTLS")), to: token, bundleID: EmulatorHarness.bundleID,
                environment: .sandbox, credential: credential)
            #expect(alert.status == 200)
            let voip = try await harness.client.send(
                APNSVoIPNotification(), to: EmulatorHarness.newToken(), bundleID: EmulatorHarness.bundleID,
                environment: .sandbox, credential: credential)
            #expect(voip.status == 200)
            // A topic the certificate does not carry.
            let other = try await harness.client.send(
                APNSAlertNotification(badge: 1), to: token, bundleID: "com.example.other",
                environment: .sandbox, credential: credential)
            #expect(other.reason == .badTopic)
        }
    }
}
