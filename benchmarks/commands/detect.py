"""`plainsight bench detect`: detection time per turn, the cascade vs the Presidio baseline.

Both detectors run in this process, on one CPU core (the process is pinned to a single CPU
and the BLAS/OpenMP pools are limited to one thread before numpy or spaCy are imported), on
the same turns: whole dialogues sampled from the dev files (seeded), fed turn by turn in order
with a fresh session memory per dialogue, as the worker does. Both are warmed up first. Only
timings and counts are printed, never text.
"""

from __future__ import annotations

import argparse

DEFAULT_FILES = ("ncte_uptake", "mathdial", "bridge", "ncte", "presidio_synth")
_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")  # fmt: skip


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--file",
        action="append",
        dest="files",
        metavar="F",
        help="dialogue file (path, name in the data dir, or 'sample'); repeatable (default: the dev files, else the shipped synthetic sample)",
    )
    p.add_argument("--turns", type=int, default=3000, metavar="N", help="turns to time (default 3000)")
    p.add_argument("--warmup", type=int, default=100, metavar="N", help="untimed turns per detector first (default 100)")
    p.add_argument("--seed", type=int, default=13, help="sampling seed")
    p.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the first one allowed)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--config", default=None, help="YAML config file")
    p.add_argument(
        "--data-dir",
        default=None,
        help="where bare file names are looked up (default: $PLAINSIGHT_DATA_DIR or ../shared/data/dev)",
    )


