#!/usr/bin/python3
"""PyHello: a managed-world app in Python, talking to the broker with mamwire.py.

Run it sandboxed (see README.md):

    mamlaunch run --manifest clients/python/Info.plist -- /usr/bin/python3 clients/python/example_app.py [URL]

With no option it greets the broker, copies a line, pastes it back, opens URL in another app and
prints each decision. With --script it reads commands on stdin, one per line, and writes one JSON
object per line on stdout (docs/SCRIPTING.md): hello, copy TEXT, paste, open-url URL,
share TARGET TYPE NAME CONTENT, wait url|document [SECONDS], bye.
"""

import hashlib
import json
import os
import sys

# The sandbox grants the app's folder read-only: there is nowhere to cache compiled modules.
sys.dont_write_bytecode = True

import mamwire  # noqa: E402  (after the line above, so no __pycache__ is attempted)

MAX_LINE = 65_536


def show(decision):
    said = f": {decision.message}" if decision.message else ""
    return f"{mamwire.OUTCOMES[decision.outcome]} (rule {decision.rule} {decision.rule_name}){said}"


def demo(broker, url):
    welcome = broker.hello()
    print(f"Hello from Python: the broker knows me as {welcome.bundleID}"
          f"{', managed by ' + welcome.managedAccount if welcome.managedAccount else ''}.")
    change = broker.copy("Greetings from PyHello")
    print(f"Copied a line (pasteboard change {change}).")
    decision, text = broker.paste()
    print(f"Paste: {show(decision)} -> {text!r}")
    try:
        print(f"Open {url}: {show(broker.open_url(url))}")
    except mamwire.Refused as refusal:
        print(f"Open {url}: refused, {refusal}")
    broker.bye()


# Scripted mode ----------------------------------------------------------------------------------

def words(line):
    """The words of a command line: single spaces between them, a JSON string for a word with
    spaces, quotes or anything else unusual."""
    decoder = json.JSONDecoder()
    out, at = [], 0
    while at < len(line):
        if line[at] == '"':
            try:
                word, end = decoder.raw_decode(line, at)
            except json.JSONDecodeError as error:
                raise ValueError(f"bad quoted word at byte {at}: {error.msg}") from None
            if not isinstance(word, str):
                raise ValueError(f"bad quoted word at byte {at}")
        else:
            end = line.find(" ", at)
            end = len(line) if end < 0 else end
            word = line[at:end]
            if word == "":
                raise ValueError(f"two spaces at byte {at}; words are separated by one")
        out.append(word)
        if end < len(line) and line[end] != " ":
            raise ValueError(f"expected a space at byte {end}")
        at = end + 1
    return out


def run_command(broker, name, args):
    """The result fields of one command (besides id and command)."""
    def need(count):
        if len(args) != count:
            raise ValueError(f"{name} takes {count} argument{'s' if count != 1 else ''}, got {len(args)}")
    if name == "hello":
        need(0)
        welcome = broker.hello()
        return {"app": welcome.bundleID, "sdk": False, "identity": None, "accounts": []}
    if name == "copy":
        need(1)
        return {"ok": True, "change": broker.copy(args[0])}
    if name == "paste":
        need(0)
        decision, text = broker.paste()
        return {"decision": decision.as_json(), "text": text, "sha256": hashlib.sha256(text.encode()).hexdigest()}
    if name == "open-url":
        need(1)
        return {"decision": broker.open_url(args[0]).as_json(), "target": None}
    if name == "share":
        need(4)
        return {"decision": broker.share(args[0], args[1], args[2], args[3].encode()).as_json()}
    if name == "wait":
        if len(args) not in (1, 2) or args[0] not in ("url", "document"):
            raise ValueError("wait takes url or document, and seconds")
        event = broker.wait("urlDelivery" if args[0] == "url" else "document", float(args[1]) if len(args) > 1 else 5.0)
        if event is None:
            return {"error": "timeout"}
        _, message, fd = event
        if message.kind == "urlDelivery":
            return {"url": message.url, "sender": message.senderAccount, "identity": None}
        try:
            content = mamwire.read_document(fd)
        finally:
            os.close(fd)
        return {"type": message.contentType, "name": message.name,
                "owner": message.owner, "encrypted": message.encrypted, "readable": not message.encrypted,
                "sha256": hashlib.sha256(content).hexdigest(), "identity": None, "via": "open-in"}
    if name == "bye":
        need(0)
        broker.bye()
        return {"ok": True}
    raise ValueError(f"unknown command {name}; this app knows hello, copy, paste, open-url, share, wait, bye")


def script(broker):
    def emit(obj):
        sys.stdout.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n")
        sys.stdout.flush()

    for number, raw in enumerate(sys.stdin.buffer, start=1):
        if len(raw) > MAX_LINE:
            emit({"id": number, "command": "?", "error": f"line of {len(raw)} bytes; the limit is {MAX_LINE}"})
            continue
        try:
            line = raw.decode("utf-8").rstrip("\n")
            command, *args = words(line) or [""]
        except (UnicodeDecodeError, ValueError) as error:
            emit({"id": number, "command": "?", "error": str(error)})
            continue
        try:
            emit({"id": number, "command": command, **run_command(broker, command, args)})
        except (ValueError, mamwire.Refused, mamwire.WireError) as error:
            emit({"id": number, "command": command, "error": str(error)})
        except ConnectionError as error:
            emit({"id": number, "command": command, "error": str(error)})
            return 1
        if command == "bye":
            return 0
    return 0


def main():
    broker = mamwire.Broker()
    if "--script" in sys.argv[1:]:
        return script(broker)
    urls = [a for a in sys.argv[1:] if not a.startswith("-")]
    demo(broker, urls[0] if urls else "courier://greeting?from=pyhello")
    return 0


if __name__ == "__main__":
    sys.exit(main())
