// The wire types the SDK's API names (`SyncMessage`, `MessageKind`, `DeviceCapabilities`,
// `JSONValue`…) come with `import BeckonClient`, so an app imports one module for the core.
@_exported import BeckonJSON
@_exported import BeckonProtocol
