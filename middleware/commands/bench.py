"""`plainsight bench SUBCOMMAND`: benchmarks.

Each benchmark lives in its own module exposing ``add_arguments(parser)`` and
``run(args) -> int`` and is registered in :data:`BENCHES`; like the top-level commands, a
module is imported for its arguments only (keep its top level light: argparse only) and does
its heavy imports in ``run``. To add one (e.g. ``stream``, ``faults``), add a line to BENCHES.
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: benchmark -> (module, one-line help)
BENCHES: dict[str, tuple[str, str]] = {
    "detect": (
        "middleware.commands.bench_detect",
        "detection speed: the cascade vs the Presidio baseline on the same turns, one core",
    ),
    "stream": (
        "middleware.commands.bench_stream",
        "turns/s and end-to-end latency through a broker and 1..K worker processes",
    ),
    "broker": (
        "middleware.commands.bench_broker",
        "the transport floor: one producer → broker → consumer hop, no plainsight",
    ),
    "faults": (
        "middleware.commands.bench_faults",
        "SIGKILL, broker restart, LLM outage, 10,000 hostile inputs, then a leak scan",
    ),
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..cli import add_module_commands

    add_module_commands(p.add_subparsers(dest="bench", metavar="BENCHMARK"), BENCHES, "_bench_module")


def run(args: argparse.Namespace) -> int:
    name = getattr(args, "bench", None)
    if not name:
        print("plainsight bench: choose a benchmark: " + ", ".join(BENCHES), file=sys.stderr)
        return 2
    mod = importlib.import_module(args._bench_module)
    return int(mod.run(args) or 0)
