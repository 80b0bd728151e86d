#!/usr/bin/env python
"""Build the compact name tables shipped in ``surrogate/data/`` from names-dataset.

Run from the repository root (needs the ``build-tables`` extra: ``pip install names-dataset==3.3.1``)::

    python scripts/build_surrogate_tables.py            # writes surrogate/data/names.json.gz
    python scripts/build_surrogate_tables.py --check    # rebuild in memory, fail if the file differs

names-dataset (1.9 GB once loaded, ~15 s) is only used here, never at runtime. The output is
reproducible: same names-dataset version → byte-identical file (sorted keys, gzip mtime 0).

Regions are the five UN M49 regions (Africa, Americas, Asia, Europe, Oceania), the grouping the
project's dev data uses. names-dataset covers 105 countries; their region is listed in
``COUNTRY_REGION`` below (Oceania is represented by Fiji alone: names-dataset has no AU/NZ).

What the file holds (see ``surrogate/names.py`` for the reader):

* ``first[region][gender]`` – names to *generate* surrogate first names from, gender ``F``/``M``
  (clearly gendered, >= 90 %) and ``N`` (unisex, 25–75 %). Built by interleaving the
  per-country top lists of the region's countries rank by rank, so every country is represented.
* ``last[region]`` – surrogate last names, built the same way from the per-country last-name lists.
* ``classify`` – for *classifying* an original name token: ``{folded name: code}`` where code is
  gender (``F``/``M``/``N``/``-`` for not a first name) + region index (position in ``regions``) +
  kind (``f`` more common as a first name, ``l`` as a last name) + a flag: ``w`` when the name is
  also an everyday English word (see :class:`WordCheck`), else ``t`` when it ranks within the top
  ``TOP_RANK`` of some country, else ``x``. Covers names ranked within the
  top ``CLASSIFY_RANK`` of some country. The region is the one holding the largest share of the
  name's bearers according to names-dataset.

Generation pools keep ASCII alphabetic names of 3–12 letters only (like the TSCC surrogate method,
which filtered non-English characters), and drop names flagged ``w`` (so a tutor reply saying
"you may try" is never mistaken for a surrogate "May" when re-identifying).

Build dependencies (the ``build-tables`` extra): names-dataset 3.3.1, english-words 2.0.2,
wordfreq 3.1.1, pycountry, spaCy and Faker (stop words / common words).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import unicodedata
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from table_output import encode  # noqa: E402  (scripts/table_output.py)

REGIONS = ["Africa", "Americas", "Asia", "Europe", "Oceania"]

COUNTRY_REGION = {
    # Africa
    **dict.fromkeys(
        "AO BF BI BW CM DJ DZ EG ET GH LY MA MU NA NG SD TN ZA".split(), "Africa"
    ),
    # Americas
    **dict.fromkeys(
        "AR BO BR CA CL CO CR EC GT HN HT JM MX PA PE PR SV US UY".split(), "Americas"
    ),
    # Asia (M49 counts Western Asia, incl. Cyprus, Georgia, Azerbaijan and Turkey, as Asia)
    **dict.fromkeys(
        "AE AF AZ BD BH BN CN CY GE HK ID IL IN IQ IR JO JP KH KR KW KZ LB MO MV MY OM PH PS QA SA "
        "SG SY TM TR TW YE".split(),
        "Asia",
    ),
    # Europe
    **dict.fromkeys(
        "AL AT BE BG CH CZ DE DK EE ES FI FR GB GR HR HU IE IS IT LT LU MD MT NL NO PL PT RS RU SE "
        "SI".split(),
        "Europe",
    ),
    # Oceania
    "FJ": "Oceania",
}

#: Per-country depth read when generating pools, and target pool sizes.
GEN_RANK = 150
FIRST_POOL = 300
UNISEX_POOL = 120
LAST_POOL = 400
#: A name is classified when it ranks within this depth in some country.
CLASSIFY_RANK = 1000
#: Names within this rank somewhere are flagged "top" (trusted when spotted inside a username).
TOP_RANK = 200

#: Names that are also everyday English words (checked in addition to the stop words and Faker's
#: English word list). Kept out of the generation pools.
WORDLIKE = set(
    """
    will may mark grace hope joy faith rose june april august summer dawn sunny amber page bill pat
    sue rich hunter chase dean miles guy ray art gay ken sky river rain storm autumn winter spring
    star angel baby king prince princess queen lord major royal justice honor honour story
    brook brooke cliff glen dale rock stone wood woods forest field fields hill hills lane
    bob rob bud buck carol carl chip crystal daisy destiny diamond dusty easter eve gene
    ginger goldie harmony heather holly iris ivy jack jade jasmine jewel lily lucky
    marina melody mercy misty olive opal pearl penny pepper poppy robin ruby sage sandy
    scarlet shell sterling sugar sunshine tiffany violet will willow wing young
    london paris china india georgia virginia carolina dakota austin houston jordan
    israel kenya chad cuba peru fiji madrid lima brunei nesvarbu afghan khmer cambodia libya oman
    malta bsc mca tlm est med rams kech oran mosta confiesate clasificados familia ministerio
    hacienda unique lovely christ bless gift wildfire twinks strivers athome doublew humbly sparkie
    black white brown green gray grey long short little small strong rivers banks bell bush
    cook cross ford fox hall hart hawk house hunt king knight lamb law love moon morning
    noble pierce porter price read reed rice sharp shore smart snow stark steel street swan
    swift wall ward waters wells west wolf worth
    """.split()
)


def fold(s: str) -> str:
    """Accent-stripped, case-folded key (the runtime reader uses the same function)."""
    nfkd = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in nfkd if not unicodedata.combining(ch)).casefold()


def ascii_name(name: str) -> bool:
    return (
        3 <= len(name) <= 12
        and name.isascii()
        and name.isalpha()
        and name[0].isupper()
        and name[1:].islower()
        and any(v in name.casefold() for v in "aeiouy")
    )


def english_words() -> set[str]:
    words = set(WORDLIKE)
    try:
        from spacy.lang.en.stop_words import STOP_WORDS

        words |= {w.casefold() for w in STOP_WORDS}
    except ImportError:  # pragma: no cover - spaCy is a project dependency
        pass
    try:
        from faker.providers.lorem.en_US import Provider

        words |= {w.casefold() for w in Provider.word_list}
    except ImportError:  # pragma: no cover
        pass
    try:
        import pycountry

        for c in pycountry.countries:
            for attr in ("name", "common_name", "official_name"):
                v = getattr(c, attr, None)
                if v:
                    words |= {w.casefold() for w in v.split()}
    except ImportError:  # pragma: no cover - pycountry comes with names-dataset
        pass
    return words


class WordCheck:
    """Is a name also an everyday English word? ("Joy", "Sunny", "Cool", "Miller" → yes.)

    word = the lower-case form is in Webster's 2nd (web2) while the capitalised form is not, and
    it is common in English text (wordfreq Zipf >= 3.5); or it is in GCIDE and very common
    (Zipf >= 4.5); or it is in the hand list ``WORDLIKE``. Needs ``english-words`` and
    ``wordfreq`` (the ``build-tables`` extra).
    """

    def __init__(self) -> None:
        from english_words import get_english_words_set
        from wordfreq import zipf_frequency

        self._web2 = get_english_words_set(["web2"], lower=False, alpha=True)
        self._gcide = get_english_words_set(["gcide"], lower=False, alpha=True)
        self._zipf = zipf_frequency
        self._words = english_words()

    def __call__(self, name: str) -> bool:
        w = fold(name)
        if w in self._words:
            return True
        if not w.isascii() or not w.isalpha():
            return False
        z = self._zipf(w, "en")
        if w in self._web2 and w.title() not in self._web2 and z >= 3.5:
            return True
        return w in self._gcide and z >= 4.5


def share_and_best_rank(info: dict, group_of: dict[str, str]) -> tuple[dict[str, float], dict[str, int]]:
    """Per group of countries (``group_of``: country code → group): the share of the name's bearers
    living there, and the name's best rank in any of its countries."""
    share: dict[str, float] = defaultdict(float)
    for cc, s in (info.get("country") or {}).items():
        g = group_of.get(cc)
        if g is not None and s is not None:
            share[g] += float(s)
    best: dict[str, int] = {}
    for cc, rank in (info.get("rank") or {}).items():
        g = group_of.get(cc)
        if g is not None and rank is not None:
            best[g] = min(best.get(g, 1 << 30), int(rank))
    return share, best


