#!/usr/bin/env python
"""Build ``surrogate/data/pinyin.json.gz``: the toneless pinyin of every Han character of the Chinese
name lists of ``surrogate/data/origins.json.gz``, from pypinyin, so that "王伟" and "Wang Wei" in one
session are linked as one person and "Wang Wei" gets the romanisation of 王伟's surrogate
(``surrogate/families.py``). pypinyin is only needed here (the ``build-tables`` extra).

    python scripts/build_pinyin_tables.py            # writes surrogate/data/pinyin.json.gz
    python scripts/build_pinyin_tables.py --check    # rebuild in memory, fail if the file differs
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

from table_output import encode, write_or_check  # scripts/table_output.py (scripts run from this folder)

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "surrogate" / "data" / "pinyin.json.gz"


def build() -> bytes:
    import pypinyin
    from pypinyin import Style, lazy_pinyin

    with gzip.open(ROOT / "surrogate" / "data" / "origins.json.gz", "rt", encoding="utf-8") as f:
        groups = json.load(f)["groups"]
    chars: set[str] = set()
    surnames: set[str] = set()
    for kind in ("F", "M", "N", "L"):
        for n in groups["Chinese"][kind]:
            chars.update(c for c in n if "\u3400" <= c <= "\u9fff")
            if kind == "L":
                surnames.add(n)
    table = {c: lazy_pinyin(c, style=Style.NORMAL)[0] for c in sorted(chars)}
    data = {"version": 1, "source": f"pypinyin {pypinyin.__version__}", "pinyin": table,
            "surnames": sorted(surnames)}
    return encode(data)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    return write_or_check(OUT, build(), args.check)


if __name__ == "__main__":
    sys.exit(main())
