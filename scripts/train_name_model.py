#!/usr/bin/env python
"""Train the learned name reviewer shipped in ``middleware/data/name_model.json.gz``.

Reproducible (fixed seeds; ~2 minutes with two cores for the four bags), trained on the *tune* split only:

    python scripts/train_name_model.py                 # extract, train, write the model
    python scripts/train_name_model.py --no-write      # train and report only

1. Data: the tune split of the dev files (``name_data.split_of``), each dialogue as it is plus
   ``--copies`` copies whose gold names are re-filled with other surrogate names from the lexicon
   (``name_data.refill``; a person typed in lowercase with probability ``--lower``), so the model
   learns contexts and lexicon evidence, not the files' names.
2. Candidates: the cascade is run turn by turn exactly as at inference (``NameFinder.find`` with a
   trace); every token the rules leave to the model is recorded with its features; its label is
   whether it lies inside a gold NAME span. Two rounds: features are extracted with the rules-only
   memory first, then again with the first model in place (the session memory then evolves as it
   will at inference), and the final model is trained on the second extraction.
3. Model: L2-regularised logistic regression (numpy, AdaGrad), features seen at least
   ``--min-count`` times; ``--bags`` (4) such models, each on its own re-fill (seeds seed, seed+1,
   ...), averaged into one (the same as averaging their logits: one model changed by a single
   re-fill's luck moved ±100 false names over the dev files, four averaged move ±17).
   The decision threshold is a fixed parameter (``--threshold`` 0.15); the rounds' extraction runs
   at ``--round-threshold`` 0.135, so the session memory of the second round holds a few more of
   the reviewer's names (trained at 0.15 throughout, the bagged model finds 3 names fewer on
   presidio_synth, below what the finder found before issue #21). The *final* split is never read here.

Prints only counts and scores, never dialogue text.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from name_data import NamePool, mark_characters, read, refill  # noqa: E402

FILES = ("ncte", "mathdial", "ncte_uptake", "bridge", "presidio_synth", "topicalchat", "topicalchat_rare", "wnut17", "btc")
#: Dev files scored but not trained on by default. gum (ordinary English of ten kinds) was tried
#: (``--files`` with gum, ``--prose-weight`` 0.25-1.0): +24 to +31 of its 730 names, but +129 to
#: +221 false names on the other files (topicalchat 0.9 -> 1.2 per 100 turns), so it stays a file
#: the reviewer never saw: the check of how the finder carries over to prose.
SCORED_ONLY = ("gum",)
#: Typed files (every named entity typed, no private person): a candidate on a PERSON / HANDLE span
#: is neutral (a person, public or not) and is left out of training; every other one is a negative.
TYPED = ("wnut17", "btc")
NEUTRAL = ("PERSON", "HANDLE", "ANIMAL")


def extract(cascade, dialogues: list[dict]) -> tuple[list[list[str]], list[int], list[str]]:
    """Features and labels of every model candidate, running the cascade turn by turn."""
    from plainsight.middleware.detection.base import TurnContext
    from plainsight.middleware.detection.name_recognizer import CONTAINER_LABELS as CONTAINERS

    X: list[list[str]] = []
    y: list[int] = []
    src: list[str] = []
    names = cascade.names
    for d in dialogues:
        memory = cascade.new_memory()
        meta = d.get("meta") or {}
        gold: dict[int, list[tuple[int, int]]] = {}
        neutral: dict[int, list[tuple[int, int]]] = {}
        for s in d.get("spans") or []:
            if s["label"] == "NAME":
                gold.setdefault(int(s["turn"]), []).append((int(s["start"]), int(s["end"])))
            elif s["label"] in NEUTRAL:
                neutral.setdefault(int(s["turn"]), []).append((int(s["start"]), int(s["end"])))
        for i, turn in enumerate(d["turns"]):
            text = turn.get("text") or ""
            if not text.strip():
                continue
            ctx = TurnContext(role=str(turn.get("speaker") or "student"), session_id=str(d.get("id")), turn_index=i,
                              metadata=dict(meta))
            ner = None
            if cascade.use_ner and cascade._nlp is not None:
                windows = cascade._ner_windows(text)
                if windows:
                    ner = cascade._ner_persons(text, windows)
            blocked = [(s.start, s.end) for r in cascade.recognizers for s in r.analyze(text, ctx) if s.label in CONTAINERS]
            trace: list = []
            names.find(text, ctx, memory, ner, trace=trace, blocked=blocked)
            memory.turns += 1
            g = gold.get(i, ())
            nt = neutral.get(i, ())
            for a, b, feats in trace:
                if any(na < b and a < nb for na, nb in nt):
                    continue  # a person of a typed file: neither a private name nor an error
                X.append(feats)
                y.append(int(any(ga <= a and b <= gb for ga, gb in g)))
                src.append(d.get("source") or "")
    return X, y, src


#: Features naming a neighbouring word: kept only when seen in at least two source corpora, so
#: that the templates of one file (synthetic sentences, one classroom's habits) carry no weight.
LEXICAL = ("p1=", "n1=", "p2p1=", "n1n2=", "cp1=", "cn1=", "vq=", "gkp1=")


def select_features(X: list[list[str]], src: list[str], min_count: int, min_sources: int) -> list[str]:
    counts: Counter = Counter()
    sources: dict[str, set] = {}
    for feats, s in zip(X, src):
        for f in set(feats):
            counts[f] += 1
            if f.startswith(LEXICAL):
                sources.setdefault(f, set()).add(s)
    return sorted(f for f, c in counts.items() if c >= min_count and len(sources.get(f, ())) >= (min_sources if f.startswith(LEXICAL) else 0))


def train(X: list[list[str]], y: list[int], features: list[str], l2: float, epochs: int, seed: int,
          weights: list[float] | None = None, lexical_l2: float = 1.0) -> tuple[dict[str, float], float]:
    vocab = {f: i for i, f in enumerate(features)}
    l2v = np.array([l2 * (lexical_l2 if f.startswith(LEXICAL) else 1.0) for f in features])
    rows = [[vocab[f] for f in set(feats) if f in vocab] for feats in X]
    n, m = len(rows), len(vocab)
    indptr = np.zeros(n + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    indices = np.fromiter((j for r in rows for j in r), dtype=np.int64, count=int(indptr[-1]))
    yv = np.asarray(y, dtype=np.float64)
    sw = np.asarray(weights if weights is not None else [1.0] * n, dtype=np.float64)
    w = np.zeros(m)
    b = 0.0
    gw2 = np.full(m, 1e-8)
    gb2 = 1e-8
    lr = 0.2
    rng = np.random.default_rng(seed)
    batch = 256
    for ep in range(epochs):
        order = rng.permutation(n)
        loss = 0.0
        for s in range(0, n, batch):
            idx = order[s : s + batch]
            starts, ends = indptr[idx], indptr[idx + 1]
            lens = ends - starts
            flat = np.concatenate([indices[a:e] for a, e in zip(starts, ends)]) if len(idx) else np.zeros(0, np.int64)
            row_of = np.repeat(np.arange(len(idx)), lens)
            z = b + np.bincount(row_of, weights=w[flat], minlength=len(idx))
            p = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
            yy, ww = yv[idx], sw[idx]
            loss += float(-(ww * (yy * np.log(p + 1e-12) + (1 - yy) * np.log(1 - p + 1e-12))).sum())
            g = (p - yy) * ww
            gw = np.bincount(flat, weights=g[row_of], minlength=m)
            touched = np.unique(flat)
            gw[touched] += l2v[touched] * w[touched] * len(idx)
            gw2 += gw * gw
            w -= lr * gw / np.sqrt(gw2)
            gbb = float(g.sum())
            gb2 += gbb * gbb
            b -= lr * gbb / np.sqrt(gb2)
        print(f"  epoch {ep + 1}: loss/example {loss / n:.4f}", flush=True)
    inv = {i: f for f, i in vocab.items()}
    weights_out = {inv[i]: float(w[i]) for i in range(m) if abs(w[i]) >= 1e-3}
    return weights_out, float(b)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", default=",".join(FILES))
    ap.add_argument("--exclude", default="", help="leave these sources out (leave-one-source-out evaluation: scripts/loso_names.py)")
    ap.add_argument("--copies", type=int, default=3, help="name-refilled copies of each tune dialogue")
    ap.add_argument("--char-copies", type=int, default=3, help="copies of word-problem dialogues without their problem text")
    ap.add_argument("--lower", type=float, default=0.1, help="probability that a refilled person is typed in lowercase")
    ap.add_argument("--min-count", type=int, default=3)
    ap.add_argument("--min-sources", type=int, default=2, help="neighbouring-word features: seen in this many files")
    ap.add_argument("--synth-weight", type=float, default=0.5, help="weight of presidio_synth candidates (synthetic prose)")
    ap.add_argument("--prose-weight", type=float, default=1.0, help="weight of gum candidates (ordinary English of ten kinds)")
    ap.add_argument("--chat-weight", type=float, default=1.0, help="weight of bridge and mathdial candidates (1:1 chat tutoring)")
    ap.add_argument("--clean-weight", type=float, default=1.5,
                    help="weight of candidates from chat that names no private person (topicalchat: every one is a false positive)")
    ap.add_argument("--typed-weight", type=float, default=4.0,
                    help="weight of candidates from the typed files (wnut17, btc: social-media text, no private person)")
    ap.add_argument("--pos-weight", type=float, default=3.0, help="weight of candidates inside a gold name (recall first)")
    ap.add_argument("--lexical-l2", type=float, default=5.0, help="L2 multiplier for neighbouring-word features")
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--threshold", type=float, default=0.15, help="the shipped model's decision threshold")
    ap.add_argument("--round-threshold", type=float, default=0.135,
                    help="the threshold of the model that runs the next round's extraction (its names enter the session memory)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--bags", type=int, default=4, help="models trained on differently re-filled copies (seeds seed, seed+1, ...), averaged")
    ap.add_argument("--jobs", type=int, default=2, help="bags trained in parallel")
    ap.add_argument("--ner", action="store_true", help="train with the spaCy NER feature (off: the shipped cascade runs no NER)")
    ap.add_argument("--rule-off", default="", help="train with one of the finder's rules switched off (scripts/rules_table.py --retrain)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from plainsight.middleware.detection.namemodel import MODEL_PATH, NameModel

    if args.rule_off:
        from rules_table import _switch

        _switch(args.rule_off)  # before the bags fork: each inherits the switch
    t0 = time.time()
    seeds = [args.seed + b for b in range(args.bags)]
    if args.bags > 1 and args.jobs > 1:
        import multiprocessing as mp

        with mp.get_context("fork").Pool(min(args.jobs, args.bags)) as workers:
            models = workers.starmap(fit, [(args, s) for s in seeds])
    else:
        models = [fit(args, s) for s in seeds]
    model = average(models, args.threshold)
    model.meta.update({"seed": args.seed, "bags": args.bags})
    print(f"{args.bags} bag(s), {len(model.weights)} features in {time.time() - t0:.0f}s", flush=True)
    out = args.out or MODEL_PATH
    if not args.no_write:
        model.save(out)
        print(f"wrote {out} ({out.stat().st_size / 1e3:.0f} kB) in {time.time() - t0:.0f}s")
    return 0


def fit(args, seed: int):
    """One model: the training data re-filled with ``seed``, the rounds of extraction and training."""
    from plainsight.middleware.detection.cascade import Cascade
    from plainsight.middleware.detection.namemodel import NameModel

    t0 = time.time()
    random.seed(seed)
    pool = NamePool(seed)
    data: list[dict] = []
    files = [f for f in args.files.split(",") if f and f not in set(args.exclude.split(","))]
    clean: set[str] = set()
    for f in files:
        ds = read(f, "tune")
        data.extend(ds)
        if not any(s.get("label") == "NAME" for d in ds for s in d.get("spans") or []):
            clean.add(f)
            continue  # no private person named (topicalchat): nothing to re-fill, the dialogues once
        for _ in range(args.copies):
            data.extend(refill(d, pool, args.lower) for d in ds)
        # word-problem dialogues again without their problem text: the characters' names (re-filled)
        # are then talked about in the turns with nothing but context to tell them from people
        with_problem = [d for d in ds if any(k in (d.get("meta") or {}) for k in ("question", "problem", "story"))]
        for _ in range(args.char_copies if with_problem else 0):
            data.extend(refill(mark_characters(d), pool, args.lower) for d in with_problem)
    print(f"{len(data)} training dialogues ({args.copies} refilled copies) in {time.time() - t0:.0f}s", flush=True)

    cascade = Cascade(use_ner=args.ner, use_model=False)
    model: NameModel | None = None
    for rnd in range(args.rounds):
        cascade.names.model = model if model is not None else _RulesAsModel()  # round 1: rules decide
        X, y, src = extract(cascade, data)
        pos = sum(y)
        print(f"round {rnd + 1}: {len(y)} candidates, {pos} in gold names ({time.time() - t0:.0f}s)", flush=True)
        by_src = Counter(src)
        wts = [args.synth_weight if s == "presidio_synth" else args.prose_weight if s == "gum" else args.chat_weight if s in ("bridge", "mathdial")
               else args.typed_weight if s in TYPED else args.clean_weight if s in clean else 1.0 for s in src]
        wts = [w * (args.pos_weight if lab else 1.0) for w, lab in zip(wts, y)]
        feats = select_features(X, src, args.min_count, args.min_sources)
        weights, bias = train(X, y, feats, args.l2, args.epochs, seed, wts, args.lexical_l2)
        model = NameModel(weights, bias, args.round_threshold,
                          {"trained_on": "tune split of " + ",".join(files), "copies": args.copies, "char_copies": args.char_copies, "lower": args.lower,
                           "l2": args.l2, "epochs": args.epochs, "min_count": args.min_count, "min_sources": args.min_sources,
                           "synth_weight": args.synth_weight, "prose_weight": args.prose_weight, "chat_weight": args.chat_weight, "clean_weight": args.clean_weight, "typed_weight": args.typed_weight, "pos_weight": args.pos_weight, "lexical_l2": args.lexical_l2,
                           "seed": seed, "round_threshold": args.round_threshold,
                           "ner": args.ner, "rounds": args.rounds, "candidates": len(y), "positives": pos})
        p = np.array([model.prob(x) for x in X])
        yy = np.array(y)
        pred = p >= args.round_threshold
        tp, fp, fn = int((pred & (yy == 1)).sum()), int((pred & (yy == 0)).sum()), int((~pred & (yy == 1)).sum())
        print(f"  train candidates: tp {tp} fp {fp} fn {fn}; features {len(weights)}; by source {dict(by_src)}", flush=True)
    return model


def average(models: list, threshold: float):
    """The mean of the bags' weights and biases: for a linear model, the same as averaging their
    logits (bagging; it damps the variance of one re-fill and one pass order)."""
    from plainsight.middleware.detection.namemodel import NameModel

    n = len(models)
    feats = sorted({f for m in models for f in m.weights})
    weights = {f: sum(m.weights.get(f, 0.0) for m in models) / n for f in feats}
    weights = {f: w for f, w in weights.items() if abs(w) >= 1e-3}
    bias = sum(m.bias for m in models) / n
    return NameModel(weights, bias, threshold, dict(models[0].meta))


class _RulesAsModel:
    """Round 1 stand-in: the rules' own decision (score > 0 and not kept) as a 0/1 'probability',
    so the session memory evolves as with the rules alone while candidates are recorded."""

    threshold = 0.5

    def threshold_for(self, cls: str) -> float:
        return self.threshold

    def prob(self, feats: list[str]) -> float:
        rs = next((f for f in feats if f.startswith("rs=")), "rs=0.00")
        return 1.0 if float(rs[3:]) > 0 and "kept=0" in feats else 0.0


if __name__ == "__main__":
    raise SystemExit(main())
