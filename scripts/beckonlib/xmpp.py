"""A minimal XMPP client and external component (XEP-0114) for the XEP-0357 push tests, on the
standard library only (socket, pyexpat, ElementTree), plus helpers that drive scripts/prosody.sh.

Every stanza read comes back as a `Stanza`: `.el` is an ElementTree element whose tags carry their
namespace ("{jabber:client}message"), `.raw` is the exact text the server sent for it.

    facts = prosody_start()                     # dict of the facts line, see scripts/prosody.sh
    prosody_adduser("bob", "pw")
    with Component.connect_from(facts) as push:  # records and answers the publishes
        bob = Client.connect_from(facts, "bob", "pw")
        bob.enable_push(facts["BECKON_PROSODY_COMPONENT_JID"], "node-1", secret="s3cret")
        bob.close()
        ...
        publish = push.wait_publish(timeout=10)
    prosody_stop()
"""
import base64, hashlib, itertools, os, queue, socket, subprocess, threading, time
import xml.etree.ElementTree as ET
from xml.parsers import expat
from xml.sax.saxutils import escape, quoteattr

NS_STREAM = "http://etherx.jabber.org/streams"
NS_CLIENT = "jabber:client"
NS_COMPONENT = "jabber:component:accept"
NS_SASL = "urn:ietf:params:xml:ns:xmpp-sasl"
NS_BIND = "urn:ietf:params:xml:ns:xmpp-bind"
NS_SESSION = "urn:ietf:params:xml:ns:xmpp-session"
NS_STANZAS = "urn:ietf:params:xml:ns:xmpp-stanzas"
NS_SM = "urn:xmpp:sm:3"
NS_PUSH = "urn:xmpp:push:0"
NS_PUBSUB = "http://jabber.org/protocol/pubsub"
NS_DATA = "jabber:x:data"

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ids = itertools.count(1)


def new_id(prefix="h"):
    return f"{prefix}{next(_ids)}-{os.urandom(3).hex()}"


class XmppError(Exception):
    """The server closed the stream, failed us, or answered an iq with an error."""

    def __init__(self, message, stanza=None):
        super().__init__(message)
        self.stanza = stanza


class Stanza:
    """One top-level element of a stream: the parsed element and its exact text."""

    def __init__(self, el, raw):
        self.el, self.raw = el, raw

    def __getattr__(self, name):  # .tag, .attrib, .get(), .find() ... of the element
        return getattr(self.el, name)

    @property
    def name(self):
        return self.el.tag.rsplit("}", 1)[-1]

    def __repr__(self):
        return self.raw


# --- The stream -------------------------------------------------------------------------------

