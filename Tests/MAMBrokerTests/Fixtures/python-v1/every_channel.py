#!/usr/bin/python3
"""A version-1 client through every channel it speaks.

mamwire.py beside this file is the Python client as it was while the protocol had one version
(a decision without ruleName and decidedAt), kept unchanged: it refuses any byte it does not
expect. This script drives it through the broker's channels and prints one JSON line per
request with what came back, so a test can hold the broker to answering version 1 in version 1's
layout. Argument: the target app's bundle id for open-url and share.
"""

import json
import sys

sys.dont_write_bytecode = True

import mamwire  # noqa: E402

target = sys.argv[1]
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
    broker.bye()
    say("bye")
except mamwire.WireError as error:
    say("error", code=error.code, detail=str(error))
    sys.exit(1)
