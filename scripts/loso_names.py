#!/usr/bin/env python
"""Leave-one-source-out (LOSO) evaluation of the name reviewer: does it generalise to a source it
was never trained on?

For each dev source S (ncte, mathdial, ncte_uptake, bridge, presidio_synth, topicalchat,
topicalchat_rare, wnut17, btc; and gum, which no model trains on, so its row is the shipped
training set scored on a file it never saw): train the
reviewer exactly as the shipped one (``train_name_model.py``, same seed and parameters) on the
*tune* split of every other source, then score the *whole* file of S with that model (the cascade
run turn by turn, as ``plainsight eval`` runs it; matching ``middleware.evaluation.match_spans``).
Prints one JSON line per source: NAME precision, recall, F5, false positives, false names per 100
turns; for the typed files (wnut17, btc) also type errors, word errors and neutral names per 100
turns (``middleware.evaluation.typed_summary``). Prints metrics only, never dialogue text. ~2
minutes per source with two cores.

    python scripts/loso_names.py                        # all ten sources
    python scripts/loso_names.py --models-dir loso/     # keep each left-out model (rules_table.py --loso)
    python scripts/loso_names.py topicalchat ncte       # some
    python scripts/loso_names.py --json-out loso.json   # also write the results
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from name_data import read  # noqa: E402
from train_name_model import FILES, SCORED_ONLY  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sources", nargs="*", default=list(FILES) + list(SCORED_ONLY))
    ap.add_argument("--json-out", type=Path, default=None)
    ap.add_argument("--models-dir", type=Path, default=None, help="keep the models here (loso_<source>.json.gz)")
    ap.add_argument("--train-args", default="", help="extra arguments for train_name_model.py")
    args = ap.parse_args()

    from plainsight.middleware.detection.cascade import Cascade
    from plainsight.middleware.detection.namemodel import NameModel
    from plainsight.middleware.evaluation import is_typed, name_summary, typed_summary
    from rules_table import run_source

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for src in args.sources:
            out = (args.models_dir or Path(tmp)) / f"loso_{src}.json.gz"
            out.parent.mkdir(parents=True, exist_ok=True)
            cmd = [sys.executable, str(HERE / "train_name_model.py"), "--exclude", src, "--out", str(out)]
            cmd += args.train_args.split()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            cascade = Cascade(use_ner=False)
            cascade.names.model = NameModel.load(out)
            res = run_source(cascade, read(src))
            n = name_summary(res)
            row = {"left_out": src, "trained_on": [f for f in FILES if f != src], "dialogues": n["dialogues"],
                   "turns": n["turns"], "precision": n["precision"], "recall": n["recall"], "f5": n.get("f5"),
                   "tp": n["tp"], "fp": n["fp"], "fn": n["fn"],
                   "false_names_per_100_turns": round(100.0 * n["fp"] / max(1, n["turns"]), 2)}
            if is_typed(res):
                t = typed_summary(res)
                row["typed"] = {k: t[k] for k in ("type_errors_per_100_turns", "word_errors_per_100_turns",
                                                  "false_names_per_100_turns", "neutral_per_100_turns")}
            results.append(row)
            print(json.dumps(row), flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
