"""Reliability of the fast pass's NAME decisions: predicted score bucket → observed precision.

Runs the fast pass (``Pipeline.process_sync``, turn by turn, one session per dialogue, exactly as
the worker) over the dev files, on one split of the dialogues (``scripts/name_data.py``:
``tune`` / ``check`` / ``final``; ``final`` is held out), and matches every NAME span it masks
against the gold (exact span match, as ``plainsight eval``). Prints markdown tables:

1. raw ``Span.score`` bucket → spans, observed precision;
2. calibrated score (``evidence.CALIBRATED``: the precision of the span's evidence on the tune
   split) bucket → observed precision;
3. per evidence and evidence class (certain / doubtful): spans, precision; for keeps, the share
   that is really no personal name (keep correctness).

``--split tune --calibration`` prints the ``CALIBRATED`` dict to paste into evidence.py.

    python scripts/reliability_table.py --split final
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FILES = ("ncte", "mathdial", "ncte_uptake", "bridge", "presidio_synth", "topicalchat")
RAW_BUCKETS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0001)
CAL_BUCKETS = (0.0, 0.5, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0001)


def _bucket(x: float, edges) -> str:
    for a, b in zip(edges, edges[1:]):
        if a <= x < b:
            return f"[{a:.2f}, {min(b, 1.0):.2f}{']' if b > 1 else ')'}"
    return "?"


def collect(files, split: str):
    from plainsight.middleware.config import load_settings
    from plainsight.middleware.evaluation import _dialogue_turns
    from plainsight.surrogate.pipeline import build_pipeline
    import name_data

    p = build_pipeline(load_settings(metrics={"enabled": False}))
    kept = getattr(p.detector, "kept", None)
    rows = []  # (file, score, evidence, is_tp)
    keeps = []  # (file, evidence, is_gold_name)
    for f in files:
        for i, d in enumerate(name_data.read(f, split)):
            gold = {(g["turn"], g["start"], g["end"]) for g in d.get("spans") or [] if g["label"] == "NAME"}
            gold_tok = defaultdict(list)
            for g in d.get("spans") or []:
                if g["label"] == "NAME":
                    gold_tok[g["turn"]].append((g["start"], g["end"]))
            sid = f"{f}-{d.get('_idx', i)}"
            d = dict(d, id=sid)
            for ti, it, text in _dialogue_turns(d, i, 0.0):
                if it is None:
                    continue
                r = p.process_sync(it)
                for s in r.spans:
                    if s.label == "NAME":
                        rows.append((f, s.score, s.evidence, (ti, s.start, s.end) in gold))
                if callable(kept):
                    state = p.sessions.get(sid)
                    for k in kept(text, None, state.detect_memory):
                        hit = any(a < k.end and k.start < b for a, b in gold_tok[ti])
                        keeps.append((f, k.evidence, hit))
            p.sessions.drop(sid)
    return rows, keeps


def table(title: str, groups: dict[str, list[bool]], mean: dict[str, float] | None = None) -> str:
    lines = [f"| {title} | spans | correct | observed precision |" + (" mean predicted |" if mean else ""),
             "|---|---|---|---|" + ("---|" if mean else "")]
    for k in sorted(groups):
        v = groups[k]
        line = f"| {k} | {len(v)} | {sum(v)} | {sum(v) / len(v):.3f} |"
        if mean:
            line += f" {mean[k]:.3f} |"
        lines.append(line)
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="final", help="tune, check, final, or e.g. tune+check (default final: held out)")
    ap.add_argument("--files", default=",".join(FILES))
    ap.add_argument("--calibration", action="store_true", help="print precision per evidence as a dict (from this split)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    from plainsight.middleware.detection.evidence import CALIBRATED, classify

    rows, keeps = collect(a.files.split(","), a.split)
    by_ev: dict[str, list[bool]] = defaultdict(list)
    for f, score, ev, tp in rows:
        by_ev[ev or "-"].append(tp)
    if a.calibration:
        print(json.dumps({k: round(sum(v) / len(v), 2) for k, v in sorted(by_ev.items()) if len(v) >= 20}, indent=1))
        return 0
    raw: dict[str, list[bool]] = defaultdict(list)
    cal: dict[str, list[bool]] = defaultdict(list)
    cal_mean: dict[str, list[float]] = defaultdict(list)
    cls: dict[str, list[bool]] = defaultdict(list)
    from plainsight.middleware.detection.base import Span

    for f, score, ev, tp in rows:
        raw[_bucket(score, RAW_BUCKETS)].append(tp)
        c = CALIBRATED.get(ev, score)
        cal[_bucket(c, CAL_BUCKETS)].append(tp)
        cal_mean[_bucket(c, CAL_BUCKETS)].append(c)
        cls[classify(Span(0, 1, "NAME", "names", score, ev))].append(tp)
    keep_ok: dict[str, list[bool]] = defaultdict(list)
    for f, ev, hit in keeps:
        keep_ok[ev].append(not hit)
    if a.json:
        print(json.dumps({"raw": {k: [len(v), sum(v)] for k, v in raw.items()},
                          "calibrated": {k: [len(v), sum(v)] for k, v in cal.items()},
                          "evidence": {k: [len(v), sum(v)] for k, v in by_ev.items()},
                          "class": {k: [len(v), sum(v)] for k, v in cls.items()},
                          "keeps": {k: [len(v), sum(v)] for k, v in keep_ok.items()}}))
        return 0
    print(f"split: {a.split}; files: {a.files}; NAME spans the fast pass masks: {len(rows)}\n")
    print(table("raw score", raw) + "\n")
    print(table("calibrated score", cal, {k: sum(v) / len(v) for k, v in cal_mean.items()}) + "\n")
    print(table("evidence", by_ev) + "\n")
    print(table("class", cls) + "\n")
    if keep_ok:
        print(table("keep evidence (correct = no gold name)", keep_ok))
    return 0


if __name__ == "__main__":
    sys.exit(main())
