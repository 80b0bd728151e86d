"""`plainsight bench proxy`: added latency, streamed time-to-first-token overhead, characters held
back and requests/s of ``plainsight proxy`` on one core against a fake upstream with a fixed
latency (see benchmarks/proxy.py); ``--hostile N`` adds N hostile requests (benchmarks/proxy_hostile.py)."""

from __future__ import annotations

import argparse

REQUIRES = ("httpx", "starlette", "uvicorn", "psutil")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--requests", type=int, default=300, help="sequential requests per mode (default 300)")
    p.add_argument("--turns", type=int, default=6, help="requests per conversation (its history grows)")
    p.add_argument("--upstream-ms", type=float, default=20.0, help="the fake upstream's latency (default 20 ms)")
    p.add_argument("--concurrency", type=int, default=16, help="clients in the throughput phase")
    p.add_argument("--seconds", type=float, default=10.0, help="length of the throughput phase")
    p.add_argument("--hostile", type=int, nargs="?", const=2000, default=0,
                   help="also send N hostile requests (default 2000 when given without N)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    import json

    from plainsight.benchmarks.proxy import run_bench

    res = run_bench(args)
    print(json.dumps(res) if args.json else json.dumps(res, indent=2))
    ok = res["stream"]["replies_not_restored_exactly"] == 0
    h = res.get("hostile")
    if h:
        ok &= h["crashed"] == 0 and h["leaks"] == 0 and h["unanswered"] == 0 and h["proxy_alive"] and h["serving_after"]
    return 0 if ok else 1
