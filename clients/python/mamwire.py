"""MAMWire for Python: the broker protocol of docs/PROTOCOL.md, standard library only.

An app started by `mamlaunch run` holds one connection to the broker, a SOCK_SEQPACKET socket
on descriptor 3 (MAMLAB_BROKER_FD). Every packet is one frame:

    magic "MW" | version u8 | type u8 | id u32 | payload length u32 | payload

integers little-endian. This module encodes and decodes the frames an app needs (handshake,
identity, URLs, pasteboard, open-in and share, import and export, storage locations) as strictly
as the broker's own Swift codec: the same bytes out, the same refusals in. Everything that arrives
is hostile until decoded: sizes are bounded before anything is read, and a frame that breaks a rule
raises WireError naming the field and the byte.

It speaks versions 1 to 3 (docs/PROTOCOL.md, "Versions"; version 3 adds only a message of the
SDK's, which this client does not speak) and asks for the newest: the hello goes
out in a version-1 frame, the broker's welcome names the version it chose, and every frame after
it is in that version's layout (a version-1 decision has no ruleName or decidedAt: they read as "").
"""

import array
import fcntl
import os
import select
import socket
import struct
import time

VERSION = 3  # the newest this client speaks
VERSIONS = (1, 2, 3)
# The version each message type first appeared in; every other one is in version 1.
FIRST_VERSION = {0x11: 2, 0x67: 3}
HEADER = struct.Struct("<2sBBII")  # magic, version, type, id, payload length
MAGIC = b"MW"
MAX_FRAME = 65_536
MAX_TEXT = 4_096
MAX_PASTE_TEXT = 60_000
MAX_LIST = 256
MAX_SAVE_LOCATION = 128
MAX_OPEN_LOCATION = 32
# Frames the broker starts on its own (a URL, a pushed document, an export request) carry ids
# with this bit set; an app numbers its requests from 1.
BROKER_ID = 0x8000_0000
# The seals the broker requires on every document an app hands it.
DOCUMENT_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE

OUTCOMES = ("allowed", "blocked", "encrypted", "filtered", "switched", "rewritten")
TAGS = ("doc", "observed", "chosen")
ERROR_CODES = {
    1: "badMagic", 2: "unsupportedVersion", 3: "unknownType", 4: "truncated", 5: "oversized",
    6: "fieldOutOfRange", 7: "invalidText", 8: "trailingBytes", 9: "outOfOrder",
    10: "missingDescriptor", 11: "unexpectedDescriptor", 12: "notAllowed", 13: "unknownTarget",
    14: "internalError", 15: "limitReached", 16: "invalidName",
}
CODE_NUMBERS = {name: code for code, name in ERROR_CODES.items()}

# Each message: its type byte and its fields in wire order, as (name, kind). Kinds: u8, u16, u32,
# bool, text, paste (a pasteboard text, up to 60,000 bytes), text? (presence byte, then a text),
# texts (a list of texts), targets (a list of bundle id and outcome), decision, save/open (a
# storage location bit), code (an error code).
MESSAGES = {
    "hello": (0x01, [("minVersion", "u8"), ("maxVersion", "u8"), ("integratesSDK", "bool")]),
    "welcome": (0x02, [("version", "u8"), ("bundleID", "text"), ("managedAccount", "text?")]),
    "error": (0x03, [("code", "code"), ("detail", "text")]),
    "bye": (0x04, []),
    "setIdentity": (0x10, [("account", "text")]),
    "setViewIdentities": (0x11, [("accounts", "texts")]),
    "canOpenURL": (0x20, [("url", "text")]),
    "canOpenURLResult": (0x21, [("result", "bool")]),
    "openURL": (0x22, [("url", "text")]),
    "urlDelivery": (0x23, [("url", "text"), ("senderAccount", "text?")]),
    "decision": (0x2F, [("decision", "decision")]),
    "copy": (0x30, [("text", "paste"), ("types", "texts")]),
    "copied": (0x31, [("changeCount", "u32")]),
    "paste": (0x32, []),
    "pasteResult": (0x33, [("decision", "decision"), ("text", "paste")]),
    "listTargets": (0x40, [("contentType", "text")]),
    "targets": (0x41, [("targets", "targets")]),
    "share": (0x42, [("target", "text"), ("contentType", "text"), ("name", "text")]),
    "document": (0x43, [("contentType", "text"), ("name", "text"), ("owner", "text?"), ("encrypted", "bool")]),
    "importRequest": (0x44, [("source", "text"), ("contentType", "text")]),
    "exportRequest": (0x45, [("contentType", "text")]),
    "exportReply": (0x46, [("contentType", "text"), ("name", "text")]),
    "saveTo": (0x50, [("location", "save"), ("account", "text?"), ("name", "text")]),
    "openFrom": (0x51, [("location", "open"), ("account", "text?"), ("name", "text")]),
    "file": (0x52, [("name", "text"), ("owner", "text?")]),
}
NAMES = {type_: name for name, (type_, _) in MESSAGES.items()}
# Types MAMWire has that this client does not speak (enrollment, app config, conditional access).
OTHER_TYPES = {0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x70, 0x71, 0x72, 0x78, 0x79, 0x7A, 0x7B, 0x7C, 0x7D, 0x7E}
WITH_DESCRIPTOR = {"share", "document", "exportReply", "saveTo", "file"}


