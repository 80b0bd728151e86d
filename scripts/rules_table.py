#!/usr/bin/env python
"""Do the name finder's rules earn their place? Per dev source: how many spans each rule decides
(NAME spans by their evidence, keeps by theirs) and how many of those are right; and, with
``--loso DIR`` (models kept by ``loso_names.py --models-dir DIR``), what switching one rule off
does to each source scored with the model that never saw it (false names per 100 turns, recall).

    python scripts/rules_table.py                               # decisions per rule, shipped model
    python scripts/rules_table.py --loso loso/ --off story      # one rule off, LOSO models
    python scripts/rules_table.py --loso loso/ --off all        # every switchable rule in turn
    python scripts/rules_table.py --retrain --off all           # each rule off, the reviewer retrained without it

``--retrain`` answers "does the learned reviewer now cover this rule?": the reviewer is trained again
with the rule switched off (``train_name_model.py --rule-off RULE``, same seeds and bags), and every
source is scored with the rule off and that model. Compare with the shipped model's row (no
``--off``): a rule whose switching off costs no name and adds no false name beyond the noise of
retraining (four bags: about ±3 names and ±17 false names over all the files) is covered.

Prints metrics only, never dialogue text. The table is in ``docs/names.md`` ("Rules earn their place").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from name_data import read  # noqa: E402

SOURCES = ("ncte", "mathdial", "ncte_uptake", "bridge", "presidio_synth", "gum", "topicalchat", "topicalchat_rare", "wnut17", "btc")


def run_source(cascade, dialogues: list[dict], keeps: Counter | None = None, keep_hits: Counter | None = None):
    """Run the cascade over ``dialogues`` turn by turn (as ``plainsight eval``); DialogueResults with
    each prediction's evidence. ``keeps``/``keep_hits``: count the keeps by evidence, and those
    that overlap a gold NAME (a name the keep let through)."""
    from plainsight.middleware.detection.base import TurnContext
    from plainsight.middleware.evaluation import DialogueResult, Ent, gold_ents

    out = []
    for d in dialogues:
        memory = cascade.new_memory()
        meta = d.get("meta") or {}
        r = DialogueResult(str(d.get("id")), meta, gold_ents(d), [], source=str(d.get("source") or ""))
        gold_names = [g for g in r.gold if g.label == "NAME"]
        for i, turn in enumerate(d["turns"]):
            r.turns += 1
            text = turn.get("text") or ""
            if not text.strip():
                r.empty_turns += 1
                continue
            ctx = TurnContext(role=str(turn.get("speaker") or "student"), session_id=str(d.get("id")), turn_index=i,
                              metadata=dict(meta))
            r.pred.extend(Ent(i, s.start, s.end, s.label, "", s.evidence) for s in cascade.detect(text, ctx, memory))
            if keeps is not None:
                for sp in cascade.kept(text, ctx, memory):
                    keeps[sp.evidence] += 1
                    if keep_hits is not None and any(g.turn == i and g.start < sp.end and sp.start < g.end for g in gold_names):
                        keep_hits[sp.evidence] += 1
        out.append(r)
    return out


#: Rules that can be switched off for the ablation (each a monkeypatch of names.py).
def _switch(rule: str) -> None:
    from plainsight.middleware.detection import names

    F = names.NameFinder
    if rule == "public-keep":
        F._public = lambda self, turn, k, memory: False
    elif rule == "story":
        names.story_character = lambda *a, **k: False
    elif rule == "example":
        F._example = lambda self, turn, k, memory, cue: False
    elif rule == "sent-init-threshold":
        names._SENT_INIT_WORD_THRESHOLD = 0.0
    elif rule == "life-narrative":
        F._life_narrative = staticmethod(lambda turn, k, memory, cls: False)
    elif rule == "join-public":
        F._join_public_neighbours = staticmethod(lambda turn, memory: None)
    elif rule == "curricular-head":
        names.is_curricular_head = lambda w: False
    elif rule == "word-position":
        names._word_position = lambda lows, k, gap: False
    elif rule == "a-word":
        F._a_word = lambda self, t, cls: False
    elif rule == "idioms":
        names.IDIOMS = frozenset()
    else:
        raise SystemExit(f"unknown rule {rule}")


RULES = ("public-keep", "story", "example", "sent-init-threshold", "life-narrative", "join-public", "curricular-head",
         "word-position", "a-word", "idioms")


def figures(res) -> dict:
    from plainsight.middleware.evaluation import is_typed, name_summary, typed_summary

    n = name_summary(res)
    row = {"recall": n["recall"], "tp": n["tp"], "fp": n["fp"], "false_per_100": n["name_fp_per_100_turns"]}
    if is_typed(res):
        row["false_per_100"] = typed_summary(res)["false_names_per_100_turns"]
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="*", default=list(SOURCES))
    ap.add_argument("--loso", type=Path, default=None, help="directory of loso_<source>.json.gz models")
    ap.add_argument("--off", default="", help="a rule to switch off (" + ", ".join(RULES) + "), or 'all'")
    ap.add_argument("--retrain", action="store_true", help="with --off: retrain the reviewer without the rule first")
    args = ap.parse_args()

    from plainsight.middleware.detection.cascade import Cascade
    from plainsight.middleware.detection.namemodel import NameModel
    from plainsight.middleware.evaluation import is_typed, match_spans, typed_kinds

    if args.off == "all":  # each rule in its own process (the switches are monkeypatches)
        import subprocess

        for rule in RULES:
            cmd = [sys.executable, __file__, *args.sources, "--off", rule] + (["--loso", str(args.loso)] if args.loso else [])
            subprocess.run(cmd + (["--retrain"] if args.retrain else []), check=True)
        return 0
    retrained = None
    if args.off and args.retrain:
        import subprocess
        import tempfile

        retrained = Path(tempfile.mkdtemp()) / f"rule_off_{args.off}.json.gz"
        subprocess.run([sys.executable, str(HERE / "train_name_model.py"), "--rule-off", args.off, "--out", str(retrained)],
                       check=True, stdout=subprocess.DEVNULL)
    if args.off:
        _switch(args.off)
    for src in args.sources:
        cascade = Cascade(use_ner=False)
        if retrained is not None:
            cascade.names.model = NameModel.load(retrained)
        elif args.loso:
            cascade.names.model = NameModel.load(args.loso / f"loso_{src}.json.gz")
        keeps: Counter = Counter()
        hits: Counter = Counter()
        res = run_source(cascade, read(src), keeps, hits)
        row = {"source": src, "off": args.off or None,
               "model": "retrained without the rule" if retrained else "loso" if args.loso else "shipped", **figures(res)}
        if not args.off:
            dec: dict[str, Counter] = defaultdict(Counter)
            typed = is_typed(res)
            for r in res:
                m = match_spans(r.gold, r.pred, ("NAME",))
                wrong = {p.pos for p in m.fp_spans}
                for p in r.pred:
                    if p.label != "NAME":
                        continue
                    kind = next(iter(typed_kinds(r.gold, [p]))) if typed else "name"
                    if kind == "name" or kind == "word" and not typed:
                        dec[p.evidence or "-"]["wrong" if p.pos in wrong else "right"] += 1
                    else:  # a typed entity: a person is neutral, a place / org / product / no entity is wrong
                        dec[p.evidence or "-"]["neutral" if kind == "neutral" else "wrong"] += 1
            row["decides"] = {ev: dict(c) for ev, c in sorted(dec.items())}
            row["keeps"] = {ev: {"spans": n, "on_gold_name": hits[ev]} for ev, n in sorted(keeps.items())}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
