#!/usr/bin/env python
"""Build ``surrogate/data/name_origin.json.gz``: the origin group and gender of a given name and of a
surname, read from names-dataset's per-country ranks, plus surrogate pools per origin group, and the
name families (nicknames and diminutives) of the ``nicknames`` package.

    python scripts/build_name_origin_tables.py            # writes surrogate/data/name_origin.json.gz
    python scripts/build_name_origin_tables.py --check    # rebuild in memory, fail if the file differs

Needs the ``build-tables`` extra (names-dataset 3.3.1: ~15 s and 1.9 GB to load, so never at run time;
nicknames 1.0.1; the everyday-word flags of the shipped ``names.json.gz``).

* ``groups``: the origin groups (``ORIGIN_GROUPS`` below: countries of names-dataset grouped by the
  naming tradition they share, finer than the five UN regions: Hispanic, Lusophone, East Asian, ...).
* ``names[folded]``: a 4-character code: the given-name group letter and gender (``F``/``M``/``N``)
  or ``--`` when the token does not rank as a given name, then the surname group letter or ``-``,
  then ``f`` when its best rank as a given name is at least as good as its best rank as a surname, else ``l``.
  A name's group is the group of the country where it ranks best (ties: the larger share of
  bearers); only names ranked within the top ``CLASSIFY_RANK`` of some country are kept.
* ``pools[group]``: ``F``/``M``/``N`` given names and ``L`` surnames whose best group is that group,
  interleaved rank by rank over the group's countries; ASCII letters only, no everyday English words.
* ``nick``: name families (canonical -> nicknames) from the ``nicknames`` package (Carlton Northern's
  hand-curated names.csv, MIT / Apache-2.0), folded.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from build_surrogate_tables import best_rank, female_share, fold, interleave, share_and_best_rank  # noqa: E402
from table_output import encode  # noqa: E402

#: origin group -> names-dataset countries (ISO 3166 alpha-2). Every country of names-dataset is in one.
ORIGIN_GROUPS: dict[str, str] = {
    "Anglo": "US GB CA IE JM",
    "Hispanic": "ES MX AR BO CL CO CR EC GT HN PA PE PR SV UY",
    "Lusophone": "BR PT AO",
    "French": "FR BE LU CH HT",
    "Germanic": "DE AT NL",
    "Nordic": "SE NO DK FI IS",
    "Southern European": "IT GR MT CY AL",
    "Eastern European": "RU PL CZ HU BG RS HR SI LT EE MD GE",
    "Turkic-Persian": "TR AZ IR AF KZ TM",
    "Arabic": "AE BH DZ EG IQ JO KW LB LY MA OM PS QA SA SD SY TN YE DJ",
    "Israeli": "IL",
    "South Asian": "IN BD MV",
    "East Asian": "CN HK MO TW JP KR",
    "Southeast Asian": "ID MY PH SG KH BN",
    "Sub-Saharan African": "NG GH CM ET ZA BW NA BF BI MU",
    "Pacific": "FJ",
}
GROUPS = list(ORIGIN_GROUPS)
COUNTRY_GROUP = {cc: g for g, ccs in ORIGIN_GROUPS.items() for cc in ccs.split()}
CLASSIFY_RANK = 1000
POOL_SKIP = frozenset({"KR"})
GEN_RANK = 400
POOL = 300
LAST_POOL = 400
OUT = HERE.parent / "surrogate" / "data" / "name_origin.json.gz"


def best_group(info: dict | None) -> tuple[str | None, int | None]:
    """The group of the country where the name ranks best (ties: larger share of bearers)."""
    if not info:
        return None, None
    share, best = share_and_best_rank(info, COUNTRY_GROUP)
    if not best:
        return None, None
    # a group holding a tenth of the bearers outranks a group where the name is rare among many
    # (Patel ranks high in Britain too, but most of its bearers are Indian)
    held = [x for x in best if share.get(x, 0.0) >= 0.1] or list(best)
    g = min(sorted(held), key=lambda x: (best[x], -share.get(x, 0.0)))
    return g, best[g]


def group_share(info: dict, group: str) -> float:
    return sum(float(s or 0) for cc, s in (info.get("country") or {}).items() if COUNTRY_GROUP.get(cc) == group)


def gender_code(g: dict | None) -> str:
    fs = female_share(g or {})
    if fs is None:
        return "N"
    return "F" if fs >= 0.75 else "M" if fs <= 0.25 else "N"


def pool_name(name: str, min_len: int = 3) -> bool:
    return (min_len <= len(name) <= 12 and name.isascii() and name.isalpha() and name[0].isupper()
            and name[1:].islower() and any(v in name.casefold() for v in "aeiouy"))


def build(nd) -> dict:
    ft: dict = nd.first_names
    lt: dict = nd.last_names
    # everyday English words: flagged in the shipped names.json.gz (built with english-words / wordfreq)
    from plainsight.surrogate.names import load_tables
    from plainsight.surrogate.text import common_words

    shipped, common = load_tables(), common_words()

    def wordlike(n: str) -> bool:
        info = shipped.classify(n)
        return fold(n) in common or (info is not None and info.wordlike)

    letter = {g: chr(ord("a") + i) for i, g in enumerate(GROUPS)}

    names: dict[str, list[str]] = {}
    rank_of: dict[str, tuple[int, int]] = {}
    for table, role in ((ft, "f"), (lt, "l")):
        for name, info in table.items():
            g, r = best_group(info)
            if g is None or r > CLASSIFY_RANK or not name.isalpha():
                continue
            key = fold(name)
            code = names.setdefault(key, ["-", "-", "-"])
            ranks = rank_of.setdefault(key, (1 << 30, 1 << 30))
            if role == "f":
                if r < ranks[0]:  # two spellings folding to one key (José / Jose): the better ranked
                    code[0], code[1] = letter[g], gender_code(info.get("gender"))
                    rank_of[key] = (r, ranks[1])
            elif r < ranks[1]:
                code[2] = letter[g]
                rank_of[key] = (ranks[0], r)

    def first_like(n: str) -> bool:
        fr, lr = best_rank(ft.get(n)), best_rank(lt.get(n))
        return fr is not None and (lr is None or fr < lr)

    def last_like(n: str) -> bool:
        fr, lr = best_rank(ft.get(n)), best_rank(lt.get(n))
        return lr is not None and (fr is None or lr < fr)

    per_first: dict[str, list[tuple[int, str]]] = defaultdict(list)
    per_last: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for table, per in ((ft, per_first), (lt, per_last)):
        for name, info in table.items():
            for cc, rank in (info.get("rank") or {}).items():
                if rank is not None and rank <= GEN_RANK and cc in COUNTRY_GROUP:
                    per[cc].append((int(rank), name))
    for per in (per_first, per_last):
        for cc in per:
            per[cc].sort()

    pools: dict[str, dict[str, list[str]]] = {}
    for g in GROUPS:
        # Korea's lists in names-dataset hold given names among the surnames and the reverse (the
        # Latin-script profiles write both orders): not drawn from
        ccs = sorted(cc for cc in ORIGIN_GROUPS[g].split() if cc not in POOL_SKIP)
        out: dict[str, list[str]] = {}
        short_ok = 2 if g in ("East Asian", "Southeast Asian") else 3
        for gen in ("F", "M", "N"):
            lists = []
            for cc in ccs:
                lst = []
                for _, n in per_first.get(cc, []):
                    fs = female_share(ft[n].get("gender") or {})
                    if fs is None:
                        continue
                    if gen == "F" and fs < 0.9 or gen == "M" and fs > 0.1 or gen == "N" and not 0.25 <= fs <= 0.75:
                        continue
                    if (pool_name(n, short_ok) and best_group(ft[n])[0] == g and group_share(ft[n], g) >= 0.4 and first_like(n)
                            and not wordlike(n)):
                        lst.append(n)
                lists.append(lst)
            out[gen] = interleave(lists, POOL, _any)
        lists = [[n for _, n in per_last.get(cc, [])
                  if pool_name(n, 2) and best_group(lt[n])[0] == g and group_share(lt[n], g) >= 0.4 and last_like(n) and not wordlike(n)] for cc in ccs]
        out["L"] = interleave(lists, LAST_POOL, _any)
        pools[g] = out

    from nicknames import NickNamer, __version__ as nick_version  # noqa: F401

    nick: dict[str, list[str]] = {}
    for canon, nicks in sorted(NickNamer().nickname_lookup.items()):
        got = sorted({fold(x) for x in nicks} - {fold(canon)})
        if got:
            nick[fold(canon)] = got
    return {
        "version": 1,
        "source": "names-dataset 3.3.1 (per-country ranks of given names and surnames); nicknames "
                  f"{nick_version} (names.csv, Carlton Northern)",
        "groups": GROUPS,
        "country_group": dict(sorted(COUNTRY_GROUP.items())),
        "names": {k: "".join(v) + ("f" if rank_of[k][0] <= rank_of[k][1] else "l") for k, v in sorted(names.items())},
        "pools": pools,
        "nick": nick,
    }


def _any(name: str) -> bool:
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--check", action="store_true", help="rebuild and compare with --out instead of writing")
    args = p.parse_args(argv)
    from names_dataset import NameDataset  # heavy: ~15 s, 1.9 GB

    data = encode(build(NameDataset()))
    out = Path(args.out)
    digest = hashlib.sha256(data).hexdigest()
    if args.check:
        same = out.exists() and out.read_bytes() == data
        print(f"{out}: {'up to date' if same else 'DIFFERS'} (sha256 {digest})")
        return 0 if same else 1
    out.write_bytes(data)
    print(f"wrote {out} ({len(data)} bytes, sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
