#!/usr/bin/env python
"""Quick scorer for the cascade on a split of the dev files (besides `plainsight eval`).

Runs the Cascade dialogue by dialogue, turn by turn in order (never looking ahead), with a fresh
session memory per dialogue, and prints span-level exact-match P/R/F1/F5 per label (matching as
`plainsight eval`: ``middleware.evaluation.match_spans``), ms/turn (mean, p99) and the share of
turns that reached spaCy. Prints metrics only, never dialogue text.

    python scripts/quick_score.py mathdial ncte_uptake --split check
    python scripts/quick_score.py ncte_uptake --split check --refill 3   # names never seen

``--split`` selects a deterministic part of the dialogues (hash of the id): ``tune`` (1/2: the
rules were developed on it and the name model is trained on it), ``check`` (1/4: inspected, used to
choose the model's features and threshold), ``final`` (1/4: never inspected, the held-out report);
``test`` = check+final. ``--refill N`` scores N copies of each dialogue whose gold names were
re-filled with other surrogate names from the lexicon (``--lower P``: a person typed in lowercase
with probability P), a check that the figures do not depend on the files' own names.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from name_data import NamePool, read, refill, split_of  # noqa: E402

__all__ = ["split_of", "score"]

FILES = ("ncte", "mathdial", "ncte_uptake", "bridge", "presidio_synth")


def score(cascade, dialogues: list[dict], labels: tuple[str, ...]) -> dict:
    from plainsight.middleware.detection.base import TurnContext
    from plainsight.middleware.evaluation import Counts, Ent, gold_ents, match_spans, percentile

    counts = {lab: Counts() for lab in labels}
    ms: list[float] = []
    turns0, ner0 = cascade.stats["turns"], cascade.stats["ner_turns"]
    for d in dialogues:
        memory = cascade.new_memory()
        meta = d.get("meta") or {}
        pred = []
        for i, turn in enumerate(d["turns"]):
            text = turn.get("text") or ""
            if not text.strip():
                continue
            ctx = TurnContext(role=str(turn.get("speaker") or "student"), session_id=str(d.get("id")), turn_index=i,
                              metadata=dict(meta))
            t0 = time.perf_counter()
            spans = cascade.detect(text, ctx, memory)
            ms.append((time.perf_counter() - t0) * 1e3)
            pred.extend(Ent(i, s.start, s.end, s.label) for s in spans)
        m = match_spans(gold_ents(d), pred, labels)
        for lab, c in m.per_label.items():
            counts[lab].add(c)
    n_turns = cascade.stats["turns"] - turns0
    out = {"dialogues": len(dialogues), "turns": len(ms),
           "ms_per_turn": round(sum(ms) / max(1, len(ms)), 3), "ms_p99": round(percentile(ms, 99), 2),
           "ner_turn_share": round((cascade.stats["ner_turns"] - ner0) / max(1, n_turns), 3)}
    for lab in labels:
        s = counts[lab].scores()
        out[lab] = {k: (round(v, 4) if isinstance(v, float) else v) for k, v in s.items()}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", default=list(FILES), help="dev files (names or paths); default: all five")
    ap.add_argument("--split", default=None, help="tune | check | final | test (= check+final), or a+b")
    ap.add_argument("--no-ner", action="store_true", help="never run spaCy NER")
    ap.add_argument("--ner", action="store_true", help="always run spaCy NER (default: only without a name model)")
    ap.add_argument("--no-model", action="store_true", help="rules only (no learned name model)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--labels", default="NAME")
    ap.add_argument("--refill", type=int, default=0, metavar="N", help="score N name-refilled copies instead")
    ap.add_argument("--lower", type=float, default=0.0, metavar="P", help="with --refill: lowercase a person with prob. P")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--model", type=Path, default=None, help="name model weights to use instead of the shipped ones")
    ap.add_argument("--threshold", type=float, default=None, help="override the model's decision threshold")
    args = ap.parse_args()
    from plainsight.middleware.detection.cascade import Cascade

    labels = tuple(args.labels.split(","))
    split = "check+final" if args.split == "test" else args.split
    cascade = Cascade(use_ner=False if args.no_ner else True if args.ner else None, use_model=not args.no_model)
    if args.model is not None and not args.no_model:
        from plainsight.middleware.detection.namemodel import NameModel

        cascade.names.model = NameModel.load(args.model)
    if args.threshold is not None and cascade.names.model is not None:
        cascade.names.model.threshold = args.threshold
    pool = NamePool(args.seed) if args.refill else None
    for f in args.files:
        ds = read(f, split)[: args.limit]
        if pool is not None:
            ds = [refill(d, pool, args.lower) for _ in range(args.refill) for d in ds]
        res = score(cascade, ds, labels)
        print(json.dumps({"file": Path(f).stem, "split": split or "all", "refill": args.refill, **res}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