class WireError(Exception):
    """A frame that does not decode or cannot be encoded: `code` is the protocol's error name."""

    def __init__(self, code, detail):
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class Refused(Exception):
    """The broker's `error` frame: a refusal (codes 12-16) or a protocol error it closed on."""

    def __init__(self, code, detail):
        super().__init__(f"{ERROR_CODES.get(code, code)}: {detail}")
        self.code = ERROR_CODES.get(code, str(code))
        self.detail = detail


class Decision:
    """A decision of the broker's policy engine, exactly as it travelled."""

    __slots__ = ("allowed", "outcome", "rule", "tag", "message", "detail", "rule_name", "decided_at")

    def __init__(self, allowed, outcome, rule, tag, message, detail="", rule_name="", decided_at=""):
        self.allowed, self.outcome, self.rule, self.tag = allowed, outcome, rule, tag
        self.message, self.detail = message, detail
        # The deciding rule itself (rule is its section, which several share), and the engine's
        # file and line that chose it.
        self.rule_name, self.decided_at = rule_name, decided_at

    def __eq__(self, other):
        return isinstance(other, Decision) and all(getattr(self, f) == getattr(other, f) for f in self.__slots__)

    def __repr__(self):
        return f"Decision({OUTCOMES[self.outcome]}, rule {self.rule}: {self.message})"

    def as_json(self):
        """The object docs/SCRIPTING.md prints for a decision."""
        return {"outcome": OUTCOMES[self.outcome], "allowed": self.allowed, "rule": self.rule,
                "message": self.message, "detail": self.detail, "ruleName": self.rule_name, "decidedAt": self.decided_at}


class Message:
    """One message: its kind (a key of MESSAGES) and its fields, also readable as attributes."""

    def __init__(self, kind, /, **fields):
        if kind not in MESSAGES:
            raise ValueError(f"unknown message {kind!r}")
        self.kind = kind
        self.fields = fields

    def __getattr__(self, field):
        try:
            return self.__dict__["fields"][field]
        except KeyError:
            raise AttributeError(field) from None

    def __eq__(self, other):
        return isinstance(other, Message) and (self.kind, self.fields) == (other.kind, other.fields)

    def __repr__(self):
        return f"{self.kind}({', '.join(f'{k}={v!r}' for k, v in self.fields.items())})"


# Encoding ---------------------------------------------------------------------------------------

