"""`plainsight recognizers`: the fast pass a configuration builds, recognizer by recognizer.

Lists every recognizer in run order (built-ins, then those of ``detection.recognizers`` and
``detection.presidio_recognizers``, name finding last) with its kind and labels, and the labels
configuration adds (with the surrogate each gets). ``--try TEXT`` runs the fast pass on one turn
and prints what was found (offsets, label, source, score, evidence) and the de-identified turn —
never the values themselves.
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", metavar="FILE", help="YAML configuration file (see configs/default.yaml)")
    p.add_argument("--try", dest="try_text", metavar="TEXT", help="run the fast pass on this turn and show what it finds")
    p.add_argument("--role", default="student", help="speaker role for --try (default: student)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _kind(rec, builtins: frozenset[str]) -> str:
    from ..detection.configured import DenyListRecognizer, PatternRecognizer
    from ..detection.name_recognizer import NameRecognizer
    from ..detection.presidio_in import PresidioRecognizer

    if isinstance(rec, NameRecognizer):
        return "names"
    if rec.name in builtins:
        return "built-in"
    if isinstance(rec, PatternRecognizer):
        return "pattern"
    if isinstance(rec, DenyListRecognizer):
        return "deny-list"
    if isinstance(rec, PresidioRecognizer):
        return "presidio"
    return "plug-in"


def run(args: argparse.Namespace) -> int:
    import json

    from ..config import load_settings
    from ..detection.cascade import Cascade
    from ..detection.registry import builtin_names
    from plainsight.surrogate.pipeline import build_pipeline

    settings = load_settings(args.config)
    cascade = Cascade.from_settings(settings)
    reg = cascade.registry
    builtins = frozenset(builtin_names())
    rows = [{"name": r.name, "kind": _kind(r, builtins), "labels": list(r.labels)} for r in cascade.fast_pass]
    added = []
    for lab in reg.added_labels:
        info = reg.label_info(lab)
        added.append({"label": lab, "surrogate": info.surrogate if info else "shape",
                      "description": info.description if info else ""})
    out: dict = {"recognizers": rows, "added_labels": added}
    if args.try_text is not None:
        from ..schemas import InputTurn

        pipe = build_pipeline(settings, detector=cascade)
        res = pipe.process_sync(InputTurn(session_id="plainsight-recognizers", turn_id=0, role=args.role,
                                          text=args.try_text, sent_at=0.0))
        out["found"] = [{"start": s.start, "end": s.end, "label": s.label, "source": s.source,
                         "score": round(s.score, 3), "evidence": s.evidence} for s in res.spans]
        out["deidentified"] = res.deid.text
    if args.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    width = max(len(r["name"]) for r in rows)
    print(f"fast pass ({len(rows)} recognizers, in run order):")
    for i, r in enumerate(rows, 1):
        print(f"  {i:2d}. {r['name']:<{width}}  {r['kind']:<9}  {', '.join(r['labels'])}")
    if added:
        print("labels added by configuration:")
        for a in added:
            print(f"  {a['label']}: surrogate {a['surrogate']} — {a['description']}")
    if "found" in out:
        print("found:" if out["found"] else "found: nothing")
        for f in out["found"]:
            ev = f" ({f['evidence']})" if f["evidence"] else ""
            print(f"  {f['start']}-{f['end']}  {f['label']:<10} {f['source']}  score {f['score']}{ev}")
        print(f"de-identified: {out['deidentified']}")
    return 0
