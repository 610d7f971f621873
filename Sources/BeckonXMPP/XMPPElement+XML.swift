extension XMPPElement {
    /// The element as XML text, attributes in a stable order. The namespace is written as
    /// `xmlns` only when it differs from the parent's (`inherited`), which is how a stanza sent
    /// on a component stream stays in `jabber:component:accept` without repeating it.
    public func xml(inherited: String? = nil) -> String {
        var out = "<" + name
        var attributes = self.attributes
        if let namespace, namespace != inherited { attributes["xmlns"] = namespace }
        for key in attributes.keys.sorted() {
            out += " \(key)='\(Self.escape(attributes[key]!))'"
        }
        guard !children.isEmpty || !text.isEmpty else { return out + "/>" }
        out += ">" + Self.escape(text)
        for child in children { out += child.xml(inherited: namespace ?? inherited) }
        return out + "</\(name)>"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "'": out += "&apos;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