def encode(frame_id, message, version=VERSION):
    """The bytes of one frame in `version`'s layout. Raises WireError for what the other side
    would refuse anyway."""
    type_, fields = MESSAGES[message.kind]
    if version not in VERSIONS:
        raise WireError("unsupportedVersion", f"version {version}; this side speaks {VERSIONS[0]}...{VERSIONS[-1]}")
    if version < FIRST_VERSION.get(type_, 1):
        raise WireError("unknownType", f"{message.kind} is new in version {FIRST_VERSION[type_]}; this connection speaks {version}")
    payload = bytearray()
    for field, kind in fields:
        if field not in message.fields:
            raise WireError("fieldOutOfRange", f"{message.kind} needs field {field}")
        try:
            _put(payload, field, kind, message.fields[field], version)
        except (struct.error, TypeError, AttributeError) as error:
            raise WireError("fieldOutOfRange", f"field {field} of {message.kind}: {error}") from None
    if extra := set(message.fields) - {f for f, _ in fields}:
        raise WireError("trailingBytes", f"{message.kind} has no field {sorted(extra)[0]}")
    if not 0 <= frame_id <= 0xFFFF_FFFF:
        raise WireError("fieldOutOfRange", f"id {frame_id} is not a u32")
    frame = HEADER.pack(MAGIC, version, type_, frame_id, len(payload)) + payload
    if len(frame) > MAX_FRAME:
        raise WireError("oversized", f"frame of {len(frame)} bytes; the limit is {MAX_FRAME}")
    return bytes(frame)


def _put_text(out, field, value, limit=MAX_TEXT):
    raw = value.encode("utf-8")  # a lone surrogate raises here: not valid UTF-8
    if len(raw) > limit:
        raise WireError("fieldOutOfRange", f"field {field} is {len(raw)} bytes long; the limit is {limit}")
    out += struct.pack("<H", len(raw)) + raw


def _put(out, field, kind, value, version):
    if kind in ("u8", "save", "open"):
        out += struct.pack("<B", value)
    elif kind == "u16":
        out += struct.pack("<H", value)
    elif kind == "code":
        out += struct.pack("<H", CODE_NUMBERS[value] if isinstance(value, str) else value)
    elif kind == "u32":
        out += struct.pack("<I", value)
    elif kind == "bool":
        out.append(1 if value else 0)
    elif kind == "text":
        _put_text(out, field, value)
    elif kind == "paste":
        _put_text(out, field, value, MAX_PASTE_TEXT)
    elif kind == "text?":
        if value is None:
            out.append(0)
        else:
            out.append(1)
            _put_text(out, field, value)
    elif kind == "texts":
        if len(value) > MAX_LIST:
            raise WireError("fieldOutOfRange", f"field {field} counts {len(value)} items; the limit is {MAX_LIST}")
        out += struct.pack("<H", len(value))
        for i, text in enumerate(value):
            _put_text(out, f"{field}[{i}]", text)
    elif kind == "targets":
        if len(value) > MAX_LIST:
            raise WireError("fieldOutOfRange", f"field {field} counts {len(value)} items; the limit is {MAX_LIST}")
        out += struct.pack("<H", len(value))
        for i, (bundle_id, outcome) in enumerate(value):
            _put_text(out, f"{field}[{i}].bundleID", bundle_id)
            out.append(outcome)
    elif kind == "decision":
        out.append(1 if value.allowed else 0)
        out.append(value.outcome)
        _put_text(out, "rule", value.rule)
        out.append(value.tag)
        _put_text(out, "message", value.message)
        _put_text(out, "detail", value.detail)
        if version >= 2:
            _put_text(out, "ruleName", value.rule_name)
            _put_text(out, "decidedAt", value.decided_at)
    else:
        raise AssertionError(kind)


# Decoding ---------------------------------------------------------------------------------------

