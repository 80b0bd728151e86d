"""General knowledge for the learned name reviewer: what a word names besides a person, and which
language a sentence is in.

Built at build time from maintained packages by ``scripts/build_knowledge_table.py`` into
``middleware/data/knowledge.json.gz`` (~380 kB): languages, demonyms, countries, continents,
regions, cities, religions, holidays, month and day names, in English and in Spanish, French,
German, Italian and Portuguese; the frequent words of those five languages; and each language's
commonest words for a cheap per-sentence language guess.

Nothing here decides alone. :func:`kinds` and :func:`foreign_word` are *features* the reviewer
(``naming/features.py``) weighs with the context: Paris, Georgia, Jordan, Austin and India are
also people, and "my friend Paris" stays a person.
"""

from __future__ import annotations

import functools
import gzip
import json
from importlib import resources
from pathlib import Path

KNOWLEDGE_PATH = Path(str(resources.files("plainsight.middleware").joinpath("data", "knowledge.json.gz")))

#: One letter per class (the feature strings use them): L language, N demonym, C country,
#: K continent, R region, T town or city, G religion, H holiday, M month or day.
LETTERS = {"language": "L", "demonym": "N", "country": "C", "continent": "K", "region": "R", "city": "T",
           "religion": "G", "holiday": "H", "calendar": "M"}
LANGS = ("en", "es", "fr", "de", "it", "pt")


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], dict[str, str], dict[str, frozenset[str]], frozenset[str]]:
    """(phrase -> class letters, word -> languages it is a frequent word of, language -> function
    words, first words of multi-word entries)."""
    if not KNOWLEDGE_PATH.exists():
        return {}, {}, {}, frozenset()
    with gzip.open(KNOWLEDGE_PATH, "rt", encoding="utf-8") as fh:
        d = json.load(fh)
    cls: dict[str, str] = {}
    firsts: set[str] = set()
    for name, letter in LETTERS.items():
        for w in d["classes"].get(name, ()):
            cls[w] = cls.get(w, "") + letter
            if " " in w:
                firsts.add(w.split(" ", 1)[0])
    cls = {w: "".join(sorted(v)) for w, v in cls.items()}
    words: dict[str, str] = {}
    for lang, ws in sorted(d.get("words", {}).items()):
        for w in ws:
            words[w] = words.get(w, "") + lang
    function = {lang: frozenset(ws) for lang, ws in d.get("function", {}).items()}
    return cls, words, function, frozenset(firsts)


def kinds(phrase: str) -> str:
    """Class letters of a case-folded word or phrase ("" when none): ``kinds("russian") == "LN"``."""
    return _tables()[0].get(phrase, "")


def starts_phrase(low: str) -> bool:
    """Is ``low`` the first word of a multi-word entry ("new" of "new york")?"""
    return low in _tables()[3]


def foreign_word(low: str, lang: str) -> bool:
    """Is ``low`` one of the frequent words of ``lang`` (not English; not a popular name or a place)?"""
    langs = _tables()[1].get(low)
    return bool(langs) and lang in langs


def sentence_language(lows: list[str] | tuple[str, ...]) -> str:
    """A cheap guess of the language of a sentence from its commonest words: each language scores
    one per function word and a half per other frequent word of it (not English function words);
    the best language wins with at least 1.5 and more than English's function words; else "en"."""
    _, words, function, _ = _tables()
    if not function or len(lows) < 2:
        return "en"
    en = function.get("en", frozenset())
    n_en = sum(1 for w in lows if w in en)
    best, n_best = "en", n_en
    for lang in LANGS[1:]:
        fw = function.get(lang)
        if fw is None:
            continue
        n = sum(1.0 if w in fw else 0.5 if lang in words.get(w, "") else 0.0 for w in lows if w not in en)
        if n >= 1.5 and n > n_best:
            best, n_best = lang, n
    return best
