import APNSCore
import Foundation
import Testing

@testable import APNSEmulator

@Suite("Generated apns-id and apns-unique-id values")
struct RequestIDGeneratorTests {
    @Test("Canonical version-4 UUIDs, uppercase for apns-id (apns.md A.5), lowercase on request, distinct")
    func format() {
        var generator = RequestIDGenerator(seed: 42)
        var seen = Set<String>()
        for index in 0..<2000 {
            let id = generator.next(uppercase: index.isMultiple(of: 2))
            #expect(RequestSyntax.isUUID(id))
            #expect(UUID(uuidString: id) != nil)
            #expect(Array(id.utf8)[14] == UInt8(ascii: "4"))
            #expect("89abAB".utf8.contains(Array(id.utf8)[19]))
            #expect(id == (index.isMultiple(of: 2) ? id.uppercased() : id.lowercased()))
            seen.insert(id.lowercased())
        }
        #expect(seen.count == 2000)
    }
}
