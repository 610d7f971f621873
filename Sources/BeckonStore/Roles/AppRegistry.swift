/// The apps the operator declared, by id: written from the configuration at startup and by the
/// admin API, read wherever a request or a device names its app (bundle id, environments,
/// limits, the planner's defaults).
public protocol AppRegistry: Sendable {
    /// Stores a new app. Throws `BeckonStoreError.alreadyExists` if the id is taken.
    @discardableResult
    func createApp(_ app: App) async throws -> App
    /// Inserts or replaces the app's declaration (the operator's configuration is the source of
    /// truth at startup), keeping its `createdAt`.
    @discardableResult
    func saveApp(_ app: App) async throws -> App
    func app(id: String) async throws -> App?
    func apps() async throws -> [App]
}