def pin_single_core(cpu: int | None = None) -> int | None:
    """Limit thread pools to one thread and pin this process to one CPU; returns the CPU."""
    import os

    for var in _THREAD_VARS:
        os.environ[var] = "1"
    if not hasattr(os, "sched_setaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    chosen = cpu if cpu is not None else allowed[0]
    os.sched_setaffinity(0, {chosen})
    try:  # if numpy's BLAS was loaded before the variables were set
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except Exception:
        pass
    return chosen


def sample_dialogues(paths, n_turns: int, seed: int, read_dialogues) -> list[dict]:
    """Whole dialogues, drawn at random (seeded) from each file in turn, until ``n_turns``
    non-empty turns are collected (about the same number from each file); the last dialogue
    of a file is cut to its quota."""
    import random

    rng = random.Random(seed)
    pools = []
    for path in paths:
        ds = [d for d in read_dialogues(path) if any((t.get("text") or "").strip() for t in d["turns"])]
        rng.shuffle(ds)
        pools.append(ds)
    quota = [n_turns // len(pools) + (1 if i < n_turns % len(pools) else 0) for i in range(len(pools))]
    out: list[dict] = []
    for ds, q in zip(pools, quota):
        got = 0
        for d in ds:
            if got >= q:
                break
            turns = [t for t in d["turns"] if (t.get("text") or "").strip()][: q - got]
            got += len(turns)
            out.append({"id": d.get("id", ""), "meta": d.get("meta") or {}, "turns": turns})
    rng.shuffle(out)
    return out


def time_detector(detector, dialogues: list[dict], warmup: int) -> list[float]:
    """ms per turn for every turn of ``dialogues`` (after ``warmup`` untimed turns)."""
    import time

    from plainsight.middleware.detection.base import TurnContext

    def turns():
        for d in dialogues:
            memory = detector.new_memory()
            for i, t in enumerate(d["turns"]):
                yield t, TurnContext(role=t.get("speaker") or "student", session_id=str(d["id"]), turn_index=i,
                                     metadata=dict(d["meta"])), memory  # fmt: skip

    done = 0
    for t, ctx, memory in turns():  # warm-up: caches, lazy model parts, regex compilation
        if done >= warmup:
            break
        detector.detect(t["text"], ctx, memory)
        done += 1
    out: list[float] = []
    clock = time.perf_counter
    for t, ctx, memory in turns():
        t0 = clock()
        detector.detect(t["text"], ctx, memory)
        out.append((clock() - t0) * 1e3)
    return out


def run(args: argparse.Namespace) -> int:
    cpu = pin_single_core(args.cpu)  # before numpy / spaCy are imported

    import json
    import logging
    import statistics
    import sys

    from plainsight.middleware.config import load_settings
    from pathlib import Path

    from plainsight.middleware.evaluation import percentile, read_dialogues, resolve_data_file

    if args.turns < 1:
        print("plainsight bench detect: --turns must be >= 1", file=sys.stderr)
        return 2
    from plainsight.middleware.evaluation import default_data_dir, sample_dialogues_file

    base = Path(args.data_dir) if args.data_dir else default_data_dir()
    if not args.files and not all((base / f"{f}.jsonl").exists() for f in DEFAULT_FILES):
        # a fresh clone or an installed wheel: no dev dialogues; time the shipped synthetic sample
        sample = sample_dialogues_file()
        n_sample = sum(len([t for t in d["turns"] if (t.get("text") or "").strip()]) for d in read_dialogues(sample))
        paths = [sample] * max(1, -(-args.turns // n_sample))
        print(f"bench detect: no dev dialogues in {base} (set PLAINSIGHT_DATA_DIR or --data-dir, or pass --file): "
              f"timing the shipped synthetic sample ({n_sample} turns, repeated); figures are not comparable "
              "with docs/performance.md", file=sys.stderr)
    else:
        try:
            paths = [resolve_data_file(f, args.data_dir) for f in (args.files or DEFAULT_FILES)]
        except FileNotFoundError as exc:
            print(f"plainsight bench detect: error: {exc}", file=sys.stderr)
            return 2
    dialogues = sample_dialogues(paths, args.turns, args.seed, read_dialogues)
    n_turns = sum(len(d["turns"]) for d in dialogues)

    settings = load_settings(args.config)
    # Presidio logs a warning per unmapped spaCy entity (CARDINAL, ...): formatting and writing
    # them is not detection work, and would slow the baseline unfairly.
    logging.getLogger("presidio-analyzer").setLevel(logging.ERROR)
    from plainsight.middleware.detection.cascade import Cascade
    from plainsight.middleware.detection.presidio_engine import PresidioDetector

    cascade = Cascade.from_settings(settings)
    baseline = PresidioDetector(settings.detection.spacy_model, settings.detection.verify_model_checksums)

    results = {}
    for name, det in (("cascade", cascade), ("presidio", baseline)):
        ms = time_detector(det, dialogues, args.warmup)
        results[name] = {
            "ms_per_turn_mean": statistics.fmean(ms),
            "ms_per_turn_p50": percentile(ms, 50),
            "ms_per_turn_p99": percentile(ms, 99),
            "ms_total": sum(ms),
        }
    c, b = results["cascade"], results["presidio"]
    summary = {
        "turns": n_turns,
        "dialogues": len(dialogues),
        "files": list(dict.fromkeys(p.name for p in paths)),
        "cpu": cpu,
        "warmup_turns": args.warmup,
        "seed": args.seed,
        "cascade": c,
        "presidio": b,
        "ratio_mean": b["ms_per_turn_mean"] / c["ms_per_turn_mean"] if c["ms_per_turn_mean"] else None,
        "ratio_p99": b["ms_per_turn_p99"] / c["ms_per_turn_p99"] if c["ms_per_turn_p99"] else None,
    }
    if args.json:
        print(json.dumps(summary))
        return 0
    print(f"bench detect: {n_turns} turns from {len(dialogues)} dialogues ({', '.join(summary['files'])}); "
          f"pinned to CPU {cpu}; warm-up {args.warmup} turns each")  # fmt: skip
    print(f"{'detector':<12}{'mean ms/turn':>14}{'p50':>10}{'p99':>10}")
    for name in ("cascade", "presidio"):
        r = results[name]
        print(f"{name:<12}{r['ms_per_turn_mean']:>14.3f}{r['ms_per_turn_p50']:>10.3f}{r['ms_per_turn_p99']:>10.3f}")
    rm, rp = summary["ratio_mean"], summary["ratio_p99"]
    print(f"ratio baseline/cascade: mean {rm:.2f}x  p99 {rp:.2f}x" if rm and rp else "ratio: n/a")
    return 0