class _Reader:
    def __init__(self, data, offset, version):
        self.data, self.offset, self.version = data, offset, version

    def take(self, n, field):
        if self.offset + n > len(self.data):
            raise WireError("truncated", f"field {field} at byte {self.offset} needs {n} bytes; "
                                         f"{len(self.data) - self.offset} remain")
        chunk = self.data[self.offset:self.offset + n]
        self.offset += n
        return chunk

    def u8(self, field):
        return self.take(1, field)[0]

    def u16(self, field):
        return struct.unpack("<H", self.take(2, field))[0]

    def u32(self, field):
        return struct.unpack("<I", self.take(4, field))[0]

    def bool(self, field):
        at, value = self.offset, self.u8(field)
        if value > 1:
            raise WireError("fieldOutOfRange", f"field {field} at byte {at} is {value}; a flag is 0 or 1")
        return value == 1

    def range(self, field, highest):
        at, value = self.offset, self.u8(field)
        if value > highest:
            raise WireError("fieldOutOfRange", f"field {field} at byte {at} is {value}; allowed 0...{highest}")
        return value

    def text(self, field, limit=MAX_TEXT):
        at, n = self.offset, self.u16(field)
        if n > limit:
            raise WireError("fieldOutOfRange", f"field {field} at byte {at} is {n} bytes long; the limit is {limit}")
        raw = self.take(n, field)
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise WireError("invalidText", f"field {field} at byte {at + 2} is not valid UTF-8") from None

    def count(self, field):
        at, n = self.offset, self.u16(field)
        if n > MAX_LIST:
            raise WireError("fieldOutOfRange", f"field {field} at byte {at} counts {n} items; the limit is {MAX_LIST}")
        return n

    def location(self, field, highest):
        at, value = self.offset, self.u8(field)
        if value > highest or value & (value - 1):
            raise WireError("fieldOutOfRange", f"field {field} at byte {at} is {value}; a location is 0 or one bit up to {highest}")
        return value

    def field(self, field, kind):
        if kind == "u8":
            return self.u8(field)
        if kind == "u16":
            return self.u16(field)
        if kind == "u32":
            return self.u32(field)
        if kind == "bool":
            return self.bool(field)
        if kind == "text":
            return self.text(field)
        if kind == "paste":
            return self.text(field, MAX_PASTE_TEXT)
        if kind == "text?":
            return self.text(field) if self.bool(field + " presence") else None
        if kind == "texts":
            return [self.text(f"{field}[{i}]") for i in range(self.count(field))]
        if kind == "targets":
            return [(self.text(f"{field}[{i}].bundleID"), self.range(f"{field}[{i}].outcome", len(OUTCOMES) - 1))
                    for i in range(self.count(field))]
        if kind == "decision":
            decision = Decision(self.bool("allowed"), self.range("outcome", len(OUTCOMES) - 1), self.text("rule"),
                                self.range("tag", len(TAGS) - 1), self.text("message"), self.text("detail"))
            if self.version >= 2:
                decision.rule_name, decision.decided_at = self.text("ruleName"), self.text("decidedAt")
            return decision
        if kind == "save":
            return self.location(field, MAX_SAVE_LOCATION)
        if kind == "open":
            return self.location(field, MAX_OPEN_LOCATION)
        if kind == "code":
            at, code = self.offset, self.u16(field)
            if code not in ERROR_CODES:
                raise WireError("fieldOutOfRange", f"field code at byte {at} is {code}; no such error code")
            return ERROR_CODES[code]
        raise AssertionError(kind)


def decode(data, agreed=None):
    """One frame's (id, Message), strictly: every byte accounted for, every field in range, in
    the layout of the frame's version: `agreed` once the connection has one (a frame of another
    is refused), any version this side speaks before."""
    data = memoryview(bytes(data))
    if len(data) > MAX_FRAME:
        raise WireError("oversized", f"frame of {len(data)} bytes; the limit is {MAX_FRAME}")
    if len(data) < HEADER.size:
        raise WireError("truncated", f"frame of {len(data)} bytes is shorter than the {HEADER.size}-byte header")
    if data[0:2] != MAGIC:
        raise WireError("badMagic", f"bytes 0-1 are 0x{data[0]:02X}{data[1]:02X}; a frame starts with \"MW\" (0x4D57)")
    version = data[2]
    if agreed is not None and version != agreed:
        raise WireError("unsupportedVersion", f"byte 2: version {version}; this connection agreed on version {agreed}")
    if version not in VERSIONS:
        raise WireError("unsupportedVersion", f"byte 2: version {version}; this side speaks {VERSIONS[0]}...{VERSIONS[-1]}")
    type_ = data[3]
    if type_ not in NAMES:
        if type_ in OTHER_TYPES:
            raise WireError("unknownType", f"byte 3: message type 0x{type_:02X} is MAMWire's, but not one this client speaks")
        raise WireError("unknownType", f"byte 3: unknown message type 0x{type_:02X}")
    if version < FIRST_VERSION.get(type_, 1):
        raise WireError("unknownType", f"byte 3: message type 0x{type_:02X} is new in version {FIRST_VERSION[type_]}; "
                                       f"this frame is version {version}")
    _, _, _, frame_id, length = HEADER.unpack(data[:HEADER.size])
    if HEADER.size + length != len(data):
        code = "truncated" if HEADER.size + length > len(data) else "trailingBytes"
        raise WireError(code, f"header announces {length} payload bytes; {len(data) - HEADER.size} arrived")
    kind = NAMES[type_]
    reader = _Reader(data, HEADER.size, version)
    fields = {}
    for field, field_kind in MESSAGES[kind][1]:
        fields[field] = reader.field(field, field_kind)
    if kind == "hello" and fields["minVersion"] > fields["maxVersion"]:
        raise WireError("fieldOutOfRange", f"minVersion {fields['minVersion']} is above maxVersion {fields['maxVersion']}")
    if reader.offset != len(data):
        raise WireError("trailingBytes", f"{len(data) - reader.offset} bytes after the last field, at byte {reader.offset}")
    return frame_id, Message(kind, **fields)


