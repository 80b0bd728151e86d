"""`plainsight bench SUBCOMMAND`: benchmarks.

Each benchmark lives in its own module of the ``benchmarks`` package (``benchmarks/commands/``,
installed with the ``bench`` extra) exposing ``add_arguments(parser)`` and ``run(args) -> int``
and is registered here by module name in :data:`BENCHES`; like the top-level commands, a
module is imported for its arguments only (keep its top level light: argparse only) and does
its heavy imports in ``run``. A module may list the third-party modules it needs in
``REQUIRES``; when one is missing the command says which extra to install instead of failing
half-way. To add one, add a line to BENCHES.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

#: benchmark -> (module, one-line help)
BENCHES: dict[str, tuple[str, str]] = {
    "detect": (
        "plainsight.benchmarks.commands.detect",
        "detection speed: the cascade vs the Presidio baseline on the same turns, one core",
    ),
    "stream": (
        "plainsight.benchmarks.commands.stream",
        "turns/s and end-to-end latency through a broker and 1..K worker processes",
    ),
    "broker": (
        "plainsight.benchmarks.commands.broker",
        "the transport floor: one producer → broker → consumer hop, no plainsight",
    ),
    "proxy": (
        "plainsight.benchmarks.commands.proxy",
        "plainsight proxy: added latency, streamed TTFT overhead, chars held back, req/s on one core (--hostile)",
    ),
    "faults": (
        "plainsight.benchmarks.commands.faults",
        "SIGKILL, broker restart, LLM outage, 10,000 hostile inputs, then a leak scan",
    ),
}


#: what to run when a benchmark's dependencies are missing
EXTRA_HINT = 'pip install -e ".[bench]"  (or: pip install "plainsight[bench]")'


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="bench", metavar="BENCHMARK")
    for name, (module, help_) in BENCHES.items():
        q = sub.add_parser(name, help=help_, description=help_)
        q.set_defaults(_bench_module=module)
        try:
            importlib.import_module(module).add_arguments(q)
        except ImportError:  # the benchmarks package is not installed: take any arguments, `run` says how to get it
            q.parse_known_args = _any_arguments(module)  # type: ignore[method-assign]


def _any_arguments(module: str):
    def parse_known_args(args=None, namespace=None):
        ns = namespace if namespace is not None else argparse.Namespace()
        ns._bench_module = module
        return ns, []

    return parse_known_args


def missing_modules(module: str) -> list[str]:
    """Modules the benchmark needs that are not importable (the module itself included)."""
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        return [exc.name or module]
    return [m for m in getattr(mod, "REQUIRES", ()) if importlib.util.find_spec(m) is None]


def run(args: argparse.Namespace) -> int:
    name = getattr(args, "bench", None)
    if not name:
        print("plainsight bench: choose a benchmark: " + ", ".join(BENCHES), file=sys.stderr)
        return 2
    missing = missing_modules(args._bench_module)
    if missing:
        print(f"plainsight bench {name}: needs the bench extra (missing: {', '.join(missing)}); install it with\n"
              f"  {EXTRA_HINT}", file=sys.stderr)
        return 2
    mod = importlib.import_module(args._bench_module)
    return int(mod.run(args) or 0)
