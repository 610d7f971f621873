import BeckonProtocol
import Foundation

/// Beckon's durable state: apps and their API keys, the device registry, the per-user mailbox,
/// device cursors and read state.
///
/// Every method that changes state has committed that change before it returns, so a caller may
/// answer 2xx as soon as the call succeeds (design rule 9: nothing acknowledged is lost). The
/// protocol is the seam for a second implementation on PostgreSQL (many nodes, one database);
/// `SQLiteStore` is the embedded default. Implementations scope every lookup by app, so a key or
/// device of one app can never reach another app's rows.
public protocol BeckonStore: Sendable {
    // MARK: Apps

    /// Stores a new app. Throws `BeckonStoreError.alreadyExists` if the id is taken.
    @discardableResult
    func createApp(_ app: App) async throws -> App
    /// Inserts or replaces the app's declaration (the operator's configuration is the source of
    /// truth at startup), keeping its `createdAt`.
    @discardableResult
    func saveApp(_ app: App) async throws -> App
    func app(id: String) async throws -> App?
    func apps() async throws -> [App]

    // MARK: API keys

    /// Creates a key for a backend of `appID`. The secret is in the result and nowhere else:
    /// only its SHA-256 is stored.
    func createAPIKey(appID: String, name: String?) async throws -> IssuedAPIKey
    /// The key a backend presented, if it is known and not revoked. The key carries its app id,
    /// which is the only app it reaches.
    func authenticateAPIKey(_ presented: String) async throws -> AppAPIKey?
    func apiKeys(appID: String) async throws -> [AppAPIKey]
    /// Returns false if no such key of that app exists or it was already revoked.
    func revokeAPIKey(appID: String, keyID: String) async throws -> Bool

    // MARK: Devices

    /// Registers a device, or replaces the registration of a device already known by
    /// (app, device id). See `DeviceRegistration` for what a registration means for tokens,
    /// cursors and credentials.
    @discardableResult
    func registerDevice(_ registration: DeviceRegistration) async throws -> Device
    /// `registerDevice` and `issueDeviceCredential` in one transaction: registration through the
    /// API answers with a credential, and one commit is half the wait of two (issue 14).
    func registerDeviceIssuingCredential(_ registration: DeviceRegistration) async throws -> (device: Device, credential: String)
    func device(_ device: DeviceRef) async throws -> Device?
    func devices(of user: UserRef) async throws -> [Device]
    /// The devices of several users, read at once (the delivery planner's batches).
    func devices(of users: [UserRef]) async throws -> [UserRef: [Device]]
    /// Several devices by reference, read at once; missing ones are left out.
    func devices(_ refs: [DeviceRef]) async throws -> [DeviceRef: Device]
    /// The device holding `token` (lowercase or uppercase hex) of that kind in the app.
    func device(appID: String, token: String, kind: PushTokenKind) async throws -> Device?
    /// Returns false if there was no such device.
    func deleteDevice(_ device: DeviceRef) async throws -> Bool
    /// Drops a token after APNs reported it dead, but only if the device has not registered it
    /// again since `invalidSince` (APNs' 410 `timestamp`; docs/apns.md E.7, "410 race"). Returns
    /// whether the token was removed.
    func removeToken(
        _ device: DeviceRef, kind: PushTokenKind, token: String, invalidSince: Date
    ) async throws -> Bool
    /// Issues a new sync credential for the device, replacing any earlier one. The secret is in
    /// the result and nowhere else.
    func issueDeviceCredential(_ device: DeviceRef) async throws -> String
    /// The device a credential belongs to, if the credential is current.
    func authenticateDevice(credential: String) async throws -> Device?

    // MARK: Mailbox

    /// Appends a batch of messages in one transaction: all of them are stored, or none.
    ///
    /// Each recipient user gets the next sequence number of their mailbox. A message whose
    /// (app, idempotency key) was stored before is not stored again: its result is the original
    /// one with `isDuplicate == true`. A reused key with different content throws
    /// `BeckonStoreError.idempotencyConflict`. Payload limits are the caller's to enforce.
    func appendMessages(appID: String, _ messages: [NewMessage]) async throws -> [AppendedMessage]
    /// The user's mailbox after `sequence`, in order, at most `limit` entries; messages whose
    /// `expiresAt` has passed are left out.
    func messages(for user: UserRef, after sequence: Int64, limit: Int) async throws -> [MailboxEntry]
    /// One message of the user's mailbox (what a notification service extension fetches by id);
    /// nil if the message is not in that user's mailbox.
    func mailboxEntry(for user: UserRef, messageID: String) async throws -> MailboxEntry?
    /// A message of the app, whoever its recipients are.
    func message(appID: String, id: String) async throws -> Message?
    /// The last sequence number assigned in the user's mailbox (0 if none).
    func lastSequence(of user: UserRef) async throws -> Int64
    /// What a sync session's `welcome` needs, read at once: the user's last sequence and unread
    /// count, the read messages among the `window` sequences up to `cursor` (a device resuming
    /// there may still show them), and the calls among the user's `window` newest messages that
    /// ended at or after `callsEndedSince`.
    func sessionStart(for user: UserRef, cursor: Int64, window: Int, callsEndedSince: Date) async throws -> SessionStart

