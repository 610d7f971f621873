/// One XML element of an XMPP stream: a stanza and everything in it (RFC 6120 §4.1: a stanza is a
/// first-level child of the stream root).
public struct XMPPElement: Hashable, Sendable {
    /// The local name, without a prefix (`iq`, `publish`).
    public var name: String
    /// The namespace in force for it: its prefix's, else the nearest default `xmlns`.
    public var namespace: String?
    /// As written, `xmlns` declarations included.
    public var attributes: [String: String]
    public var children: [XMPPElement]
    /// The element's own character data, entities decoded.
    public var text: String

    public init(
        name: String, namespace: String? = nil, attributes: [String: String] = [:], children: [XMPPElement] = [],
        text: String = ""
    ) {
        self.name = name
        self.namespace = namespace
        self.attributes = attributes
        self.children = children
        self.text = text
    }

    /// The first child with this name (and namespace, if given).
    public func child(_ name: String, namespace: String? = nil) -> XMPPElement? {
        children.first { $0.name == name && (namespace == nil || $0.namespace == namespace) }
    }

    /// Every child with this name.
    public func children(_ name: String) -> [XMPPElement] { children.filter { $0.name == name } }

    public subscript(attribute: String) -> String? { attributes[attribute] }
}
