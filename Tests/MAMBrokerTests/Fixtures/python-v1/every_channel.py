#!/usr/bin/python3
"""A version-1 client through every channel it speaks.

mamwire.py beside this file is the Python client as it was while the protocol had one version
(a decision without ruleName and decidedAt), kept unchanged: it refuses any byte it does not
expect. This script drives it through the broker's channels and prints one JSON line per
request with what came back, so a test can hold the broker to answering version 1 in version 1's
layout. Arguments: a managed app's bundle id (open-url, share), and an unmanaged app's, which
meanwhile answers this one's import, imports from it, shares a document with it and opens a URL
in it, so the frames the broker starts (an export request, a document, a URL) reach a
version-1 client too.
"""

import json
import os
import sys

sys.dont_write_bytecode = True

import mamwire  # noqa: E402

target = sys.argv[1]
peer = sys.argv[2]
broker = mamwire.Broker()


def say(channel, **fields):
    print(json.dumps({"channel": channel, **fields}), flush=True)


def decided(d):
    return {"outcome": mamwire.OUTCOMES[d.outcome], "rule": d.rule, "allowed": d.allowed}


try:
    welcome = broker.hello()
    say("hello", version=welcome.version, app=welcome.bundleID)
    say("identity", **decided(broker.set_identity("")))
    say("can-open", result=broker.can_open_url("contosodocs://open?doc=1"))
    say("open-url", **decided(broker.open_url("contosodocs://open?doc=1")))
    say("copy", change=broker.copy("from a version-1 client"))
    decision, text = broker.paste()
    say("paste", text=text, **decided(decision))
    say("targets", targets=[list(t) for t in broker.list_targets("public.plain-text")])
    say("share", **decided(broker.share(target, "public.plain-text", "v1.txt", b"a version-1 share")))
    say("save", **decided(broker.save_to(32, None, "v1.txt", b"saved by a version-1 client")))
    decision, message, content = broker.open_from(8, None, "v1.txt")
    say("open", content=content.decode() if content is not None else None, **decided(decision))
    decision, message, content = broker.import_from(peer, "public.plain-text")
    say("import", content=content.decode() if content is not None else None, **decided(decision))
    # What the other app starts: an import from this one, a document, a URL.
    event = broker.wait("exportRequest", timeout=20)
    if event is not None:
        broker.reply_export(event[0], event[1].contentType, "v1-export.txt", b"exported by a version-1 client")
    say("export", type=event[1].contentType if event else None)
    event = broker.wait("document", timeout=20)
    received = None
    if event is not None and event[2] is not None:
        try:
            received = mamwire.read_document(event[2]).decode()
        finally:
            os.close(event[2])
    say("document", name=event[1].name if event else None, content=received)
    event = broker.wait("urlDelivery", timeout=20)
    say("url", url=event[1].url if event else None)
    broker.bye()
    say("bye")
except mamwire.WireError as error:
    say("error", code=error.code, detail=str(error))
    sys.exit(1)