class XmlStream:
    """An XML stream on a socket. Expat parses incrementally; its byte index lets us hand back the
    exact text of each stanza, which is what a test wants to show ("what did Prosody send?")."""

    def __init__(self, sock, log=None):
        self.sock = sock
        self.log = log  # a callable given ("<<" | ">>", text), for debugging
        self.root_attrs = None
        self.closed = False
        self._ready = []
        self._restart_parser()

    def _restart_parser(self):
        # A new stream (after SASL, say) is a new XML document: a new parser, byte index from 0.
        self._parser = expat.ParserCreate("UTF-8", " ")
        self._parser.buffer_text = True
        self._parser.StartElementHandler = self._start
        self._parser.EndElementHandler = self._end
        self._parser.CharacterDataHandler = self._text
        self._raw = b""      # what we have been fed since _raw_base
        self._raw_base = 0   # byte index of _raw[0] in the document
        self._stack = []
        self._stanza_start = None

    @staticmethod
    def _tag(name):
        uri, _, local = name.rpartition(" ")
        return f"{{{uri}}}{local}" if uri else local

    def _start(self, name, attrs):
        attrs = {self._tag(k): v for k, v in attrs.items()}
        if self.root_attrs is None:
            self.root_attrs = attrs
            self.root_attrs["tag"] = self._tag(name)
            return
        if not self._stack:
            self._stanza_start = self._parser.CurrentByteIndex
            el = ET.Element(self._tag(name), attrs)
        else:
            el = ET.SubElement(self._stack[-1], self._tag(name), attrs)
        self._stack.append(el)

    def _text(self, data):
        if not self._stack:
            return  # whitespace between stanzas
        el = self._stack[-1]
        if len(el):
            el[-1].tail = (el[-1].tail or "") + data
        else:
            el.text = (el.text or "") + data

    def _end(self, name):
        if not self._stack:  # </stream:stream>
            self.closed = True
            return
        el = self._stack.pop()
        if self._stack:
            return
        # Expat's index here is where the end tag `</name>` starts, or, for an empty-element tag
        # `<name/>`, just past it: find which, so that `raw` is exactly the stanza's text.
        start = self._stanza_start - self._raw_base
        i = self._parser.CurrentByteIndex - self._raw_base
        qname = self._raw[start + 1:].split(b">", 1)[0].split(b"/", 1)[0].split()[0]
        end_tag = b"</" + qname
        if self._raw.startswith(end_tag, i) and self._raw[i + len(end_tag):i + len(end_tag) + 1] in b"> \t\r\n":
            i = self._raw.index(b">", i) + 1
        raw = self._raw[start:i].decode("utf-8")
        self._raw = self._raw[i:]
        self._raw_base += i
        self._ready.append(Stanza(el, raw))

    def send(self, text):
        if self.log:
            self.log(">>", text)
        self.sock.sendall(text.encode("utf-8"))

    def open(self, header, timeout=10):
        """Sends our stream header (after a restart, too) and waits for the peer's."""
        self._restart_parser()
        self.root_attrs, self.closed = None, False
        self.send(header)
        deadline = time.monotonic() + timeout
        while self.root_attrs is None:
            self._fill(deadline)
        return self.root_attrs

    def _fill(self, deadline):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no data from the XMPP server in time")
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise TimeoutError("no data from the XMPP server in time") from None
        if not data:
            self.closed = True
            raise XmppError("the server closed the connection")
        if self.log:
            self.log("<<", data.decode("utf-8", "replace"))
        self._raw += data
        try:
            self._parser.Parse(data, False)
        except expat.ExpatError as error:
            self.closed = True
            raise XmppError(f"the server sent malformed XML: {error}") from None

    def read(self, timeout=10):
        """The next stanza; TimeoutError if none in time, XmppError if the stream ended."""
        deadline = time.monotonic() + timeout
        while not self._ready:
            if self.closed:
                raise XmppError("the server closed the stream")
            self._fill(deadline)
        return self._ready.pop(0)

    def close(self, timeout=5):
        """Ends our stream and waits (briefly) for the peer's end, so that the server has
        processed everything before we go: for the client that is going offline."""
        try:
            if not self.closed:
                self.send("</stream:stream>")
                deadline = time.monotonic() + timeout
                while not self.closed:
                    self._fill(deadline)
        except (OSError, TimeoutError, XmppError):
            pass
        finally:
            self.sock.close()


def _stream_error(stanza):
    children = [c.tag.rsplit("}", 1)[-1] for c in stanza.el]
    return XmppError(f"stream error: {', '.join(children) or stanza.raw}", stanza)


def iq_error_condition(stanza):
    """('cancel', 'item-not-found') for an error stanza, (None, None) otherwise."""
    error = stanza.el.find("{*}error")
    if error is None:
        return None, None
    for child in error:
        if child.tag.startswith("{" + NS_STANZAS + "}") and not child.tag.endswith("}text"):
            return error.get("type"), child.tag.rsplit("}", 1)[-1]
    return error.get("type"), None


def data_form(form_type, fields, type_="submit"):
    """A jabber:x:data form: FORM_TYPE first, then var -> value (or list of values). The server
    copies the publish-options form verbatim into every publish."""
    parts = [f"<x xmlns='{NS_DATA}' type={quoteattr(type_)}>",
             f"<field var='FORM_TYPE'><value>{escape(form_type)}</value></field>"]
    for var, values in fields.items():
        values = values if isinstance(values, (list, tuple)) else [values]
        parts.append(f"<field var={quoteattr(var)}>"
                     + "".join(f"<value>{escape(str(v))}</value>" for v in values) + "</field>")
    return "".join(parts) + "</x>"


def form_fields(x):
    """{var: value} of a jabber:x:data element (the first value of each field)."""
    return {f.get("var"): f.findtext(f"{{{NS_DATA}}}value")
            for f in x.findall(f"{{{NS_DATA}}}field")}


