import BeckonProtocol
import BeckonDelivery
import Foundation
import Testing

@Suite struct DeliveryPolicyTests {
    @Test func defaults() {
        let policy = DeliveryPolicy()
        #expect(policy.strategy == .wake)
        #expect(policy.backgroundPushesPerHour == 3)
        #expect(policy.backgroundThrottleWindow == 3600)
        #expect(policy.reconnectWindow == 60)
        #expect(policy.repushInitialDelay == 30)
        #expect(policy.repushBackoffMultiplier == 2)
        #expect(policy.repushLimit == 4)
        #expect(policy.callRingInterval == 10)
        #expect(policy.callTimeout == 45)
        #expect(policy.messageLocKey == "BECKON_NEW_MESSAGE")
        #expect(policy.missedCallLocKey == "BECKON_MISSED_CALL")
        #expect(policy.callLocKey == "BECKON_CALL")
    }

    @Test func strategyRawValues() {
        #expect(DeliveryStrategy.allCases.map(\.rawValue) == ["wake", "service-extension", "filtering", "content"])
    }

    @Test func effectiveStrategyFallbacks() {
        let wakeOnly = DeviceCapabilities(backgroundModes: ["remote-notification"])
        let nse = DeviceCapabilities(notificationServiceExtension: true)
        let nseFiltering = DeviceCapabilities(notificationServiceExtension: true, filtering: true)
        let filteringWithoutNSE = DeviceCapabilities(filtering: true, backgroundModes: ["remote-notification"])
        let nothing = DeviceCapabilities()
        func effective(_ strategy: DeliveryStrategy, _ capabilities: DeviceCapabilities) -> DeliveryStrategy {
            DeliveryPolicy(strategy: strategy).effectiveStrategy(for: capabilities)
        }
        #expect(effective(.wake, wakeOnly) == .wake)
        #expect(effective(.wake, nse) == .serviceExtension, "no remote-notification mode: iOS won't launch the app")
        #expect(effective(.wake, nothing) == .serviceExtension, "a generic alert at least tells the user")
        #expect(effective(.serviceExtension, nse) == .serviceExtension)
        #expect(effective(.serviceExtension, wakeOnly) == .wake)
        #expect(effective(.serviceExtension, nothing) == .serviceExtension)
        #expect(effective(.filtering, nseFiltering) == .filtering)
        #expect(effective(.filtering, nse) == .serviceExtension, "filtering needs the entitlement")
        #expect(effective(.filtering, filteringWithoutNSE) == .wake, "filtering needs an extension")
        #expect(effective(.content, nothing) == .content)
        #expect(effective(.content, nseFiltering) == .content)
    }

    @Test func codableRoundTripAndMissingKeysTakeDefaults() throws {
        var policy = DeliveryPolicy(strategy: .filtering, reconnectWindow: 90)
        policy.throttledAlertDelay = nil
        policy.alertSound = nil
        let data = try JSONEncoder().encode(policy)
        #expect(try JSONDecoder().decode(DeliveryPolicy.self, from: data) == policy)

        let partial = try JSONDecoder().decode(
            DeliveryPolicy.self, from: Data(#"{"strategy":"service-extension","callTimeout":30}"#.utf8)
        )
        var expected = DeliveryPolicy()
        expected.strategy = .serviceExtension
        expected.callTimeout = 30
        #expect(partial == expected)
    }
}
