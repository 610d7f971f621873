/// An XEP-0357 publish as an XMPP server sends it to its app server: the `<iq type='set'>` with a
/// pubsub `<publish node=…>` whose item is a `urn:xmpp:push:0` notification, and the
/// `publish-options` form the client gave when it enabled push (its `secret`).
public struct PushPublish: Hashable, Sendable {
    public static let pubsub = "http://jabber.org/protocol/pubsub"
    public static let push = "urn:xmpp:push:0"
    public static let dataForms = "jabber:x:data"

    /// The iq's id and sender, to answer it.
    public var id: String
    public var from: String?
    /// The node the client enabled push with: which device.
    public var node: String
    /// `publish-options` → `secret`: what proves the publish is for that registration.
    public var secret: String?
    /// The `urn:xmpp:push:summary` fields (`message-count`, `last-message-sender`,
    /// `last-message-body`, …) that are present and not empty. Prosody sends no body unless told
    /// to, and a placeholder ("New Message!") for an important one.
    public var summary: [String: String]

    /// Nil when the stanza is not a publish (another iq, a message, a presence).
    public init?(_ stanza: XMPPElement) {
        guard stanza.name == "iq", stanza["type"] == "set", let id = stanza["id"],
            let pubsub = stanza.child("pubsub", namespace: Self.pubsub), let publish = pubsub.child("publish"),
            let node = publish["node"], !node.isEmpty
        else { return nil }
        self.id = id
        self.from = stanza["from"]
        self.node = node
        self.secret = pubsub.child("publish-options")?.child("x", namespace: Self.dataForms).flatMap { Self.fields($0)["secret"] }
        let notification = publish.child("item")?.child("notification", namespace: Self.push)
        self.summary = notification?.child("x", namespace: Self.dataForms).map(Self.fields) ?? [:]
        summary["FORM_TYPE"] = nil
    }

    /// A data form's fields with a non-empty first value.
    static func fields(_ form: XMPPElement) -> [String: String] {
        var fields: [String: String] = [:]
        for field in form.children("field") {
            if let name = field["var"], let value = field.child("value")?.text, !value.isEmpty { fields[name] = value }
        }
        return fields
    }

    /// The answer that tells the XMPP server the push was taken.
    public func result(from component: String) -> XMPPElement {
        var attributes = ["type": "result", "id": id, "from": component]
        attributes["to"] = from
        return XMPPElement(name: "iq", attributes: attributes)
    }

    /// An error answer (RFC 6120 §8.3). `cancel` errors count towards the server disabling the
    /// registration (Prosody drops it after 16 in a row); `wait` ones do not.
    public func error(from component: String, type: String, condition: String, text: String? = nil) -> XMPPElement {
        var attributes = ["type": "error", "id": id, "from": component]
        attributes["to"] = from
        var error = XMPPElement(name: "error", attributes: ["type": type])
        error.children.append(XMPPElement(name: condition, namespace: "urn:ietf:params:xml:ns:xmpp-stanzas"))
        if let text {
            error.children.append(XMPPElement(name: "text", namespace: "urn:ietf:params:xml:ns:xmpp-stanzas", text: text))
        }
        return XMPPElement(name: "iq", attributes: attributes, children: [error])
    }
}
