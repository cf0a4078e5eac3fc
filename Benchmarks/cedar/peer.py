"""Cedar, the general-purpose policy engine, deciding MAMLab's "send" rule (SEMANTICS 4.1).

The same question the Swift benchmark asks: may adele's org data in a managed app go to an app
that is not managed under her account, with Send = managedApps?  Prints the median nanoseconds
per decision, measured in batches so the timer's cost is spread out.
"""
import json
import statistics
import sys
import time

import cedarpy

POLICY = """
permit(principal, action == Action::"send", resource)
when { !context.senderManaged };
permit(principal, action == Action::"send", resource)
when { context.senderManaged && context.sendLevel == "allApps" };
permit(principal, action == Action::"send", resource)
when { context.senderManaged && context.sendLevel == "managedApps" && resource.managedUnder.contains(principal) };
"""

ENTITIES = [
    {"uid": {"type": "User", "id": "adele"}, "attrs": {}, "parents": []},
    {"uid": {"type": "App", "id": "com.example.notes"}, "attrs": {"managedUnder": []}, "parents": []},
    {"uid": {"type": "App", "id": "com.contoso.docs"},
     "attrs": {"managedUnder": [{"__entity": {"type": "User", "id": "adele"}}]}, "parents": []},
]


def request(target):
    return {
        "principal": 'User::"adele"',
        "action": 'Action::"send"',
        "resource": f'App::"{target}"',
        "context": {"senderManaged": True, "sendLevel": "managedApps"},
    }


def main():
    blocked, allowed = request("com.example.notes"), request("com.contoso.docs")
    # The answers must match the engine's before the timing means anything.
    assert not cedarpy.is_authorized(blocked, POLICY, ENTITIES).allowed
    assert cedarpy.is_authorized(allowed, POLICY, ENTITIES).allowed
    batch, samples = 200, []
    deadline = time.perf_counter() + float(sys.argv[1] if len(sys.argv) > 1 else 3)
    while time.perf_counter() < deadline:
        start = time.perf_counter_ns()
        for _ in range(batch):
            cedarpy.is_authorized(blocked, POLICY, ENTITIES)
        samples.append((time.perf_counter_ns() - start) / batch)
    # The batch call parses the policies once for many requests: Cedar's best case here.
    batched, requests = [], [blocked] * batch
    deadline = time.perf_counter() + float(sys.argv[1] if len(sys.argv) > 1 else 3)
    while time.perf_counter() < deadline:
        start = time.perf_counter_ns()
        cedarpy.is_authorized_batch(requests, POLICY, ENTITIES)
        batched.append((time.perf_counter_ns() - start) / batch)
    print(json.dumps({"peer": "cedarpy", "median_ns": statistics.median(samples),
                      "batched_median_ns": statistics.median(batched), "batches": len(samples)}))


if __name__ == "__main__":
    main()
