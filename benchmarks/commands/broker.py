"""`plainsight bench broker`: the transport floor, one producer → broker → consumer hop, no plainsight.

Same rate and payload size as ``bench stream``, on a fresh embedded broker (or
``--bootstrap-servers``); latency p50/p99 overall and p99 per window of messages (the embedded
broker's in-memory log gets slower as it grows). Read it next to ``bench stream``: an end-to-end
turn crosses two such hops.
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--messages", type=int, default=10_000)
    p.add_argument("--rate", type=float, default=1000.0, help="messages/s")
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--payload-bytes", type=int, default=400)
    p.add_argument("--window", type=int, default=5000, help="messages per p99 window")
    p.add_argument("--bootstrap-servers", metavar="HOST:PORT", help="use this Kafka instead of an embedded broker")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from plainsight.middleware.commands._common import run_async

    return run_async(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import json

    from plainsight.benchmarks.broker_hop import run_hop
    from plainsight.consumers.broker import EmbeddedBroker
    from plainsight.middleware.commands._common import embedded_tuning

    broker = None
    bootstrap = args.bootstrap_servers
    if not bootstrap:
        broker = EmbeddedBroker()
        bootstrap = await broker.start()
    try:
        res = await run_hop(bootstrap, args.messages, args.rate, args.partitions, args.payload_bytes,
                            window=args.window, fetch_max_wait_ms=embedded_tuning()["kafka"]["fetch_max_wait_ms"],
                            broker_pid=broker.pid if broker is not None else None)
    finally:
        if broker is not None:
            await broker.stop()
    out = res.summary()
    out["broker"] = "embedded" if broker is not None else "external"
    print(json.dumps(out) if args.json else json.dumps(out, indent=2))
    return 0 if out["received"] == args.messages else 1
