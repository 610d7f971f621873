import BeckonProtocol
import BeckonDelivery
import Foundation
import XCTest

final class DeliveryPolicyTests: XCTestCase {
    func testDefaults() {
        let policy = DeliveryPolicy()
        XCTAssertEqual(policy.strategy, .wake)
        XCTAssertEqual(policy.backgroundPushesPerHour, 3)
        XCTAssertEqual(policy.backgroundThrottleWindow, 3600)
        XCTAssertEqual(policy.reconnectWindow, 60)
        XCTAssertEqual(policy.repushInitialDelay, 30)
        XCTAssertEqual(policy.repushBackoffMultiplier, 2)
        XCTAssertEqual(policy.repushLimit, 4)
        XCTAssertEqual(policy.callRingInterval, 10)
        XCTAssertEqual(policy.callTimeout, 45)
        XCTAssertEqual(policy.messageLocKey, "BECKON_NEW_MESSAGE")
        XCTAssertEqual(policy.missedCallLocKey, "BECKON_MISSED_CALL")
        XCTAssertEqual(policy.callLocKey, "BECKON_CALL")
    }

    func testStrategyRawValues() {
        XCTAssertEqual(DeliveryStrategy.allCases.map(\.rawValue), ["wake", "service-extension", "filtering", "content"])
    }

    func testEffectiveStrategyFallbacks() {
        let wakeOnly = DeviceCapabilities(backgroundModes: ["remote-notification"])
        let nse = DeviceCapabilities(notificationServiceExtension: true)
        let nseFiltering = DeviceCapabilities(notificationServiceExtension: true, filtering: true)
        let filteringWithoutNSE = DeviceCapabilities(filtering: true, backgroundModes: ["remote-notification"])
        let nothing = DeviceCapabilities()
        func effective(_ strategy: DeliveryStrategy, _ capabilities: DeviceCapabilities) -> DeliveryStrategy {
            DeliveryPolicy(strategy: strategy).effectiveStrategy(for: capabilities)
        }
        XCTAssertEqual(effective(.wake, wakeOnly), .wake)
        XCTAssertEqual(effective(.wake, nse), .serviceExtension, "no remote-notification mode: iOS won't launch the app")
        XCTAssertEqual(effective(.wake, nothing), .serviceExtension, "a generic alert at least tells the user")
        XCTAssertEqual(effective(.serviceExtension, nse), .serviceExtension)
        XCTAssertEqual(effective(.serviceExtension, wakeOnly), .wake)
        XCTAssertEqual(effective(.serviceExtension, nothing), .serviceExtension)
        XCTAssertEqual(effective(.filtering, nseFiltering), .filtering)
        XCTAssertEqual(effective(.filtering, nse), .serviceExtension, "filtering needs the entitlement")
        XCTAssertEqual(effective(.filtering, filteringWithoutNSE), .wake, "filtering needs an extension")
        XCTAssertEqual(effective(.content, nothing), .content)
        XCTAssertEqual(effective(.content, nseFiltering), .content)
    }

    func testCodableRoundTripAndMissingKeysTakeDefaults() throws {
        var policy = DeliveryPolicy(strategy: .filtering, reconnectWindow: 90)
        policy.throttledAlertDelay = nil
        policy.alertSound = nil
        let data = try JSONEncoder().encode(policy)
        XCTAssertEqual(try JSONDecoder().decode(DeliveryPolicy.self, from: data), policy)

        let partial = try JSONDecoder().decode(
            DeliveryPolicy.self, from: Data(#"{"strategy":"service-extension","callTimeout":30}"#.utf8)
        )
        var expected = DeliveryPolicy()
        expected.strategy = .serviceExtension
        expected.callTimeout = 30
        XCTAssertEqual(partial, expected)
    }
}
