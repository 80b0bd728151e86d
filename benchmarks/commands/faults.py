"""`plainsight bench faults`: SIGKILL, broker restart, LLM outage and 10,000 hostile inputs,
each followed by a leak scan of everything plainsight wrote (see benchmarks/faults.py)."""

from __future__ import annotations

import argparse

#: third-party modules this benchmark needs (the `bench` extra)
REQUIRES = ("psutil", "hypothesis")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--turns", type=int, default=3000, help="turns per streaming scenario (default 3000)")
    p.add_argument("--hostile", type=int, default=10_000, help="hostile inputs (default 10000)")
    p.add_argument("--only", default=None, help="comma list of scenarios: sigkill,broker_restart,llm_outage,hostile,"
                                                "heavy_session,oversized_state,forget_race,forged_reply")
    p.add_argument("--data-dir", help="dev dialogue files (default ../shared/data/dev or PLAINSIGHT_DATA_DIR)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    import asyncio
    import json
    from pathlib import Path

    from plainsight.benchmarks.faults import run_all

    only = [x.strip() for x in args.only.split(",")] if args.only else None
    res = asyncio.run(run_all(Path(args.data_dir) if args.data_dir else None, args.turns, args.hostile, only))
    print(json.dumps(res) if args.json else json.dumps(res, indent=2))
    import sys

    failed = {k: v for k, v in res.items() if isinstance(v, dict) and "failed" in v}
    for name, v in failed.items():  # loudly: a scenario without a result is not "0 outputs"
        print(f"plainsight bench faults: scenario {name} FAILED: {v['failed']}; worker's last log lines:",
              file=sys.stderr)
        for line in v.get("worker_log_tail") or ["(no log)"]:
            print(f"    {line}", file=sys.stderr)
    ok = res["total_leaks"] == 0 and not failed
    for name in ("sigkill",):
        if name in res and name not in failed:
            ok &= res[name]["output_missing"] == 0 and res[name]["output_duplicates_differing"] == 0
    if "forget_race" in res and "forget_race" not in failed:
        ok &= res["forget_race"]["came_back"] == 0 and res["forget_race"]["came_back_after_restart"] == 0
    if "forged_reply" in res and "forged_reply" not in failed:
        ok &= res["forged_reply"]["values_restored"] == 0 and res["forged_reply"]["replies_out"] == 0
    if "oversized_state" in res and "oversized_state" not in failed:
        ok &= res["oversized_state"]["unaccounted"] == 0 and res["oversized_state"]["duplicated_turns"] == 0
    if "hostile" in res and "hostile" not in failed:
        ok &= res["hostile"]["unaccounted"] == 0 and res["hostile"]["worker_alive"]
    return 0 if ok else 1
