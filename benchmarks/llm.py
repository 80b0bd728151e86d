"""Benchmark of the LLM stage through the Pipeline, in-process, against the simulated model.

    python -m benchmarks.llm [--sessions 200] [--turns 10] [--latency 0.4] [--data DIR]

The simulated model (``benchmarks.llm_simulator``) runs in a *separate process* (so its CPU
does not count against the pipeline's) and answers from the dev set's gold spans after
``--latency`` seconds. Reports:

- ``throughput``: for policies wait and async-refine, ``--sessions`` concurrent sessions
  each sending its dialogue's turns one after the other (as the worker does), every turn sent
  to the model (gate=all, the worst case): turns/s and p50/p99 latency of the tutor-facing
  output, and for async-refine also of the refined logs output;
- ``gate``: the share of dev-set turns the default gate (``uncertain``) sends to the model,
  per source file, with the real cascade;
- ``tokens``: prompt/completion tokens per sent turn in marking vs JSON mode (the simulator
  reports usage as chars/4 for both, so the ratio is what matters).

Used by the tests with small numbers; the figures in the issue come from the defaults.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from plainsight.middleware.detection.base import CORE_LABELS as CORE
from plainsight.middleware.evaluation import default_data_dir

DEFAULT_DATA = default_data_dir()
DEV_FILES = ("mathdial", "ncte_uptake", "ncte", "bridge", "presidio_synth")


# ---------------------------------------------------------------- data


def load_dialogues(data_dir: Path | str = DEFAULT_DATA, per_file: int = 60, seed: int = 1, files=DEV_FILES) -> list[dict]:
    """A seeded sample of dialogues from each dev file (all dialogues if per_file <= 0)."""
    rnd = random.Random(seed)
    out = []
    for name in files:
        path = Path(data_dir) / f"{name}.jsonl"
        if not path.exists():
            continue
        with path.open(encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        if per_file > 0 and len(rows) > per_file:
            rows = rnd.sample(rows, per_file)
        out.extend(rows)
    return out


def gold_map(dialogues: list[dict]) -> dict[str, str]:
    gold: dict[str, str] = {}
    for d in dialogues:
        for s in d.get("spans", []):
            if s["label"] in CORE and s["text"].strip():
                gold[s["text"]] = s["label"]
    return gold


def _pct(xs: list[float], q: float) -> float:
    """Nearest-rank percentile for ``q`` in [0, 1] (NaN for no values)."""
    from plainsight.middleware.evaluation import percentile

    return percentile(xs, q * 100) if xs else float("nan")


# ---------------------------------------------------------------- simulator process


@contextmanager
def simulator_process(latency_s: float, gold: dict[str, str]) -> Iterator[str]:
    """Start ``python -m benchmarks.llm_simulator`` in a subprocess; yields its base_url."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump(gold, fh)
        gold_path = fh.name
    proc = subprocess.Popen(
        [sys.executable, "-m", "plainsight.benchmarks.llm_simulator", "--latency", str(latency_s), "--gold", gold_path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError("simulator did not start")
        yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        os.unlink(gold_path)


# ---------------------------------------------------------------- benchmarks


def _settings(base_url: str, **llm: Any):
    from plainsight.middleware.config import load_settings

    cfg = {"base_url": base_url, "enabled": True, "latency_budget_ms": 5000, "async_budget_ms": 30000, "max_concurrency": 256,
           "requests_per_minute": 1_000_000, "tokens_per_minute": 1_000_000_000}
    cfg.update(llm)
    return load_settings(llm=cfg, metrics={"enabled": False})


async def throughput(
    base_url: str,
    dialogues: list[dict],
    detector,
    *,
    policy: str,
    mode: str = "marking",
    sessions: int = 200,
    turns_per_session: int = 10,
    gate: str = "all",
    verifier: str = "off",
) -> dict[str, Any]:
    from plainsight.surrogate.pipeline import build_pipeline as Pipeline
    from plainsight.middleware.schemas import InputTurn

    settings = _settings(base_url, policy=policy, mode=mode, gate=gate, verifier=verifier)
    p = Pipeline(settings, detector=detector)
    lat: list[float] = []
    refined_lat: list[float] = []
    pending: list[asyncio.Future] = []
    degraded = 0
    n = 0

    async def session(k: int) -> None:
        nonlocal degraded, n
        # every session sends exactly turns_per_session turns: dialogues k, k+sessions, ... back to back
        turns: list[dict] = []
        j = k
        while len(turns) < turns_per_session:
            turns += [t for t in dialogues[j % len(dialogues)]["turns"] if t["text"].strip()]
            j += sessions
        for i, t in enumerate(turns[:turns_per_session]):
            turn = InputTurn(session_id=f"bench-{k}", turn_id=i, role=t["speaker"][:64] or "student", text=t["text"], sent_at=time.time())
            t0 = time.perf_counter()
            r = await p.process(turn)
            lat.append(time.perf_counter() - t0)
            n += 1
            degraded += r.degraded
            if r.refined is not None:
                def _done(f, t0=t0):
                    refined_lat.append(time.perf_counter() - t0)
                r.refined.add_done_callback(_done)
                pending.append(r.refined)

    # warm the connection pool and the model import before timing
    await p.llm.client.complete("marking", [{"role": "user", "content": "<current_turn>\nwarm up\n</current_turn>"}], max_tokens=8)
    p.llm.stats.requests.clear()
    p.llm.stats.prompt_tokens.clear()
    p.llm.stats.completion_tokens.clear()
    t0 = time.perf_counter()
    await asyncio.gather(*(session(k) for k in range(sessions)))
    t_deid = time.perf_counter() - t0
    refined_degraded = 0
    if pending:
        outs = await asyncio.gather(*pending)
        refined_degraded = sum(o.degraded for o in outs)
    t_all = time.perf_counter() - t0
    st = p.llm.stats
    await p.aclose()
    res: dict[str, Any] = {
        "policy": policy,
        "gate": gate,
        "mode": mode,
        "sessions": sessions,
        "turns": n,
        "seconds": round(t_all, 3),
        "turns_per_s": round(n / t_all, 1),
        "p50_ms": round(_pct(lat, 0.5) * 1e3, 1),
        "p99_ms": round(_pct(lat, 0.99) * 1e3, 1),
        "degraded": degraded,
        "requests": sum(st.requests.values()),
        "sent": st.sent_total,
    }
    if policy == "async-refine":
        res["deid_turns_per_s"] = round(n / t_deid, 1)
        res["refined_p50_ms"] = round(_pct(refined_lat, 0.5) * 1e3, 1)
        res["refined_p99_ms"] = round(_pct(refined_lat, 0.99) * 1e3, 1)
        res["refined_degraded"] = refined_degraded
    return res


def gate_share(dialogues: list[dict], detector, settings=None, trust_keep: bool = False) -> dict[str, Any]:
    """Share of turns the gate (``uncertain``) sends to the model, per source and overall, with
    the reasons, and ``missed``: turns holding gold core PII that the fast pass did not fully
    cover *and* the gate kept from the model (the model could have helped there but was not asked).
    """
    from plainsight.middleware.config import LLMSettings, Settings
    from plainsight.middleware.detection.base import TurnContext, resolve_overlaps
    from plainsight.middleware.llm.stage import LLMStage

    s = settings or Settings()
    llm = LLMSettings(base_url="http://127.0.0.1:9/v1", gate="uncertain")
    stage = LLMStage(llm, s.detection.labels)
    labels = frozenset(s.detection.labels)
    per: dict[str, dict[str, int]] = {}
    reasons: dict[str, int] = {}
    for d in dialogues:
        mem = detector.new_memory()
        src = d.get("source", "?")
        gold_by_turn: dict[int, list[tuple[int, int]]] = {}
        for g in d.get("spans", []):
            if g["label"] in CORE:
                gold_by_turn.setdefault(g["turn"], []).append((g["start"], g["end"]))
        for i, t in enumerate(d["turns"]):
            ctx = TurnContext(role=t["speaker"], session_id=d["id"], turn_index=i, metadata=dict(d.get("meta") or {}))
            spans = resolve_overlaps([x for x in detector.detect(t["text"], ctx, mem) if x.label in labels])
            cands_fn = getattr(detector, "candidates", None)
            cands = list(cands_fn(t["text"], ctx, mem)) if callable(cands_fn) else []
            kept_fn = getattr(detector, "kept", None)
            keeps = list(kept_fn(t["text"], ctx, mem)) if callable(kept_fn) else []
            reason = stage.gate(t["text"], spans, cands, getattr(mem, "is_kept", None) if trust_keep else None, keeps)
            c = per.setdefault(src, {"turns": 0, "sent": 0, "with_pii": 0, "missed": 0})
            c["turns"] += 1
            c["sent"] += reason is not None
            if reason:
                reasons[reason] = reasons.get(reason, 0) + 1
            gold = gold_by_turn.get(i, [])
            if gold:
                c["with_pii"] += 1
                covered = all(any(x.start <= gs and ge <= x.end for x in spans) for gs, ge in gold)
                if not covered and reason is None:
                    c["missed"] += 1
    out: dict[str, Any] = {}
    tot = {"turns": 0, "sent": 0, "with_pii": 0, "missed": 0}
    for k, v in sorted(per.items()):
        out[k] = dict(v, share=round(v["sent"] / v["turns"], 3) if v["turns"] else 0.0)
        for f in tot:
            tot[f] += v[f]
    out["all"] = dict(tot, share=round(tot["sent"] / tot["turns"], 3) if tot["turns"] else 0.0, reasons=reasons)
    return out


async def tokens_per_turn(base_url: str, dialogues: list[dict], detector, max_turns: int = 300) -> dict[str, Any]:
    """Tokens per sent turn, marking vs JSON, same turns, sequential sessions (context included)."""
    from plainsight.surrogate.pipeline import build_pipeline as Pipeline
    from plainsight.middleware.schemas import InputTurn

    out: dict[str, Any] = {}
    for mode in ("marking", "json"):
        p = Pipeline(_settings(base_url, mode=mode, gate="all", verifier="off", context_turns=4), detector=detector)
        n = 0
        for k, d in enumerate(dialogues):
            for i, t in enumerate(d["turns"]):
                if n >= max_turns:
                    break
                if not t["text"].strip():
                    continue
                await p.process(InputTurn(session_id=f"tok-{k}", turn_id=i, role=t["speaker"][:64] or "student", text=t["text"], sent_at=time.time()))
                n += 1
        st = p.llm.stats
        pt, ct = st.prompt_tokens[mode], st.completion_tokens[mode]
        sent = max(1, st.sent_total)
        out[mode] = {
            "turns": sent,
            "prompt_per_turn": round(pt / sent, 1),
            "completion_per_turn": round(ct / sent, 1),
            "usd_per_1k_turns": round(st.cost_usd(mode) / sent * 1000, 4),
            "degraded": st.degraded_total,
        }
        await p.aclose()
    return out


def default_detector():
    from plainsight.middleware.config import Settings
    from plainsight.middleware.pipeline import build_detector

    return build_detector(Settings())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.llm", description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--turns", type=int, default=10, help="turns per session")
    ap.add_argument("--latency", type=float, default=0.4, help="simulated model latency, seconds")
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--per-file", type=int, default=60, help="dialogues sampled per dev file (0 = all)")
    ap.add_argument("--gate-per-file", type=int, default=0, help="dialogues per file for the gate share (0 = all)")
    ap.add_argument("--token-turns", type=int, default=300)
    ap.add_argument("--gate", default="all", choices=["all", "uncertain"], help="gate for the throughput runs")
    ap.add_argument("--skip", nargs="*", default=[], choices=["throughput", "gate", "tokens"])
    args = ap.parse_args(argv)

    det = default_detector()
    dialogues = load_dialogues(args.data, args.per_file)
    if not dialogues:
        print(f"no dev data under {args.data}", file=sys.stderr)
        return 2
    random.Random(3).shuffle(dialogues)
    report: dict[str, Any] = {"latency_s": args.latency}
    with simulator_process(args.latency, gold_map(dialogues)) as url:
        if "throughput" not in args.skip:
            report["throughput"] = [
                asyncio.run(throughput(url, dialogues, det, policy=pol, sessions=args.sessions, turns_per_session=args.turns, gate=args.gate))
                for pol in ("wait", "async-refine")
            ]
        if "tokens" not in args.skip:
            report["tokens"] = asyncio.run(tokens_per_turn(url, dialogues, det, args.token_turns))
    if "gate" not in args.skip:
        gate_dialogues = load_dialogues(args.data, args.gate_per_file)
        report["gate"] = gate_share(gate_dialogues, det)
        report["gate_trust_keep"] = gate_share(gate_dialogues, det, trust_keep=True)["all"]
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
