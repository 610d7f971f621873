/// Beckon's durable state, whole: apps and their API keys, the device registry, the per-user
/// mailbox, device cursors and read state, the delivery planner's state, the push outbox, calls.
///
/// A part of the server asks only for the roles it uses (`MailboxStore`, `PushOutbox`, …), the
/// way GRDB hands out a reader where nothing is written; `BeckonStore` is every role at once:
/// what a store implements and what a node opens.
///
/// Every method that changes state has committed that change before it returns, so a caller
/// may answer 2xx as soon as the call succeeds (design rule 9: nothing acknowledged is lost).
/// `SQLiteStore` is the embedded default; `PostgresStore` serves many nodes on one database.
/// Implementations scope every lookup by app, so a key or device of one app can never reach
/// another app's rows.
public protocol BeckonStore:
    AppRegistry, APIKeyRegistry, CredentialVerifier,
    DeviceDirectory, DeviceRegistry, TokenFeedback,
    MailboxStore, ReadStateStore,
    DeliveryStateStore, PushOutbox, CallStore, DeliveryReports, MessageTraceStore, EventLog
{}
