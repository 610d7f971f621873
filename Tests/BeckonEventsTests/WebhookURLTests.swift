import BeckonEvents
import Testing

@Suite struct WebhookURLTests {
    @Test func readsSchemeHostPortAndTarget() throws {
        let url = try #require(WebhookURL("https://hooks.example.com/beckon?team=7"))
        #expect(url.tls && url.host == "hooks.example.com" && url.port == 443 && url.target == "/beckon?team=7")
        #expect(url.description == "https://hooks.example.com/beckon?…", "a query may carry the receiver's credential: not shown")
        let local = try #require(WebhookURL("http://127.0.0.1:9000"))
        #expect(!local.tls && local.port == 9000 && local.target == "/")
        let v6 = try #require(WebhookURL("http://[::1]:9000/h"))
        #expect(v6.host == "::1" && v6.description == "http://[::1]:9000/h")
    }

    @Test func refusesWhatIsNotAnHTTPAddress() {
        for text in ["ftp://example.com/", "/relative", "https://", "https://user:pw@example.com/", "not a url"] {
            #expect(WebhookURL(text) == nil, "\(text)")
        }
    }
}