    // MARK: Cursors and read state

    /// Cumulative acknowledgement: the device has everything up to `sequence`. The cursor never
    /// moves backwards, and never past the user's last sequence. Returns the cursor after the ack.
    @discardableResult
    func ack(device: DeviceRef, upTo sequence: Int64) async throws -> Int64
    /// The last sequence the device acknowledged (0 for a device that never acked, so a new
    /// device gets the user's whole retained mailbox).
    func cursor(device: DeviceRef) async throws -> Int64
    /// Records that the device read these messages. Ids not in the device's user's mailbox are
    /// ignored. Returns the ids that became read for the user, i.e. not read before on any of the
    /// user's devices: those are what "read elsewhere" events and badges need (design rule 7).
    func markRead(device: DeviceRef, messageIDs: [String]) async throws -> [String]
    /// Messages and calls in the user's mailbox that none of the user's devices has read, not
    /// expired. Receipts and custom messages do not count.
    func unreadCount(of user: UserRef) async throws -> Int
    /// Deletes the bookkeeping of unread messages that have expired (they no longer count).
    @discardableResult
    func pruneExpiredUnread(now: Date) async throws -> Int
    /// `unreadCount` for several users, read at once.
    func unreadCounts(of users: [UserRef]) async throws -> [UserRef: Int]

    // MARK: Delivery (the planner's state and the push outbox)

    /// The saved planner state of each device that has one.
    func deliveryStates(_ devices: [DeviceRef]) async throws -> [DeviceRef: DeliveryState]
    /// Takes up to `limit` devices whose planner must be woken at or before `date`, soonest
    /// first: their stored deadline moves to `leaseUntil`, so no other node takes them meanwhile
    /// (several nodes: `FOR UPDATE SKIP LOCKED`); the planning that follows saves the real next
    /// deadline, and if the node dies first the deadline comes due again at `leaseUntil`.
    func claimDueDeliveryStates(before date: Date, limit: Int, leaseUntil: Date) async throws -> [DeviceRef]
    /// Saves planner states, queues new pushes and records wake outcomes in one transaction.
    /// A device's state is saved only if its stored version is still `state.version` (another
    /// node may have planned it meanwhile); for a device where it is not, nothing of the batch is
    /// saved — not its state, pushes or wake outcomes — and it is in the result, to be planned
    /// again from the stored state. Everything else is saved.
    @discardableResult
    func saveDelivery(_ batch: DeliveryBatch) async throws -> Set<DeviceRef>
    /// Takes up to `limit` due pushes for sending: their next attempt moves to `leaseUntil`, so
    /// no other claim takes them meanwhile; a push whose result is never recorded (the process
    /// died) is due again then.
    func claimPushes(appID: String, before date: Date, limit: Int, leaseUntil: Date) async throws -> [OutboxPush]
    /// At start, with no other sender: every pending push is due now, whether a claim of the
    /// process that died held it or a retry waited (it is sent at least once, design rule 9).
    func releaseClaims(now: Date) async throws -> Int
    /// Records the result of an attempt: sent, failed for good, or to be retried at a time.
    func completePush(id: String, result: PushAttemptResult) async throws
    /// Flags a device whose pushes APNs refuses until it registers again (nil clears it).
    func setPushProblem(_ device: DeviceRef, problem: String?) async throws
    /// Counts and latencies of the app's pushes since `date`, for the delivery report.
    func pushRecords(appID: String, since date: Date) async throws -> [PushRecord]
    /// The app's devices, those without a token left, and its pushes waiting in the outbox.
    func appCounts(appID: String) async throws -> AppCounts
    /// How many of the app's devices are unreachable now (rule 4).
    func unreachableDeviceCount(appID: String) async throws -> Int
    /// The devices whose saved planner believes them connected (`DeliveryState.connected`).
    func devicesSavedAsConnected() async throws -> [DeviceRef]

    // MARK: Calls

    /// Records how a call ended, once: `callNotFound` unless `callID` is a call message of the
    /// app; a second end of the same call returns the first's outcome.
    func endCall(appID: String, callID: String, outcome: String, at date: Date) async throws -> CallEndResult
    /// The users whose mailboxes hold the message.
    func recipients(appID: String, messageID: String) async throws -> [UserRef]
    /// Which of these calls have ended.
    func endedCalls(appID: String, callIDs: [String]) async throws -> Set<String>
}