def region_of(info: dict) -> str | None:
    """The region of the country where the name ranks best; ties go to the larger share of bearers.

    Ranks rather than shares decide because shares are dominated by the countries with the most
    records (a Fijian name's bearers are outnumbered by its few namesakes in Europe), while the
    per-country top lists are what the dev data's names were drawn from.
    """
    share, best = share_and_best_rank(info, COUNTRY_REGION)
    if best:
        return min(sorted(best), key=lambda r: (best[r], -share.get(r, 0.0)))
    if share:
        return max(sorted(share), key=lambda r: share[r])
    return None


def gender_of(g: dict[str, float]) -> str:
    f = float(g.get("F") or 0.0)
    m = float(g.get("M") or 0.0)
    if f + m <= 0:
        return "N"
    pf = f / (f + m)
    if pf >= 0.75:
        return "F"
    if pf <= 0.25:
        return "M"
    return "N"


def female_share(g: dict[str, float]) -> float | None:
    f = float(g.get("F") or 0.0)
    m = float(g.get("M") or 0.0)
    return None if f + m <= 0 else f / (f + m)


def interleave(lists: list[list[str]], limit: int, accept) -> list[str]:
    """Round-robin over per-country ranked lists (rank 1 of each country, then rank 2, …)."""
    out: list[str] = []
    seen: set[str] = set()
    depth = max((len(x) for x in lists), default=0)
    for i in range(depth):
        for lst in lists:
            if i < len(lst):
                name = lst[i]
                key = fold(name)
                if key not in seen and accept(name):
                    seen.add(key)
                    out.append(name)
                    if len(out) >= limit:
                        return out
    return out


