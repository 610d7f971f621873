import BeckonStore

/// Which app serves a Matrix pusher's `app_id` (`apps.<id>.matrix.app-ids` and
/// `.sandbox-app-ids`, docs/drop-ins.md). Entries may be globs, as Sygnal's app id patterns are,
/// so that one entry serves every build of an app (`im.example.app.*`).
enum MatrixAppIDs {
    /// The app and its tokens' environment: an entry equal to `appID` wins; otherwise the one
    /// entry whose glob matches it. Nil when none does, or when globs of two apps (or of both
    /// lists of one) match: like Sygnal, an ambiguous app id is rejected rather than guessed.
    static func resolve(_ appID: String, in apps: [AppDeclaration]) -> (app: AppDeclaration, environment: PushEnvironment)? {
        let entries = apps.flatMap { app in
            app.matrixSandboxAppIDs.map { (pattern: $0, app: app, environment: PushEnvironment.sandbox) }
                + app.matrixAppIDs.map { (pattern: $0, app: app, environment: app.defaultDropInEnvironment) }
        }
        // Exact ids are unique across apps (the configuration checks it).
        if let exact = entries.first(where: { $0.pattern == appID }) { return (exact.app, exact.environment) }
        var found: (app: AppDeclaration, environment: PushEnvironment)?
        for entry in entries where isGlob(entry.pattern) && matches(entry.pattern, appID) {
            if let found, found.app.id != entry.app.id || found.environment != entry.environment { return nil }
            found = (entry.app, entry.environment)
        }
        return found
    }

    static func isGlob(_ pattern: String) -> Bool {
        pattern.contains("*") || pattern.contains("?")
    }

    /// `*` any run of characters (none too), `?` exactly one; everything else itself, case
    /// included (Sygnal's patterns are case-sensitive). The whole id must match.
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let pattern = Array(pattern.unicodeScalars), text = Array(text.unicodeScalars)
        var p = 0, t = 0
        // The last `*` seen and where its run of the text ends: on a mismatch that star takes one
        // more character. Going back to the last star only is enough: what an earlier star took
        // never needs to change once a later one has matched.
        var star: (pattern: Int, text: Int)?
        while t < text.count {
            if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == text[t]) {
                p += 1
                t += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = (p, t)
                p += 1
            } else if let last = star {
                star = (last.pattern, last.text + 1)
                p = last.pattern + 1
                t = last.text + 1
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
