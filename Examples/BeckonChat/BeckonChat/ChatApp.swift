import BeckonClientAppleApp
import SwiftUI

@main
struct ChatApp: App {
    // UIKit still reports launches, pushes and tokens to an app delegate.
    @UIApplicationDelegateAdaptor(AppDelegate.self) var delegate

    var body: some Scene {
        WindowGroup {
            ChatView(model: delegate.model)
                .onAppear {
                    // The UI can open a message now: a tap that launched the app is opened once, here.
                    delegate.bridge.ready { tap in delegate.model.open(tap) }
                }
                .task {
                    // In front, once the user can see why: ask to show notifications (once; later
                    // launches only register again, as Apple asks at every launch).
                    await RemoteNotificationsSetup.requestPermissionAndRegister()
                }
        }
    }
}

struct ChatView: View {
    let model: ChatModel

    var body: some View {
        NavigationStack {
            List {
                ForEach(model.messages, id: \.id) { message in
                    VStack(alignment: .leading) {
                        Text(message.payloadJSON?["from"]?.stringValue ?? "")
                        Text(message.payloadJSON?["text"]?.stringValue ?? "")
                        Text(message.isRead ? "" : "unread")
                    }
                }
                Button("Mark all read") { Task { await model.markAllRead() } }
            }
            .navigationTitle(model.status)
        }
        .task { await model.follow() }
    }
}
