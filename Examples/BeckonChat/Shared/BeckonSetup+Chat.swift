import BeckonClientApple
import Foundation

// In both targets (the app and its notification service extension): where the server is and
// what the two share. Replace the three values with yours.
extension BeckonSetup {
    static let chat = BeckonSetup(
        server: URL(string: "https://beckon.example.com")!,
        appGroup: "group.com.example.chat",
        keychainAccessGroup: "TEAMID.com.example.chat")
}

/// The text of a message from your backend: here its JSON is `{"from": "…", "text": "…"}`.
/// Both targets use it, so a notification reads the same whichever process shows it.
let chatRenderer: MessageRenderer = { message in
    NotificationContent(title: message.payload?["from"]?.stringValue, body: message.payload?["text"]?.stringValue)
}
