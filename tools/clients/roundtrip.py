#!/usr/bin/env python3
"""A day-one client of the ledger, written from schema/openapi.yaml with nothing but the standard
library: appends an order (a JSON array, with an Idempotency-Key), sends the same request again (the
original positions come back), reads the order's stream back by its percent-encoded id, follows the
live tail to the appended fact, and audits. A token with the append, read and audit scopes is read
from LEDGER_TOKEN.

    LEDGER_TOKEN=... tools/clients/roundtrip.py http://127.0.0.1:8080 ORDER_ID
"""
import json, os, sys, urllib.parse, urllib.request


def call(base, token, method, path, body=None, headers=None):
    request = urllib.request.Request(base + path, data=body, method=method,
                                     headers={"Authorization": f"Bearer {token}", **(headers or {})})
    with urllib.request.urlopen(request, timeout=60) as r:
        return r.status, r.read().decode("utf-8")


def main(base, order):
    token = os.environ["LEDGER_TOKEN"]
    fact = {"stream": f"order:{order}", "type": "OrderCreated", "occurredAt": "2026-03-31T08:15:00Z",
            "idempotencyKey": f"order:{order}:created", "expectedVersion": "no-stream",
            "payload": {"orderId": order, "userId": "u_roundtrip", "channel": "appstore", "productId": "coins_100",
                        "amount": 600, "currency": "CNY"}}
    headers = {"Content-Type": "application/json", "Idempotency-Key": f"roundtrip-{order}"}
    status, text = call(base, token, "POST", "/v1/events", json.dumps([fact]).encode(), headers)
    position = json.loads(text)["events"][0]["position"]
    print(f"appended {status} position {position}")
    status, text = call(base, token, "POST", "/v1/events", json.dumps([fact]).encode(), headers)
    again = json.loads(text)["events"][0]
    print(f"retried {status} position {again['position']} alreadyStored {str(again['alreadyStored']).lower()}")
    status, text = call(base, token, "GET", "/v1/streams/" + urllib.parse.quote(fact["stream"], safe=""))
    events = [json.loads(line) for line in text.splitlines() if line]
    print(f"read {len(events)} events of {events[0]['stream']}")
    request = urllib.request.Request(base + "/v1/events", headers={
        "Authorization": f"Bearer {token}", "Accept": "text/event-stream", "Last-Event-ID": str(position - 1)})
    with urllib.request.urlopen(request, timeout=60) as stream:
        for raw in stream:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("data: "):
                followed = json.loads(line[6:])
                print(f"followed position {followed['position']} {followed['type']}")
                break
    status, text = call(base, token, "GET", "/v1/audit")
    report = json.loads(text)
    print(f"audited {report['summary']['findings']} findings as of position {report['scope']['position']}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1].rstrip("/"), sys.argv[2])
