@testable import BeckonServer
import Testing

/// Which `Content-Type` values a JSON route takes (415 otherwise).
@Suite struct RequestBodyTests {
    @Test(arguments: [
        "application/json", "Application/JSON", "application/json; charset=utf-8", " application/json ;charset=UTF-8",
        "\tapplication/json", "application/merge-patch+json", "APPLICATION/VND.API+JSON; q=1",
    ])
    func jsonTypesAreTaken(_ contentType: String) {
        #expect(RequestBody.isJSON(contentType))
    }

    @Test(arguments: [
        "", ";", "text/plain", "application/jsonx", "application/xml", "text/json", "application/json-seq",
        "text/x+json", "application/ json", "applicatio/json", "application/jsön",
    ])
    func otherTypesAreRefused(_ contentType: String) {
        #expect(!RequestBody.isJSON(contentType))
    }

    @Test func noContentTypeIsRefused() {
        #expect(!RequestBody.isJSON(nil))
    }
}
