#!/usr/bin/env python
"""Quick NAME scorer for the cascade (until/besides `plainsight eval`).

Runs the Cascade dialogue by dialogue, turn by turn in order (never looking ahead), with a fresh
session memory per dialogue, and prints span-level exact-match P/R/F1/F5 per label (NAME first)
and ms/turn. Prints metrics only, never dialogue text.

    python scripts/quick_score.py ../shared/data/dev/mathdial.jsonl [--split test] [--no-ner]

``--split`` selects a deterministic part of the dialogues (hash of the id): ``tune`` (1/2) is what
the rules were developed on, ``check`` (1/4) was inspected for errors too, ``final`` (1/4) was never
inspected and is the held-out report (``test`` = check+final).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def split_of(dialogue_id: str) -> str:
    h = int(hashlib.sha1(dialogue_id.encode()).hexdigest()[:8], 16)
    if h % 2 == 0:
        return "tune"
    return "check" if h % 4 == 1 else "final"


def fbeta(p: float, r: float, beta: float) -> float:
    b2 = beta * beta
    return (1 + b2) * p * r / (b2 * p + r) if (p + r) > 0 else 0.0


def score(path: Path, split: str | None, use_ner: bool, limit: int | None, labels: tuple[str, ...]) -> dict:
    from middleware.detection.base import TurnContext
    from middleware.detection.cascade import Cascade

    cascade = Cascade(use_ner=use_ner)
    tp, fp, fn = Counter(), Counter(), Counter()
    n_turns = 0
    elapsed = 0.0
    n_dialogues = 0
    with path.open() as fh:
        for line in fh:
            d = json.loads(line)
            if split and split_of(d["id"]) not in split.split("+"):
                continue
            n_dialogues += 1
            if limit and n_dialogues > limit:
                break
            memory = cascade.new_memory()
            gold = {(s["turn"], s["start"], s["end"], s["label"]) for s in d["spans"] if s["label"] in labels}
            pred = set()
            meta = d.get("meta") or {}
            for i, turn in enumerate(d["turns"]):
                ctx = TurnContext(role=turn["speaker"], session_id=d["id"], turn_index=i, metadata=dict(meta))
                t0 = time.perf_counter()
                spans = cascade.detect(turn["text"], ctx, memory)
                elapsed += time.perf_counter() - t0
                n_turns += 1
                pred |= {(i, s.start, s.end, s.label) for s in spans if s.label in labels}
            for lab in labels:
                g = {x for x in gold if x[3] == lab}
                p = {x for x in pred if x[3] == lab}
                tp[lab] += len(g & p)
                fp[lab] += len(p - g)
                fn[lab] += len(g - p)
    out = {"file": path.name, "split": split or "all", "dialogues": min(n_dialogues, limit or n_dialogues),
           "turns": n_turns, "ms_per_turn": round(1000 * elapsed / max(1, n_turns), 3),
           "ner_turn_share": round(cascade.stats["ner_turns"] / max(1, cascade.stats["turns"]), 3)}
    for lab in labels:
        p = tp[lab] / (tp[lab] + fp[lab]) if tp[lab] + fp[lab] else 0.0
        r = tp[lab] / (tp[lab] + fn[lab]) if tp[lab] + fn[lab] else 0.0
        out[lab] = {"tp": tp[lab], "fp": fp[lab], "fn": fn[lab], "P": round(p, 4), "R": round(r, 4),
                    "F1": round(fbeta(p, r, 1), 4), "F5": round(fbeta(p, r, 5), 4)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--split", default=None, help="tune | check | final | test (= check+final), or a+b")
    ap.add_argument("--no-ner", action="store_true")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--labels", default="NAME")
    args = ap.parse_args()
    labels = tuple(args.labels.split(","))
    if args.split == "test":
        args.split = "check+final"
    for f in args.files:
        print(json.dumps(score(f, args.split, not args.no_ner, args.limit, labels)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
