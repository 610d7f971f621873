import BeckonProtocol
import Foundation
import Testing

@testable import BeckonStore

/// `DeviceRegistration.pushTokenRegisteredAt`: a drop-in dates its device's token by when the
/// caller set it (a Matrix pusher's `pushkey_ts`), so APNs' 410 is compared with that (rule 8).
@Suite struct TokenRegistrationTimeTests {
    @Test func aTokenMayBeDatedEarlierThanNowButNeverLater() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            var pusher = DeviceRegistration.fixture(device: "pusher", user: "pusher", pushToken: token("A"))
            pusher.pushTokenRegisteredAt = clock.now - 86400
            let device = try await store.registerDevice(pusher)
            #expect(device.pushTokenRegisteredAt == clock.now - 86400)
            // Apple's 410 of an hour ago is later than that registration: the token is dead.
            #expect(try await store.removeToken(device.ref, kind: .remote, token: token("A"), invalidSince: clock.now - 3600))

            // A time in the future is now; an absurd one does not trap.
            var future = DeviceRegistration.fixture(device: "future", user: "future", pushToken: token("B"))
            future.pushTokenRegisteredAt = clock.now + 86400
            #expect(try await store.registerDevice(future).pushTokenRegisteredAt == clock.now)
            var ancient = DeviceRegistration.fixture(device: "ancient", user: "ancient", pushToken: token("C"))
            ancient.pushTokenRegisteredAt = Date(timeIntervalSince1970: -1e300)
            #expect(try await store.registerDevice(ancient).pushTokenRegisteredAt == Date(timeIntervalSince1970: 0))
            // A native registration (no time given) is dated now, as before.
            let native = try await store.registerDevice(.fixture(device: "phone", user: "ann", pushToken: token("D")))
            #expect(native.pushTokenRegisteredAt == clock.now)
        }
    }
}