# Documents --------------------------------------------------------------------------------------

def sealed_document(content):
    """A memfd holding `content`, sealed so it cannot change after the broker decides on it."""
    fd = os.memfd_create("mamwire-document", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, DOCUMENT_SEALS)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_document(fd, limit=256 << 20):
    """The whole content of a descriptor the broker sent, from offset 0, at most `limit` bytes."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise WireError("fieldOutOfRange", f"the document is {size} bytes; this app reads at most {limit}")
    chunks, offset = [], 0
    while offset < size:
        chunk = os.pread(fd, min(size - offset, 1 << 20), offset)
        if not chunk:
            break
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


# The connection ---------------------------------------------------------------------------------

class Connection:
    """Frames over the app's broker socket, each with at most one descriptor."""

    def __init__(self, fd=None):
        if fd is None:
            text = os.environ.get("MAMLAB_BROKER_FD")
            if text is None or not text.isdigit():
                raise RuntimeError("no broker connection: MAMLAB_BROKER_FD is not set (run the app with mamlaunch run)")
            fd = int(text)
        self.socket = socket.socket(fileno=fd)
        if self.socket.type != socket.SOCK_SEQPACKET:
            raise RuntimeError(f"descriptor {fd} is not a SOCK_SEQPACKET socket")
        # The version the welcome named; None before it (frames then go out in the oldest).
        self.version = None

    def send(self, frame_id, message, descriptor=None):
        if (message.kind in WITH_DESCRIPTOR) != (descriptor is not None):
            need = "must carry one descriptor" if message.kind in WITH_DESCRIPTOR else "carries no descriptor"
            raise WireError("missingDescriptor" if descriptor is None else "unexpectedDescriptor", f"{message.kind} {need}")
        data = encode(frame_id, message, self.version or VERSIONS[0])
        ancillary = []
        if descriptor is not None:
            ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [descriptor]).tobytes())]
        self.socket.sendmsg([data], ancillary)

    def receive(self, timeout=None):
        """The next (id, Message, descriptor or None); None when the broker hung up or on timeout."""
        if timeout is not None and not select.select([self.socket], [], [], timeout)[0]:
            return None
        # One byte more than a frame may have, and room for four descriptors: more of either is
        # refused rather than silently cut off.
        int_size = array.array("i").itemsize
        data, ancillary, flags, _ = self.socket.recvmsg(MAX_FRAME + 1, socket.CMSG_SPACE(4 * int_size),
                                                        socket.MSG_CMSG_CLOEXEC)
        descriptors = array.array("i")
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                descriptors.frombytes(payload[:len(payload) - len(payload) % int_size])
        try:
            if flags & socket.MSG_CTRUNC:
                raise WireError("unexpectedDescriptor", "a frame came with more descriptors than one")
            if not data and not descriptors:
                return None
            frame_id, message = decode(data, self.version)
            if message.kind == "welcome":
                self.version = message.version
            expected = 1 if message.kind in WITH_DESCRIPTOR else 0
            if len(descriptors) != expected:
                code = "missingDescriptor" if len(descriptors) < expected else "unexpectedDescriptor"
                raise WireError(code, f"{message.kind} came with {len(descriptors)} descriptors; it carries {expected}")
        except BaseException:
            for fd in descriptors:
                os.close(fd)
            raise
        return frame_id, message, (descriptors[0] if descriptors else None)

    def close(self):
        self.socket.close()


