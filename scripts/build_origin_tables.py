#!/usr/bin/env python
"""Build ``surrogate/data/origins.json.gz``: per language / country group, the first names (by
gender) and last names of Faker's person lists (see ``surrogate/origin.py`` for the groups and how
they are used), plus the English lists (a name there says nothing about origin).

    python scripts/build_origin_tables.py            # writes surrogate/data/origins.json.gz
    python scripts/build_origin_tables.py --check    # rebuild in memory, fail if the file differs

Shipping the lists (instead of reading Faker at run time) keeps the surrogates of a name the
same when Faker's lists change, and loads in ~0.1 s instead of importing 60 Faker modules.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plainsight.surrogate.origin import ENGLISH_LOCALES, GROUPS  # noqa: E402

from table_output import encode, write_or_check  # scripts/table_output.py (scripts run from this folder)

OUT = Path(__file__).resolve().parents[1] / "surrogate" / "data" / "origins.json.gz"


def _names(provider, attr: str) -> list[str]:
    v = getattr(provider, attr, None)
    if not v or isinstance(v, str) or not hasattr(v, "__iter__"):
        return []
    out = []
    for x in v:
        if isinstance(x, tuple):  # ja_JP pairs: (kanji, kana, romaji)
            x = x[0]
        if isinstance(x, str) and x.strip() and " " not in x.strip() and len(x.strip()) >= 1:
            out.append(x.strip())
    return out


def _dedup(xs: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for x in xs:
        if x.casefold() not in seen:
            seen.add(x.casefold())
            out.append(x)
    return out


def _provider(locale: str):
    try:
        return importlib.import_module(f"faker.providers.person.{locale}").Provider
    except (ImportError, AttributeError):
        return None


def build() -> bytes:
    import faker

    english: set[str] = set()
    for loc in ENGLISH_LOCALES:
        p = _provider(loc)
        if p is not None:
            for a in ("first_names", "first_names_female", "first_names_male", "last_names"):
                english.update(n for n in _names(p, a))
    groups: dict[str, dict[str, list[str]]] = {}
    for group, locales in GROUPS.items():
        f: list[str] = []
        m: list[str] = []
        n: list[str] = []
        last: list[str] = []
        for loc in locales:
            p = _provider(loc)
            if p is None:
                continue
            f += _names(p, "first_names_female")
            m += _names(p, "first_names_male")
            n += _names(p, "first_names_unisex") + _names(p, "first_names")
            last += _names(p, "last_names") + _names(p, "last_names_female") + _names(p, "last_names_male")
        f, m, last = _dedup(f), _dedup(m), _dedup(last)
        fm = {x.casefold() for x in f} | {x.casefold() for x in m}
        n = _dedup([x for x in n if x.casefold() not in fm])
        groups[group] = {"F": f, "M": m, "N": n, "L": last}
    data = {"version": 1, "faker": faker.VERSION, "english": sorted(english, key=lambda s: (s.casefold(), s)), "groups": groups}
    return encode(data)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if the shipped file differs from a rebuild")
    args = ap.parse_args()
    return write_or_check(OUT, build(), args.check)


if __name__ == "__main__":
    raise SystemExit(main())
