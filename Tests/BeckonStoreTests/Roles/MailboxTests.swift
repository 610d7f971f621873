import BeckonProtocol
import Foundation
import Testing

@testable import BeckonStore

@Suite struct MailboxTests {
    @Test func sequencesAreGapFreeAndOrderedUnderConcurrentAppends() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            let tasks = 20
            let perTask = 50
            // Each task appends its messages one call at a time, to two users: one shared by
            // all tasks, one of its own.
            let appended = try await withThrowingTaskGroup(of: [AppendedMessage].self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        var results: [AppendedMessage] = []
                        for index in 0..<perTask {
                            let message = NewMessage(recipients: ["shared", "own-\(task)"], payload: text("\(task)-\(index)"))
                            results += try await store.appendMessages(appID: "chat", [message])
                        }
                        return results
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(appended.count == tasks * perTask)

            let shared = try await store.messages(for: UserRef(appID: "chat", userID: "shared"), after: 0, limit: 10_000)
            #expect(shared.map(\.sequence) == Array(1...Int64(tasks * perTask)))
            #expect(Set(shared.map(\.message.id)).count == tasks * perTask)
            #expect(try await store.lastSequence(of: UserRef(appID: "chat", userID: "shared")) == Int64(tasks * perTask))

            // Each task's own messages are in the order it appended them.
            for task in 0..<tasks {
                let own = try await store.messages(for: UserRef(appID: "chat", userID: "own-\(task)"), after: 0, limit: 1000)
                #expect(own.map(\.sequence) == Array(1...Int64(perTask)))
                #expect(own.map { String(decoding: $0.message.payload, as: UTF8.self) } == (0..<perTask).map { "\(task)-\($0)" })
            }
            // And within the shared mailbox, every task's messages keep their relative order.
            for task in 0..<tasks {
                let mine = shared.map { String(decoding: $0.message.payload, as: UTF8.self) }.filter { $0.hasPrefix("\(task)-") }
                #expect(mine == (0..<perTask).map { "\(task)-\($0)" })
            }
        }
    }

    @Test func concurrentAppendsThatFailDoNotUndoTheOthers() async throws {
        // Concurrent appends share commits (GroupCommit); each still succeeds or fails alone.
        try await withEachStore { store in
            try await store.createApp(.fixture())
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"], payload: text("a"), idempotencyKey: "k")])
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let message = index.isMultiple(of: 2)
                            ? NewMessage(recipients: ["ann"], payload: text("\(index)"))
                            : NewMessage(recipients: ["ann"], payload: text("b"), idempotencyKey: "k")  // conflicts
                        do {
                            _ = try await store.appendMessages(appID: "chat", [message])
                            return true
                        } catch {
                            #expect(error as? BeckonStoreError == .idempotencyConflict(key: "k"))
                            return false
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { $0 }.count == 20)
            let ann = try await store.messages(for: UserRef(appID: "chat", userID: "ann"), after: 0, limit: 100)
            #expect(ann.map(\.sequence) == Array(1...21))
        }
    }

    /// 200 callers at once, one call each, over overlapping users: the calls share commits (both
    /// stores batch them), yet each is numbered without gaps, a retry answers the original and a
    /// conflict fails only its own caller.
    @Test func twoHundredConcurrentCallersShareCommitsAndKeepTheirOwnOutcome() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            let original = try await store.appendMessages(
                appID: "chat", [NewMessage(recipients: ["ann"], payload: text("original"), idempotencyKey: "taken")])[0]
            func regular(_ caller: Int) -> NewMessage {
                NewMessage(
                    recipients: caller.isMultiple(of: 2) ? ["shared", "u\(caller % 7)"] : ["u\(caller % 7)", "shared"],
                    payload: text("m\(caller)"), idempotencyKey: caller % 10 == 8 ? "k\(caller)" : nil)
            }
            let callers = 200
            let outcomes = await withTaskGroup(of: (Int, Result<AppendedMessage, any Error>).self) { group in
                for caller in 0..<callers {
                    let message: NewMessage = switch caller % 10 {
                    case 9: NewMessage(recipients: ["loner"], payload: text("other"), idempotencyKey: "taken")  // conflicts
                    case 4: NewMessage(recipients: ["ann"], payload: text("original"), idempotencyKey: "taken")  // a retry
                    case 8 where caller >= 100: regular(caller - 100)  // the same post twice at once
                    default: regular(caller)
                    }
                    group.addTask {
                        do {
                            return (caller, .success(try await store.appendMessages(appID: "chat", [message])[0]))
                        } catch {
                            return (caller, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: [Int: Result<AppendedMessage, any Error>]()) { $0[$1.0] = $1.1 }
            }

            var stored: [AppendedMessage] = []
            for (caller, outcome) in outcomes.sorted(by: { $0.key < $1.key }) {
                switch (caller % 10, outcome) {
                case (9, .failure(let error)):
                    #expect(error as? BeckonStoreError == .idempotencyConflict(key: "taken"))
                case (4, .success(let appended)):
                    #expect(appended.isDuplicate && appended.message.id == original.message.id && appended.positions == original.positions)
                case (8, .success(let appended)) where caller >= 100:
                    guard case .success(let twin) = outcomes[caller - 100] else { continue }
                    #expect(appended.message.id == twin.message.id && appended.positions == twin.positions)
                    #expect(appended.isDuplicate != twin.isDuplicate, "one of the two stored it")
                    if !appended.isDuplicate { stored.append(appended) }
                case (_, .success(let appended)):
                    #expect(caller % 10 != 9 && caller % 10 != 4)
                    if !appended.isDuplicate { stored.append(appended) }
                case (_, .failure(let error)):
                    Issue.record("caller \(caller) failed: \(error)")
                }
            }
            #expect(stored.count == 150)

            // Each mailbox is numbered 1…n without gaps, and holds what the callers were told.
            for user in ["shared"] + (0..<7).map({ "u\($0)" }) {
                let ref = UserRef(appID: "chat", userID: user)
                let told = stored.compactMap { appended in
                    appended.positions.first { $0.userID == user }.map { ($0.sequence, appended.message.id) }
                }.sorted { $0.0 < $1.0 }
                let mailbox = try await store.messages(for: ref, after: 0, limit: 1000)
                #expect(mailbox.map(\.sequence) == Array(1...Int64(told.count)), "\(user)")
                #expect(mailbox.map(\.message.id) == told.map(\.1), "\(user)")
                #expect(try await store.lastSequence(of: ref) == Int64(told.count))
                #expect(try await store.unreadCount(of: ref) == told.count)
            }
            #expect(try await store.messages(for: UserRef(appID: "chat", userID: "shared"), after: 0, limit: 1000).count == 150)
            // The conflicts stored nothing anywhere.
            let loner = UserRef(appID: "chat", userID: "loner")
            #expect(try await store.lastSequence(of: loner) == 0)
            #expect(try await store.unreadCount(of: loner) == 0)
            #expect(try await store.messages(for: loner, after: 0, limit: 10).isEmpty)
            #expect(try await store.lastSequence(of: UserRef(appID: "chat", userID: "ann")) == 1)
        }
    }

    @Test func aBatchIsOneTransactionWithItsOwnOrder() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            let results = try await store.appendMessages(appID: "chat", [
                NewMessage(recipients: ["ann", "bob", "ann"], payload: text("1")),
                NewMessage(recipients: ["bob"], kind: .receipt, payload: text("2")),
            ])
            #expect(results[0].positions == [MailboxPosition(userID: "ann", sequence: 1), MailboxPosition(userID: "bob", sequence: 1)])
            #expect(results[1].positions == [MailboxPosition(userID: "bob", sequence: 2)])
            #expect(results.allSatisfy { !$0.isDuplicate })

            // A failing message rolls back the whole batch, sequence numbers included.
            await #expect(throws: BeckonStoreError.invalidArgument(field: "recipients", reason: "must name at least one user")) {
                try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"]), NewMessage(recipients: [])])
            }
            await #expect(throws: BeckonStoreError.idempotencyConflict(key: "k")) {
                try await store.appendMessages(appID: "chat", [
                    NewMessage(recipients: ["ann"], payload: text("a"), idempotencyKey: "k"),
                    NewMessage(recipients: ["ann"], payload: text("b"), idempotencyKey: "k"),
                ])
            }
            #expect(try await store.lastSequence(of: UserRef(appID: "chat", userID: "ann")) == 1)
            let next = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"])])
            #expect(next[0].positions == [MailboxPosition(userID: "ann", sequence: 2)])
        }
    }

    @Test func idempotencyReturnsTheOriginalAndStoresNothing() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            let message = NewMessage(
                recipients: ["ann", "bob"], payload: text("hello"),
                hints: NotificationHints(title: "Anna", body: "hello", threadID: "t1"),
                expiresAt: clock.now + 60, idempotencyKey: "post-1")
            let first = try await store.appendMessages(appID: "chat", [message])[0]
            #expect(!first.isDuplicate)

            clock.advance(by: 5)
            var retry = message
            retry.expiresAt = clock.now + 60  // a time-to-live resent by the backend
            let again = try await store.appendMessages(appID: "chat", [retry, NewMessage(recipients: ["ann"])])
            #expect(again[0].isDuplicate)
            #expect(again[0].message == first.message)
            #expect(again[0].positions == first.positions)
            #expect(!again[1].isDuplicate)

            let ann = try await store.messages(for: UserRef(appID: "chat", userID: "ann"), after: 0, limit: 100)
            #expect(ann.map(\.message.id) == [first.message.id, again[1].message.id])
            #expect(try await store.lastSequence(of: UserRef(appID: "chat", userID: "bob")) == 1)

            // Same key, different content: a conflict, not a silent duplicate.
            var changed = message
            changed.payload = text("goodbye")
            await #expect(throws: BeckonStoreError.idempotencyConflict(key: "post-1")) {
                try await store.appendMessages(appID: "chat", [changed])
            }
            // Keys are per app.
            try await store.createApp(.fixture("mail"))
            let other = try await store.appendMessages(appID: "mail", [message])[0]
            #expect(!other.isDuplicate)
            #expect(other.message.id != first.message.id)
        }
    }

    @Test func resumeFromACursorWithALimit() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture())
            let ids = try await store.appendMessages(
                appID: "chat", (1...10).map { NewMessage(recipients: ["ann"], payload: text("\($0)")) }
            ).map(\.message.id)
            let ann = UserRef(appID: "chat", userID: "ann")
            let page = try await store.messages(for: ann, after: 3, limit: 4)
            #expect(page.map(\.sequence) == [4, 5, 6, 7])
            #expect(page.map(\.message.id) == Array(ids[3..<7]))
            #expect(try await store.messages(for: ann, after: 10, limit: 4).isEmpty)
            #expect(try await store.messages(for: ann, after: 0, limit: 0).isEmpty)
        }
    }

    @Test func expiredMessagesAreNotSyncedButKeepTheirSequence() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            _ = try await store.appendMessages(appID: "chat", [
                NewMessage(recipients: ["ann"], kind: .call, expiresAt: clock.now + 30),
                NewMessage(recipients: ["ann"]),
            ])
            let ann = UserRef(appID: "chat", userID: "ann")
            #expect(try await store.messages(for: ann, after: 0, limit: 10).map(\.sequence) == [1, 2])
            #expect(try await store.unreadCount(of: ann) == 2)
            clock.advance(by: 31)
            #expect(try await store.messages(for: ann, after: 0, limit: 10).map(\.sequence) == [2])
            #expect(try await store.unreadCount(of: ann) == 1)
            // Pruning the expired bookkeeping changes no count.
            #expect(try await store.pruneExpiredUnread(now: clock.now) == 1)
            #expect(try await store.unreadCount(of: ann) == 1)
        }
    }

    /// A planning step asks for the counts of every user of its batch at once: each user gets
    /// their own count (lasting and expiring messages, another app's kept apart), a user asked
    /// for twice once, a user with no mailbox 0, however many users one read covers.
    @Test func unreadCountsOfManyUsersAtOnce() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            try await store.createApp(.fixture("mail"))
            // User k of 300 (more than one key list) gets k % 4 lasting messages and k % 3 that expire.
            let users = (0..<300).map { "u\($0)" }
            for (k, user) in users.enumerated() {
                let lasting = (0..<(k % 4)).map { _ in NewMessage(recipients: [user]) }
                let expiring = (0..<(k % 3)).map { _ in NewMessage(recipients: [user], expiresAt: clock.now + 30) }
                if !(lasting + expiring).isEmpty { _ = try await store.appendMessages(appID: "chat", lasting + expiring) }
            }
            _ = try await store.appendMessages(appID: "mail", [NewMessage(recipients: ["u1"]), NewMessage(recipients: ["u1"])])
            let asked = users.map { UserRef(appID: "chat", userID: $0) } + [
                UserRef(appID: "chat", userID: "u7"), UserRef(appID: "chat", userID: "nobody"), UserRef(appID: "mail", userID: "u1"),
            ]
            var counts = try await store.unreadCounts(of: asked)
            #expect(counts.count == 302)
            for (k, user) in users.enumerated() { #expect(counts[UserRef(appID: "chat", userID: user)] == k % 4 + k % 3, "\(user)") }
            #expect(counts[UserRef(appID: "chat", userID: "nobody")] == 0)
            #expect(counts[UserRef(appID: "mail", userID: "u1")] == 2)
            // Once the expiring ones have expired, only the lasting ones count.
            clock.advance(by: 31)
            counts = try await store.unreadCounts(of: asked)
            for (k, user) in users.enumerated() { #expect(counts[UserRef(appID: "chat", userID: user)] == k % 4, "\(user)") }
        }
    }

    @Test func isolationBetweenAppsAndUsers() async throws {
        try await withEachStore { store in
            try await store.createApp(.fixture("chat"))
            try await store.createApp(.fixture("mail"))
            let chat = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"], payload: text("chat"))])[0]
            let mail = try await store.appendMessages(appID: "mail", [NewMessage(recipients: ["ann"], payload: text("mail"))])[0]
            // Same user id in two apps: two mailboxes, each starting at 1.
            #expect(chat.positions[0].sequence == 1)
            #expect(mail.positions[0].sequence == 1)

            let chatAnn = UserRef(appID: "chat", userID: "ann")
            #expect(try await store.messages(for: chatAnn, after: 0, limit: 10).map(\.message.id) == [chat.message.id])
            #expect(try await store.messages(for: UserRef(appID: "chat", userID: "bob"), after: 0, limit: 10).isEmpty)

            // Fetch by id only within the user's own mailbox and app.
            #expect(try await store.mailboxEntry(for: chatAnn, messageID: chat.message.id)?.message.payload == text("chat"))
            #expect(try await store.mailboxEntry(for: chatAnn, messageID: mail.message.id) == nil)
            #expect(try await store.mailboxEntry(for: UserRef(appID: "chat", userID: "bob"), messageID: chat.message.id) == nil)
            #expect(try await store.message(appID: "chat", id: chat.message.id)?.id == chat.message.id)
            #expect(try await store.message(appID: "mail", id: chat.message.id) == nil)

            await #expect(throws: BeckonStoreError.appNotFound("nope")) {
                try await store.appendMessages(appID: "nope", [NewMessage(recipients: ["ann"])])
            }
        }
    }

    @Test func storedMessagesRoundTrip() async throws {
        let clock = TestClock()
        try await withEachStore(clock: clock) { store in
            try await store.createApp(.fixture())
            let payload = Data((0...255).map(UInt8.init))
            let hints = NotificationHints(
                title: "Anna", subtitle: "Work", body: "See you at 8", locKey: "MSG", locArgs: ["Anna"],
                threadID: "t1", category: "CHAT", sound: "default")
            let appended = try await store.appendMessages(appID: "chat", [
                NewMessage(recipients: ["ann"], kind: .custom, payload: payload, hints: hints, urgency: .high,
                           expiresAt: clock.now + 3600.1234, idempotencyKey: "k1"),
                NewMessage(recipients: ["ann"], payload: Data()),
            ])
            let entries = try await store.messages(for: UserRef(appID: "chat", userID: "ann"), after: 0, limit: 10)
            #expect(entries.map(\.message) == appended.map(\.message))
            let stored = entries[0].message
            #expect(stored.payload == payload)
            #expect(stored.hints == hints)
            #expect(stored.kind == .custom && stored.urgency == .high)
            #expect(stored.expiresAt == (clock.now + 3600.1234).truncatedToMilliseconds)
            #expect(stored.createdAt == clock.now)
            #expect(entries[1].message.payload.isEmpty)
            #expect(UUID(uuidString: stored.id) != nil)
        }
    }
}
