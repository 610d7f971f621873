import Foundation
import Logging
import PostgresNIO
import Testing

@testable import BeckonStore

/// What only the PostgreSQL store's batching shows: shared commits, the rows it locks up front,
/// two nodes' batches against each other. (MailboxTests runs the behaviour on both stores.)
@Suite(.enabled(if: postgresTestURL != nil, "set BECKON_TEST_POSTGRES_URL (scripts/postgres.sh start)"))
struct PostgresGroupCommitTests {
    /// Both ways a batch runs: all calls at once (the usual), and one call at a time in savepoints
    /// (the fallback, forced here).
    @Test(arguments: [true, false])
    func concurrentAppendsShareTransactionsAndAFailedCallLeavesNoRow(together: Bool) async throws {
        try await withFreshPostgresStore(url: postgresTestURL!) { store in
            store.appends.combinesCalls = together
            try await store.createApp(.fixture())
            try await store.createApp(.fixture("mail"))
            _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["ann"], payload: text("a"), idempotencyKey: "taken")])
            let before = store.appends.commits
            let outcomes = await withTaskGroup(of: Result<[AppendedMessage], any Error>.self) { group in
                for caller in 0..<200 {
                    // Mostly one message to a shared user and another; some calls of two messages,
                    // the second repeating the first's key (a duplicate within the call); some to
                    // another app with the same users and keys (kept apart); one conflicting, one
                    // to an app that does not exist.
                    let app = caller == 150 ? "nope" : caller % 9 == 0 ? "mail" : "chat"
                    // A key is posted by four callers (caller % 50), with the same content.
                    let content = caller % 4 == 0 ? caller % 50 : caller
                    let message = NewMessage(
                        recipients: ["shared", "u\(content % 10)"], payload: text("\(content)"),
                        idempotencyKey: caller % 4 == 0 ? "k\(content)" : nil)
                    let messages = switch caller {
                    case 100: [NewMessage(recipients: ["loner"], payload: text("b"), idempotencyKey: "taken")]
                    case _ where caller % 4 == 0: [message, message]
                    default: [message]
                    }
                    group.addTask {
                        do {
                            return .success(try await store.appendMessages(appID: app, messages))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            let failures = outcomes.compactMap { outcome -> BeckonStoreError? in
                guard case .failure(let error) = outcome else { return nil }
                return error as? BeckonStoreError ?? .invalidArgument(field: "error", reason: "\(error)")
            }
            #expect(failures.count == 2)
            #expect(failures.contains(.idempotencyConflict(key: "taken")) && failures.contains(.appNotFound("nope")))
            let commits = store.appends.commits - before
            #expect(commits < 200, "200 calls at once took \(commits) commits")
            #expect(store.appends.fallbacks == 0, "no batch had to run call by call")

            // Calls with the same key and content: one stored it, the others were told the same.
            var byKey: [String: Set<String>] = [:]
            for case .success(let appended) in outcomes {
                #expect(appended.count == 1 || appended[1].isDuplicate && appended[1].message.id == appended[0].message.id)
                if let key = appended[0].message.idempotencyKey { byKey["\(appended[0].message.appID)/\(key)", default: []].insert(appended[0].message.id) }
            }
            #expect(byKey.values.allSatisfy { $0.count == 1 })
            for app in ["chat", "mail"] {
                let stored = outcomes.compactMap { try? $0.get()[0] }.filter { $0.message.appID == app && !$0.isDuplicate }
                let shared = try await store.messages(for: UserRef(appID: app, userID: "shared"), after: 0, limit: 1000)
                #expect(shared.map(\.sequence) == Array(1...Int64(stored.count)), "\(app)")
                #expect(Set(shared.map(\.message.id)) == Set(stored.map(\.message.id)), "\(app)")
                #expect(try await store.unreadCount(of: UserRef(appID: app, userID: "shared")) == stored.count)
            }
            // The batch created a sequence row for "loner" while locking; the failed call took it back.
            #expect(try await count(store, "SELECT count(*)::integer FROM user_sequence WHERE user_id = 'loner' OR last_sequence = 0") == 0)
        }
    }

    /// A call whose user id PostgreSQL cannot index (over 2,704 bytes, incompressible) breaks the
    /// statement that locks the whole batch's rows: the batch runs again one call per transaction,
    /// and only that call fails.
    /// Acks of many sessions at once share commits; within a batch each device's cursor takes its
    /// highest ack, never past its user's last sequence, and an unknown device fails alone.
    @Test(arguments: [true, false])
    func concurrentAcksShareTransactions(together: Bool) async throws {
        try await withFreshPostgresStore(url: postgresTestURL!) { store in
            store.acks.combinesCalls = together
            try await store.createApp(.fixture())
            for user in 0..<20 {
                try await store.registerDevice(.fixture(device: "d\(user)", user: "u\(user)"))
                for _ in 0..<5 {
                    _ = try await store.appendMessages(appID: "chat", [NewMessage(recipients: ["u\(user)"], payload: text("m"))])
                }
            }
            let before = store.acks.commits
            // Each device acks 1…5 in any order, and once 99 (past its last message, 5).
            var calls: [(device: String, sequence: Int64)] = []
            for user in 0..<20 { calls += ([1, 2, 3, 4, 5, 99] as [Int64]).map { ("d\(user)", $0) } }
            var generator = SplitMix(seed: 7)
            calls.shuffle(using: &generator)
            calls.append(("ghost", 3))
            let outcomes = await withTaskGroup(of: (String, Result<Int64, any Error>).self) { group in
                for call in calls {
                    group.addTask {
                        (call.device, await outcome { try await store.ack(device: DeviceRef(appID: "chat", deviceID: call.device), upTo: call.sequence) })
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            for (device, result) in outcomes {
                if device == "ghost" {
                    #expect(throws: BeckonStoreError.deviceNotFound(appID: "chat", deviceID: "ghost")) { try result.get() }
                } else {
                    #expect((1...5).contains(try result.get()), "\(device)")
                }
            }
            for user in 0..<20 {
                #expect(try await store.cursor(device: DeviceRef(appID: "chat", deviceID: "d\(user)")) == 5)
            }
            let commits = store.acks.commits - before
            #expect(commits < calls.count, "\(calls.count) acks at once took \(commits) commits")
        }
    }

    @Test func aCallThatBreaksASharedStatementFailsAlone() async throws {
        try await withFreshPostgresStore(url: postgresTestURL!) { store in
            try await store.createApp(.fixture())
            let unindexable = (0..<100).map { _ in UUID().uuidString }.joined()
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for caller in 0..<40 {
                    group.addTask {
                        let recipients = caller == 20 ? ["ann", unindexable] : ["ann"]
                        return (try? await store.appendMessages(appID: "chat", [NewMessage(recipients: recipients)])) != nil
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(outcomes.filter { !$0 }.count == 1)
            #expect(try await store.messages(for: UserRef(appID: "chat", userID: "ann"), after: 0, limit: 100).map(\.sequence)
                == Array(1...39))
        }
    }

    /// The key was not stored when the batch looked, and is by the time it inserts (another node
    /// committed it meanwhile): the batch runs again call by call and answers the stored message.
    @Test func aKeyAnotherNodeStoresMeanwhileIsADuplicate() async throws {
        try await withFreshPostgresStore(url: postgresTestURL!) { store in
            try await store.createApp(.fixture())
            let message = NewMessage(recipients: ["ann"], payload: text("hi"), idempotencyKey: "k")
            let fingerprint = try PreparedMessage(message).fingerprint
            let (held, hold) = AsyncStream<Void>.makeStream()
            try await withThrowingTaskGroup(of: AppendedMessage?.self) { group in
                group.addTask {
                    try await store.client.withConnection { connection in
                        try await connection.query("BEGIN", logger: store.logger)
                        try await connection.query(
                            """
                            INSERT INTO message (id, app_id, kind, payload, urgency, idempotency_key, fingerprint, created_at)
                            VALUES ('other-node', 'chat', 'message', \(text("hi")), 'normal', 'k', \(fingerprint), 0)
                            """, logger: store.logger)
                        hold.finish()
                        while try await count(store, "SELECT count(*)::integer FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'") < 1 {
                            try await Task.sleep(for: .milliseconds(10))
                        }
                        try await connection.query("COMMIT", logger: store.logger)
                    }
                    return nil
                }
                for await _ in held {}
                group.addTask { try await store.appendMessages(appID: "chat", [message])[0] }
                for try await case let appended? in group {
                    #expect(appended.isDuplicate && appended.message.id == "other-node")
                }
            }
            #expect(store.appends.fallbacks == 1)
            #expect(try await store.lastSequence(of: UserRef(appID: "chat", userID: "ann")) == 0)
            #expect(try await count(store, "SELECT count(*)::integer FROM user_sequence") == 0)
        }
    }

    /// Two nodes, each appending a call whose second message waits on a key a third session holds;
    /// when it lets go, each node's next message wants the key the other node just inserted: a
    /// deadlock. PostgreSQL aborts one batch; it runs again, and then meets the other node's
    /// committed key as any later call would (here a conflict: the contents differ).
    @Test func aDeadlockBetweenTwoNodesRetriesTheBatch() async throws {
        try await withTwoPostgresNodes(url: postgresTestURL!) { a, b in
            try await a.createApp(.fixture())
            func message(_ key: String, to user: String) -> NewMessage {
                NewMessage(recipients: [user], payload: text(key), idempotencyKey: key)
            }
            let (held, hold) = AsyncStream<Void>.makeStream()
            let outcomes = try await withThrowingTaskGroup(of: Result<[AppendedMessage], any Error>?.self) { group in
                group.addTask {
                    try await a.client.withConnection { connection in
                        try await connection.query("BEGIN", logger: a.logger)
                        for key in ["gate-a", "gate-b"] {
                            try await connection.query(
                                """
                                INSERT INTO message (id, app_id, kind, payload, urgency, idempotency_key, fingerprint, created_at)
                                VALUES (\(key), 'chat', 'message', \(Data()), 'normal', \(key), \(Data()), 0)
                                """, logger: a.logger)
                        }
                        hold.finish()
                        while try await count(a, "SELECT count(*)::integer FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'") < 2 {
                            try await Task.sleep(for: .milliseconds(10))
                        }
                        try await connection.query("ROLLBACK", logger: a.logger)
                    }
                    return nil
                }
                for await _ in held {}
                group.addTask {
                    await outcome {
                        try await a.appendMessages(
                            appID: "chat", [message("k1", to: "x"), message("gate-a", to: "x"), message("k2", to: "x")])
                    }
                }
                group.addTask {
                    await outcome {
                        try await b.appendMessages(
                            appID: "chat", [message("k2", to: "y"), message("gate-b", to: "y"), message("k1", to: "y")])
                    }
                }
                var outcomes: [Result<[AppendedMessage], any Error>] = []
                for try await outcome in group {
                    if let outcome { outcomes.append(outcome) }
                }
                return outcomes
            }
            let stored = outcomes.compactMap { try? $0.get() }
            let errors = outcomes.compactMap { outcome -> (any Error)? in
                if case .failure(let error) = outcome { return error }
                return nil
            }
            #expect(stored.count == 1 && errors.count == 1)
            // Not the deadlock itself: the retried batch's own outcome.
            #expect(errors.allSatisfy {
                [.idempotencyConflict(key: "k1"), .idempotencyConflict(key: "k2")].contains($0 as? BeckonStoreError)
            }, "\(errors)")
            let winner = stored.first?.first?.positions.first?.userID ?? "none"
            #expect(try await a.lastSequence(of: UserRef(appID: "chat", userID: winner)) == 3)
            #expect(try await count(a, "SELECT count(*)::integer FROM message") == 3)
            #expect(try await count(a, "SELECT count(*)::integer FROM user_sequence") == 1)
        }
    }

    /// Two nodes, 2 × 100 calls of one to three messages to users in any order: the batches lock
    /// their users in one order, so they wait for each other but never deadlock, and each mailbox
    /// is numbered without gaps.
    @Test func twoNodesAppendingToOverlappingUsersInAnyOrder() async throws {
        try await withTwoPostgresNodes(url: postgresTestURL!) { a, b in
            try await a.createApp(.fixture())
            var random = SplitMix(seed: 13)
            let users = (0..<6).map { "u\($0)" }
            let calls = (0..<200).map { _ in
                (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    NewMessage(recipients: Array(users.shuffled(using: &random).prefix(Int.random(in: 1...3, using: &random))))
                }
            }
            let results = try await withThrowingTaskGroup(of: [AppendedMessage].self) { group in
                for (index, call) in calls.enumerated() {
                    let node = index.isMultiple(of: 2) ? a : b
                    group.addTask { try await node.appendMessages(appID: "chat", call) }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(results.count == calls.map(\.count).reduce(0, +))
            for user in users {
                let told = results.flatMap(\.positions).filter { $0.userID == user }.map(\.sequence).sorted()
                #expect(told == Array(1...Int64(told.count)), "\(user)")
                #expect(try await a.lastSequence(of: UserRef(appID: "chat", userID: user)) == Int64(told.count))
            }
        }
    }
}

private func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}

private func count(_ store: PostgresStore, _ sql: String) async throws -> Int {
    for try await value in try await store.client.query(PostgresQuery(unsafeSQL: sql), logger: store.logger).decode(Int.self) {
        return value
    }
    return 0
}

/// A seeded generator, so a failing run can be repeated.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
