// An extension imports this module alone: the core comes with it.
@_exported import BeckonClient
