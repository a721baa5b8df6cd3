#!/usr/bin/env python3
"""Follows the ledger's live tail (GET /v1/events, Server-Sent Events) with nothing but the
standard library: prints each fact's position and JSON line as it is appended, resuming after
--after (the last position you hold). A token with the read scope is read from LEDGER_TOKEN.

    LEDGER_TOKEN=... tools/clients/follow.py http://127.0.0.1:8080 --after 0 [--count N]
"""
import argparse, os, sys, urllib.request


def follow(base, token, last=0):
    """Yields (position, fact JSON line) from the live tail, forever, starting after `last`."""
    request = urllib.request.Request(f"{base}/v1/events", headers={
        "Accept": "text/event-stream", "Authorization": f"Bearer {token}", "Last-Event-ID": str(last)})
    with urllib.request.urlopen(request) as stream:
        position = None
        for raw in stream:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line.startswith("id: "):
                position = int(line[4:])
            elif line.startswith("data: "):
                yield position, line[6:]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Follow the ledger's live tail.")
    parser.add_argument("base", help="the service, e.g. http://127.0.0.1:8080")
    parser.add_argument("--after", type=int, default=0, help="the last position you hold (0: from the start)")
    parser.add_argument("--count", type=int, default=0, help="stop after this many facts (0: never)")
    args = parser.parse_args()
    last = args.after
    seen = 0
    while True:  # the stream ends when the service restarts: go on after the last position
        try:
            for last, fact in follow(args.base, os.environ["LEDGER_TOKEN"], last):
                print(last, fact, flush=True)
                seen += 1
                if args.count and seen >= args.count:
                    sys.exit(0)
        except OSError as e:
            print(f"follow: {e}; reconnecting after position {last}", file=sys.stderr)
        import time; time.sleep(1)
