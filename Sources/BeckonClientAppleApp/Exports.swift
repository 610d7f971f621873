// An app imports this module alone: the extension-safe adapters and the core come with it.
@_exported import BeckonClient
@_exported import BeckonClientApple