# --- Client --------------------------------------------------------------------------------

class Client:
    """A c2s client: SASL PLAIN, bind, session. Synchronous: stanzas that arrive while we wait for
    something else go to `self.inbox`."""

    def __init__(self, host, port, domain, user, password, resource="harness", timeout=10, log=None):
        self.host, self.port, self.domain = host, port, domain
        self.user, self.password, self.resource = user, password, resource
        self.timeout, self.log = timeout, log
        self.jid = None
        self.inbox = []
        self.stream = None
        self.sm_handled = None  # stanzas received since stream management was enabled

    @classmethod
    def connect_from(cls, facts, user, password, **kwargs):
        """A connected client for the server prosody_start() described."""
        client = cls("127.0.0.1", int(facts["BECKON_PROSODY_C2S_PORT"]), facts["BECKON_PROSODY_HOST"],
                     user, password, **kwargs)
        return client.connect()

    def _header(self):
        return (f"<?xml version='1.0'?><stream:stream xmlns='{NS_CLIENT}' xmlns:stream='{NS_STREAM}'"
                f" to={quoteattr(self.domain)} version='1.0'>")

    def _features(self):
        features = self.stream.read(self.timeout)
        if features.tag != f"{{{NS_STREAM}}}features":
            raise XmppError(f"expected stream features, got {features.raw}", features)
        return features

    def connect(self):
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        self.stream = XmlStream(sock, self.log)
        self.stream.open(self._header(), self.timeout)
        features = self._features()
        mechanisms = [m.text for m in features.el.iterfind(f"{{{NS_SASL}}}mechanisms/{{{NS_SASL}}}mechanism")]
        if "PLAIN" not in mechanisms:
            raise XmppError(f"the server offers no SASL PLAIN (only {mechanisms}); is TLS required?")
        token = base64.b64encode(f"\0{self.user}\0{self.password}".encode()).decode()
        self.stream.send(f"<auth xmlns='{NS_SASL}' mechanism='PLAIN'>{token}</auth>")
        answer = self.stream.read(self.timeout)
        if answer.tag != f"{{{NS_SASL}}}success":
            raise XmppError(f"SASL PLAIN failed for {self.user}: {answer.raw}", answer)
        self.stream.open(self._header(), self.timeout)  # restart after SASL (RFC 6120 6.4.6)
        features = self._features()
        bound = self.iq("set", f"<bind xmlns='{NS_BIND}'><resource>{escape(self.resource)}</resource></bind>")
        self.jid = bound.el.findtext(f"{{{NS_BIND}}}bind/{{{NS_BIND}}}jid")
        # RFC 3921 session: obsolete, Prosody still offers it (as optional); asking is harmless.
        if features.el.find(f"{{{NS_SESSION}}}session") is not None:
            self.iq("set", f"<session xmlns='{NS_SESSION}'/>")
        return self

    def send(self, text):
        self.stream.send(text)

    def wait_for(self, match, timeout=None):
        """The first stanza (from the inbox, then the stream) for which match(stanza) is true."""
        for i, stanza in enumerate(self.inbox):
            if match(stanza):
                return self.inbox.pop(i)
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            stanza = self.stream.read(max(0.01, deadline - time.monotonic()))
            if stanza.tag == f"{{{NS_STREAM}}}error":
                raise _stream_error(stanza)
            if self.sm_handled is not None:
                if stanza.name in ("iq", "message", "presence"):
                    self.sm_handled += 1
                elif stanza.tag == f"{{{NS_SM}}}r":
                    self.ack()
                    continue
            if match(stanza):
                return stanza
            self.inbox.append(stanza)

    def iq(self, type_, payload, to=None, timeout=None):
        """Sends an iq and returns its result; XmppError if the answer is an error."""
        iq_id = new_id("iq")
        to_attr = f" to={quoteattr(to)}" if to else ""
        self.send(f"<iq type='{type_}' id='{iq_id}'{to_attr}>{payload}</iq>")
        answer = self.wait_for(lambda s: s.name == "iq" and s.get("id") == iq_id
                               and s.get("type") in ("result", "error"), timeout)
        if answer.get("type") == "error":
            kind, condition = iq_error_condition(answer)
            raise XmppError(f"iq {payload[:60]!r} failed: {kind}/{condition}", answer)
        return answer

    def send_message(self, to, body, type_="chat", extra=""):
        """Sends a message and returns its id."""
        message_id = new_id("m")
        self.send(f"<message type={quoteattr(type_)} to={quoteattr(to)} id='{message_id}'>"
                  f"<body>{escape(body)}</body>{extra}</message>")
        return message_id

    def send_presence(self, payload="", type_=None):
        type_attr = f" type={quoteattr(type_)}" if type_ else ""
        self.send(f"<presence{type_attr}>{payload}</presence>" if payload else f"<presence{type_attr}/>")

    def enable_push(self, jid, node, secret=None, options=None):
        """XEP-0357 enable; `secret` and `options` go into the publish-options form that the
        server copies into every publish."""
        fields = dict(options or {})
        if secret is not None:
            fields["secret"] = secret
        form = data_form(f"{NS_PUBSUB}#publish-options", fields) if fields else ""
        return self.iq("set", f"<enable xmlns='{NS_PUSH}' jid={quoteattr(jid)} node={quoteattr(node)}>{form}</enable>")

    def disable_push(self, jid, node=None):
        node_attr = f" node={quoteattr(node)}" if node is not None else ""
        return self.iq("set", f"<disable xmlns='{NS_PUSH}' jid={quoteattr(jid)}{node_attr}/>")

    def ping(self, timeout=None):
        """A round trip to the server: everything sent before has been processed."""
        return self.iq("get", "<ping xmlns='urn:xmpp:ping'/>", to=self.domain, timeout=timeout)

    def enable_stream_management(self):
        """XEP-0198 with resumption: if the connection then drops (drop()), Prosody keeps the
        session hibernating and queues its stanzas, as it does for a phone that lost its network."""
        self.send(f"<enable xmlns='{NS_SM}' resume='true'/>")
        answer = self.wait_for(lambda s: s.tag in (f"{{{NS_SM}}}enabled", f"{{{NS_SM}}}failed"))
        if answer.name != "enabled":
            raise XmppError(f"stream management refused: {answer.raw}", answer)
        self.sm_handled = 0
        return answer

    def ack(self, sync=False):
        """Acknowledges every stanza received so far (wait_for answers Prosody's <r/> with this).
        A stanza left unacknowledged when the connection drops is pushed at once. sync: asks for
        Prosody's ack too, so that ours has been processed when this returns."""
        self.send(f"<a xmlns='{NS_SM}' h='{self.sm_handled}'/>")
        if sync:
            self.send(f"<r xmlns='{NS_SM}'/>")
            self.wait_for(lambda s: s.tag == f"{{{NS_SM}}}a")

    def close(self):
        """Ends the stream cleanly: the session is gone (without smacks hibernation), the user is
        offline once no other session is."""
        if self.stream:
            self.stream.close()

    def drop(self):
        """Closes the TCP connection without ending the stream, as a lost network would."""
        if self.stream:
            self.stream.sock.close()


