import BeckonEvents
import Testing

@Suite struct WebhookSignerTests {
    /// Standard Webhooks' own example (its reference libraries' tests), so a receiver using one of
    /// their libraries verifies Beckon's signatures.
    @Test func signsAsStandardWebhooksDoes() {
        let signer = WebhookSigner(secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
        let body = Array(#"{"test": 2432232314}"#.utf8)
        let signature = signer.signature(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body)
        #expect(signature == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
        #expect(signer.verify(id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1_614_265_330, body: body, header: "v1,bm90IGl0 " + signature))
    }

    @Test func anyChangeFailsTheCheck() {
        let signer = WebhookSigner(secret: "a plain secret, used as its bytes")
        let body = Array(#"{"events":[]}"#.utf8)
        let header = signer.signature(id: "batch_1_2", timestamp: 100, body: body)
        #expect(signer.verify(id: "batch_1_2", timestamp: 100, body: body, header: header))
        #expect(!signer.verify(id: "batch_1_2", timestamp: 101, body: body, header: header), "another time")
        #expect(!signer.verify(id: "batch_1_3", timestamp: 100, body: body, header: header), "another id")
        #expect(!signer.verify(id: "batch_1_2", timestamp: 100, body: body + [0x20], header: header), "another body")
        #expect(!WebhookSigner(secret: "another secret").verify(id: "batch_1_2", timestamp: 100, body: body, header: header))
    }
}
