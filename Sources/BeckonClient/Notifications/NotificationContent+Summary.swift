import Foundation

extension NotificationContent {
    /// One notification for several messages (rule 11, docs/client-sdk.md "Everything unseen on
    /// the lock screen"): the newest's notification, its body a line per message, oldest first,
    /// so the user reads every message the push stood for rather than only the newest. A line is
    /// "title: body", or the body alone when every message has the newest's title (one sender).
    /// Messages with no literal text (a `loc-key` the extension cannot render), and `more` that
    /// were not fetched, end it as one `moreFormat` line ("and %d more").
    ///
    /// One message and nothing more, or no literal text at all: `newest` unchanged.
    public static func summary(
        newest: NotificationContent, earlier: [NotificationContent], more: Int, moreFormat: String
    ) -> NotificationContent {
        guard !earlier.isEmpty || more > 0 else { return newest }
        let all = earlier + [newest]
        func literal(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }
        let oneSender = all.allSatisfy { literal($0.title) == literal(newest.title) }
        var lines: [String] = []
        var unwritten = more
        for content in all {
            let body = literal(content.body) ?? literal(content.subtitle)
            let titled = [literal(content.title), body].compactMap({ $0 }).joined(separator: ": ")
            guard let line = oneSender ? body : titled.nilIfEmpty else {
                unwritten += 1
                continue
            }
            lines.append(line)
        }
        // Nothing literal to list (the app's strings only): the newest as it is.
        guard !lines.isEmpty else { return newest }
        if unwritten > 0 { lines.append(moreFormat.replacingOccurrences(of: "%d", with: String(unwritten))) }
        var summary = newest
        summary.title = oneSender ? newest.title : nil
        summary.titleLocKey = oneSender ? newest.titleLocKey : nil
        summary.titleLocArgs = oneSender ? newest.titleLocArgs : nil
        summary.subtitle = nil
        summary.body = lines.joined(separator: "\n")
        summary.locKey = nil
        summary.locArgs = nil
        return summary
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