class Broker:
    """An app's side of the broker: one method per request, each returning what the broker
    answered. Frames the broker starts on its own (URLs, documents, export requests) wait in
    `events` until the app asks for them."""

    def __init__(self, connection=None):
        self.connection = connection or Connection()
        self.next_id = 1
        self.events = []  # (id, Message, descriptor or None)

    def request(self, message, descriptor=None, until=("decision",)):
        """Sends `message` and returns its replies up to the first named in `until`, an error,
        or a decision that refuses (nothing follows one)."""
        frame_id = self.next_id
        self.next_id += 1
        self.connection.send(frame_id, message, descriptor)
        replies = []
        while True:
            got = self.connection.receive()
            if got is None:
                raise ConnectionError("the broker closed the connection")
            reply_id, reply, fd = got
            if reply_id != frame_id:
                self.events.append(got)
                continue
            if reply.kind == "error":
                if fd is not None:
                    os.close(fd)
                raise Refused(CODE_NUMBERS[reply.code], reply.detail)
            replies.append((reply, fd))
            if reply.kind in until or (reply.kind == "decision" and not reply.decision.allowed):
                return replies

    def hello(self, integrates_sdk=False):
        (welcome, _), = self.request(Message("hello", minVersion=VERSIONS[0], maxVersion=VERSION, integratesSDK=integrates_sdk),
                                     until=("welcome",))
        return welcome

    def set_identity(self, account):
        return self.request(Message("setIdentity", account=account))[-1][0].decision

    def set_view_identities(self, accounts):
        """A view of several accounts at once ("" is personal); the broker's decision."""
        return self.request(Message("setViewIdentities", accounts=list(accounts)))[-1][0].decision

    def can_open_url(self, url):
        return self.request(Message("canOpenURL", url=url), until=("canOpenURLResult",))[-1][0].result

    def open_url(self, url):
        return self.request(Message("openURL", url=url))[-1][0].decision

    def copy(self, text, types=("public.utf8-plain-text",)):
        return self.request(Message("copy", text=text, types=list(types)), until=("copied",))[-1][0].changeCount

    def paste(self):
        """(Decision, text): the text that arrived, or the replacement text when blocked."""
        reply = self.request(Message("paste"), until=("pasteResult",))[-1][0]
        return reply.decision, reply.text

    def list_targets(self, content_type):
        return self.request(Message("listTargets", contentType=content_type), until=("targets",))[-1][0].targets

    def share(self, target, content_type, name, content):
        fd = sealed_document(content)
        try:
            return self.request(Message("share", target=target, contentType=content_type, name=name), fd)[-1][0].decision
        finally:
            os.close(fd)

    def import_from(self, source, content_type):
        """(Decision, document Message or None, content or None)."""
        replies = self.request(Message("importRequest", source=source, contentType=content_type), until=("document",))
        return self._with_document(replies)

    def reply_export(self, request_id, content_type, name, content):
        """Answers an exportRequest (from `events`) under the broker's id."""
        fd = sealed_document(content)
        try:
            self.connection.send(request_id, Message("exportReply", contentType=content_type, name=name), fd)
        finally:
            os.close(fd)

    def save_to(self, location, account, name, content):
        fd = sealed_document(content)
        try:
            return self.request(Message("saveTo", location=location, account=account, name=name), fd)[-1][0].decision
        finally:
            os.close(fd)

    def open_from(self, location, account, name):
        """(Decision, file Message or None, content or None)."""
        replies = self.request(Message("openFrom", location=location, account=account, name=name), until=("file",))
        return self._with_document(replies)

    def wait(self, kind, timeout=5.0):
        """The next event of `kind` (urlDelivery, document, exportRequest) as (id, Message,
        descriptor), or None when none came within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event[1].kind == kind:
                    return self.events.pop(i)
            left = deadline - time.monotonic()
            got = self.connection.receive(timeout=max(left, 0)) if left > 0 else None
            if got is None:
                return None
            self.events.append(got)

    def bye(self):
        self.connection.send(self.next_id, Message("bye"))
        self.next_id += 1

    @staticmethod
    def _with_document(replies):
        decision = next(m.decision for m, _ in replies if m.kind == "decision")
        for message, fd in replies:
            if fd is not None:
                try:
                    return decision, message, read_document(fd)
                finally:
                    os.close(fd)
        return decision, None, None