# --- External component (XEP-0114) ------------------------------------------------------------

class Publish:
    """A pubsub publish the component received: the stanza, its node, the summary form of the
    notification and the publish-options form (where the client's secret is)."""

    def __init__(self, stanza):
        self.stanza = stanza
        publish = stanza.el.find(f"{{{NS_PUBSUB}}}pubsub/{{{NS_PUBSUB}}}publish")
        self.node = publish.get("node")
        summary = publish.find(f"{{{NS_PUBSUB}}}item/{{{NS_PUSH}}}notification/{{{NS_DATA}}}x")
        self.summary = form_fields(summary) if summary is not None else {}
        options = stanza.el.find(f"{{{NS_PUBSUB}}}pubsub/{{{NS_PUBSUB}}}publish-options/{{{NS_DATA}}}x")
        self.options = form_fields(options) if options is not None else {}

    @property
    def raw(self):
        return self.stanza.raw


class Component:
    """An external component that acts as the XEP-0357 app server: it records each pubsub
    publish and answers it, with a result or, if `error` is set, with that <error/> element.
    A thread reads the stream; use wait_publish() to take the publishes in order."""

    def __init__(self, host, port, jid, secret, timeout=10, log=None):
        self.host, self.port, self.jid, self.secret = host, port, jid, secret
        self.timeout, self.log = timeout, log
        self.error = None  # e.g. "<error type='cancel'><item-not-found xmlns='...'/></error>"
        self.publishes = queue.Queue()
        self.others = queue.Queue()  # every other stanza, for inspection
        self.failure = None  # why the stream ended, if we did not end it
        self._thread = None
        self._closing = False

    @classmethod
    def connect_from(cls, facts, **kwargs):
        component = cls("127.0.0.1", int(facts["BECKON_PROSODY_COMPONENT_PORT"]),
                        facts["BECKON_PROSODY_COMPONENT_JID"], facts["BECKON_PROSODY_COMPONENT_SECRET"], **kwargs)
        return component.connect()

    def connect(self):
        sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        self.stream = XmlStream(sock, self.log)
        # XEP-0114: the stream's `to` is the component's JID, the answer's `id` salts the secret.
        attrs = self.stream.open(f"<?xml version='1.0'?><stream:stream xmlns='{NS_COMPONENT}'"
                                 f" xmlns:stream='{NS_STREAM}' to={quoteattr(self.jid)}>", self.timeout)
        digest = hashlib.sha1((attrs["id"] + self.secret).encode("utf-8")).hexdigest()
        self.stream.send(f"<handshake>{digest}</handshake>")
        answer = self.stream.read(self.timeout)
        if answer.name != "handshake":
            raise _stream_error(answer) if answer.name == "error" else XmppError(f"handshake refused: {answer.raw}")
        self._thread = threading.Thread(target=self._serve, name=f"component {self.jid}", daemon=True)
        self._thread.start()
        return self

    def _serve(self):
        try:
            while True:
                try:
                    stanza = self.stream.read(3600)
                except TimeoutError:
                    continue
                if stanza.tag == f"{{{NS_STREAM}}}error":
                    self.failure = _stream_error(stanza)
                    self.others.put(stanza)
                    continue
                if stanza.name == "iq" and stanza.get("type") == "set" and stanza.el.find(
                        f"{{{NS_PUBSUB}}}pubsub/{{{NS_PUBSUB}}}publish") is not None:
                    self._answer(stanza, self.error)
                    self.publishes.put(Publish(stanza))
                else:
                    if stanza.name == "iq" and stanza.get("type") in ("get", "set"):
                        self._answer(stanza, f"<error type='cancel'><service-unavailable xmlns='{NS_STANZAS}'/></error>")
                    self.others.put(stanza)
        except (OSError, XmppError) as error:
            if not self._closing and self.failure is None:
                self.failure = error

    def _answer(self, iq, error):
        # From and to swapped, same id: the answer the server's iq tracker matches.
        attrs = f"from={quoteattr(iq.get('to'))} to={quoteattr(iq.get('from'))} id={quoteattr(iq.get('id'))}"
        if error:
            self.stream.send(f"<iq type='error' {attrs}>{error}</iq>")
        else:
            self.stream.send(f"<iq type='result' {attrs}/>")

    def wait_publish(self, timeout=None):
        """The next publish; TimeoutError if none in time."""
        timeout = self.timeout if timeout is None else timeout
        try:
            return self.publishes.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no publish reached {self.jid} in {timeout} s"
                               + (f" (the component's stream failed: {self.failure})" if self.failure else "")) from None

    def close(self):
        # The reading thread owns the parser: we end our stream and let it read the server's end.
        self._closing = True
        try:
            self.stream.send("</stream:stream>")
        except OSError:
            pass
        if self._thread:
            self._thread.join(timeout=3)
        self.stream.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- scripts/prosody.sh ------------------------------------------------------------------------

def _prosody(*args, env=None):
    result = subprocess.run([os.path.join(SCRIPTS, "prosody.sh"), *args], env=env,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"scripts/prosody.sh {' '.join(args[:1])} failed: {result.stderr.strip()}")
    return result.stdout


def parse_facts(line):
    return dict(word.split("=", 1) for word in line.split())


def prosody_start(**env):
    """Starts the throwaway Prosody (extra environment, e.g. BECKON_PROSODY_PUSH_BODY="1") and
    returns its facts as a dict."""
    return parse_facts(_prosody("start", env={**os.environ, **env}))


def prosody_adduser(user, password):
    _prosody("adduser", user, password)


def prosody_stop():
    _prosody("stop")