def ranked(table: dict, rank_limit: int) -> dict[str, list[tuple[int, str]]]:
    """country → [(rank, name)] sorted by rank, for names ranked within ``rank_limit``."""
    per: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for name, info in table.items():
        for cc, rank in (info.get("rank") or {}).items():
            if rank is not None and rank <= rank_limit and cc in COUNTRY_REGION:
                per[cc].append((int(rank), name))
    for cc in per:
        per[cc].sort()
    return per


def best_rank(info: dict | None) -> int | None:
    if not info:
        return None
    ranks = [r for r in (info.get("rank") or {}).values() if r is not None]
    return min(ranks) if ranks else None


def build(nd) -> dict:
    first_t: dict = nd.first_names
    last_t: dict = nd.last_names
    wordlike = WordCheck()

    # --- classification -------------------------------------------------------------------
    classify: dict[str, str] = {}
    region_idx = {r: str(i) for i, r in enumerate(REGIONS)}
    candidates: set[str] = set()
    for table in (first_t, last_t):
        for name, info in table.items():
            br = best_rank(info)
            if br is not None and br <= CLASSIFY_RANK and name.isalpha():
                candidates.add(name)
    for name in sorted(candidates):
        fi = first_t.get(name)
        li = last_t.get(name)
        fr = best_rank(fi)
        lr = best_rank(li)
        # A token counts as a first name unless it is clearly more popular as a last name
        # (Manuel is #1 last name in Angola but a top-20 first name in five countries).
        is_first = fr is not None and fr <= CLASSIFY_RANK and (lr is None or fr <= 20 or fr <= 2 * lr)
        info = fi if is_first else (li or fi)
        region = region_of(info)
        if region is None:
            continue
        gender = gender_of(fi.get("gender") or {}) if fi and fr is not None and fr <= CLASSIFY_RANK else "-"
        ranks = [r for r in (fr, lr) if r is not None]
        top = "w" if wordlike(name) else "t" if ranks and min(ranks) <= TOP_RANK else "x"
        code = gender + region_idx[region] + ("f" if is_first else "l") + top
        key = fold(name)
        # Two spellings folding to one key (José/Jose): keep the better-ranked one.
        prev = classify.get(key)
        if prev is None or is_first and prev[2] == "l":
            classify[key] = code

    flags = {k: v[3] for k, v in classify.items()}

    def first_like(name: str) -> bool:
        fr, lr = best_rank(first_t.get(name)), best_rank(last_t.get(name))
        return fr is not None and (lr is None or fr < lr)

    def last_like(name: str) -> bool:
        fr, lr = best_rank(first_t.get(name)), best_rank(last_t.get(name))
        return lr is not None and (fr is None or lr < fr)

    # --- generation pools -----------------------------------------------------------------
    per_first = ranked(first_t, GEN_RANK * 4)
    per_last = ranked(last_t, GEN_RANK * 4)
    first_pools: dict[str, dict[str, list[str]]] = {}
    last_pools: dict[str, list[str]] = {}
    for region in REGIONS:
        countries = sorted(cc for cc, r in COUNTRY_REGION.items() if r == region)
        first_pools[region] = {}
        for g in ("F", "M", "N"):
            lists = []
            for cc in countries:
                names = []
                for _, name in per_first.get(cc, []):
                    fs = female_share(first_t[name].get("gender") or {})
                    if fs is None:
                        continue
                    ok = fs >= 0.9 if g == "F" else fs <= 0.1 if g == "M" else 0.25 <= fs <= 0.75 and len(name) >= 4
                    if ok:
                        names.append(name)
                # Unisex names are rarer and noisier: only the country's top ranks qualify.
                lists.append(names[:GEN_RANK] if g != "N" else [n for n in names if first_t[n]["rank"][cc] <= GEN_RANK])

            def accept(name: str) -> bool:
                k = fold(name)
                return ascii_name(name) and flags.get(k) != "w" and first_like(name)

            first_pools[region][g] = interleave(lists, UNISEX_POOL if g == "N" else FIRST_POOL, accept)
        lists = [[n for _, n in per_last.get(cc, [])][:GEN_RANK] for cc in countries]

        def accept_last(name: str) -> bool:
            k = fold(name)
            return ascii_name(name) and flags.get(k) != "w" and last_like(name)

        last_pools[region] = interleave(lists, LAST_POOL, accept_last)

    return {
        "version": 1,
        "source": "names-dataset 3.3.1 (philipperemy/name-dataset), top names per country",
        "regions": REGIONS,
        "country_region": dict(sorted(COUNTRY_REGION.items())),
        "first": first_pools,
        "last": last_pools,
        "classify": dict(sorted(classify.items())),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "surrogate" / "data" / "names.json.gz"))
    p.add_argument("--check", action="store_true", help="rebuild and compare with --out instead of writing")
    args = p.parse_args(argv)

    from names_dataset import NameDataset  # heavy: ~15 s, 1.9 GB

    nd = NameDataset()
    tables = build(nd)
    data = encode(tables)
    out = Path(args.out)
    digest = hashlib.sha256(data).hexdigest()
    if args.check:
        same = out.exists() and out.read_bytes() == data
        print(f"{out}: {'up to date' if same else 'DIFFERS'} (sha256 {digest})")
        return 0 if same else 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    sizes = {r: {g: len(v) for g, v in tables["first"][r].items()} for r in REGIONS}
    print(f"wrote {out} ({len(data)} bytes, sha256 {digest})")
    print(f"classify: {len(tables['classify'])} names; first pools: {sizes}")
    print(f"last pools: { {r: len(v) for r, v in tables['last'].items()} }")
    return 0


if __name__ == "__main__":
    sys.exit(main())
