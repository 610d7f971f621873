import BeckonMarkup

extension XMPPElement {
    /// The element as XML text, attributes in a stable order. The namespace is written as
    /// `xmlns` only when it differs from the parent's (`inherited`), which is how a stanza sent
    /// on a component stream stays in `jabber:component:accept` without repeating it.
    public func xml(inherited: String? = nil) -> String {
        var out = "<" + name
        var attributes = self.attributes
        if let namespace, namespace != inherited { attributes["xmlns"] = namespace }
        for key in attributes.keys.sorted() {
            out += " \(key)='\(MarkupEscaper.xml.escape(attributes[key]!))'"
        }
        guard !children.isEmpty || !text.isEmpty else { return out + "/>" }
        out += ">" + MarkupEscaper.xml.escape(text)
        for child in children { out += child.xml(inherited: namespace ?? inherited) }
        return out + "</\(name)>"
    }
}
