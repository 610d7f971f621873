import BeckonClientAppleApp
import CallKit

/// CallKit's side of calls. The SDK reports every VoIP push as a ringing call and ends it when the
/// server says the call ended elsewhere; this delegate hears the user's answer and tells the SDK
/// when the call stops ringing here. Join the call with your media stack where it says so.
final class CallProvider: NSObject, @preconcurrency CXProviderDelegate {
    let reporter: CallKitReporter
    var app: BeckonApp?

    override init() {
        let configuration = CXProviderConfiguration()
        configuration.supportsVideo = false
        configuration.maximumCallsPerCallGroup = 1
        reporter = CallKitReporter(provider: CXProvider(configuration: configuration))
        super.init()
        reporter.provider.setDelegate(self, queue: nil)   // nil: the main queue
    }

    func providerDidReset(_ provider: CXProvider) {}

    @MainActor
    func provider(_ provider: CXProvider, perform action: CXAnswerCallAction) {
        app?.calls.callFinished(uuid: action.callUUID)
        action.fulfill()   // then join the call with your media stack
    }

    @MainActor
    func provider(_ provider: CXProvider, perform action: CXEndCallAction) {
        app?.calls.callFinished(uuid: action.callUUID)
        action.fulfill()
    }
}
