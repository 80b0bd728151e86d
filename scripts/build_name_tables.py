#!/usr/bin/env python
"""Build the compact name/word lexicon shipped in ``middleware/data/name_lexicon.tsv.gz``.

Sources (build time only, never loaded at runtime):

* ``names-dataset`` (pip ``names-dataset==3.3.1``): first and last names with their popularity
  rank in each of 105 countries. We keep, per token, the best (smallest) rank over all countries,
  separately as a first name and as a last name, for names ranked within ``--max-rank`` somewhere.
* ``spacy-lookups-data`` (pip ``spacy-lookups-data``): ``en_lexeme_prob``, *case-sensitive* unigram
  log-probabilities of English web text. ``logp(word) - logp(Word)`` tells an ordinary word
  ("will", "good") from a name ("maria", "rogelio"), which a case-folded frequency list cannot.

Output: gzip TSV, one row per case-folded token:
``token  first_rank  last_rank  logp_lower  logp_title`` (empty field = unknown). Ranks are capped at
``--max-rank``; log-probs are rounded to one decimal and kept only above ``--min-logp``.

Reproduce:  pip install -e '.[build-tables]' && python scripts/build_name_tables.py
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "middleware" / "data" / "name_lexicon.tsv.gz"
_TOKEN = re.compile(r"^[^\W\d_](?:[^\W\d_]|['\u2019-](?=[^\W\d_]))*$")


def _best_rank(entry: dict) -> int | None:
    ranks = [r for r in (entry.get("rank") or {}).values() if r]
    return min(ranks) if ranks else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-rank", type=int, default=2500, help="keep names ranked within this in some country")
    ap.add_argument("--min-logp", type=float, default=-16.5, help="keep English word log-probs above this")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()

    t0 = time.time()
    from names_dataset import NameDataset  # heavy: ~14 s, ~2 GB

    nd = NameDataset()
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for src, dst in ((nd.first_names, first), (nd.last_names, last)):
        for name, entry in src.items():
            r = _best_rank(entry)
            if r is None or r > args.max_rank or not _TOKEN.match(name) or len(name) < 2:
                continue
            key = name.casefold()
            if key not in dst or r < dst[key]:
                dst[key] = r
    del nd
    print(f"names-dataset: {len(first)} first, {len(last)} last names (rank <= {args.max_rank}) in {time.time() - t0:.0f}s")

    import spacy_lookups_data

    probs_path = Path(spacy_lookups_data.__file__).parent / "data" / "en_lexeme_prob.json.gz"
    probs: dict[str, float] = json.loads(gzip.open(probs_path).read())
    lower: dict[str, float] = {}
    title: dict[str, float] = {}
    for tok, lp in probs.items():
        if lp < args.min_logp or not _TOKEN.match(tok):
            continue
        if tok.islower():
            lower[tok] = lp
        elif tok[:1].isupper() and (len(tok) == 1 or tok[1:].islower()):
            title[tok.casefold()] = lp
    print(f"lexeme probs: {len(lower)} lowercase, {len(title)} title-case forms")

    keys = sorted(set(first) | set(last) | set(lower) | set(title))

    def fmt(v: float | None) -> str:
        return "" if v is None else f"{v:.1f}"

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as fh:
        fh.write(f"#plainsight name lexicon v1\tmax_rank={args.max_rank}\tmin_logp={args.min_logp}\n")
        for k in keys:
            fr, lr = first.get(k), last.get(k)
            fh.write(f"{k}\t{fr or ''}\t{lr or ''}\t{fmt(lower.get(k))}\t{fmt(title.get(k))}\n")
    print(f"wrote {len(keys)} rows to {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
