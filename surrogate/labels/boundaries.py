"""A replacement covers exactly the value: the words a detector let into a span at its edges are
given back before the span is replaced ("mon frère s'appelle Hugo" keeps "s'appelle"; "8 church st
ballarat so i can come" keeps "so i can come").

Trimmed, at either edge of a NAME span and at the end of an ADDRESS span, while a name / address
word remains:

* a lower-case elided clitic form ("s'appelle", "m'appelle", "c'est", "qu'il");
* a lower-case function word of English, French, Spanish or German (spaCy's stop words) beside a
  capitalised name, or in an all-lower-case span unless the lexicon knows it as a given name
  ("will smith" stays whole: a name is never given back);
* for ADDRESS, anything after such a word at the end ("ballarat so i can come": "so" and what follows).
"""

from __future__ import annotations

import dataclasses
import functools
import re

from plainsight.middleware.detection.base import Span

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+|[^\w\s]+")
_ELIDED = re.compile(r"(?:[cdjlmnst]|qu)['’][^\W\d_]", re.IGNORECASE)
#: name particles that may open a name ("van Gogh", "de la Cruz")
_PARTICLES = frozenset("van von der den de da del della di du la le bin binti ibn al el dos das do ter ten".split())


@functools.lru_cache(maxsize=1)
def function_words() -> frozenset[str]:
    out: set[str] = set()
    for lang in ("en", "fr", "es", "de"):
        try:
            mod = __import__(f"spacy.lang.{lang}.stop_words", fromlist=["STOP_WORDS"])
            out |= {w.casefold() for w in mod.STOP_WORDS if " " not in w}
        except ImportError:  # pragma: no cover - spaCy is a dependency
            pass
    return frozenset(out)


def _loose(word: str, origin, start: bool, capitalised_name: bool) -> bool:
    if not word.islower():
        return False
    if _ELIDED.match(word):
        return True
    if word.casefold() not in function_words():
        return False
    if start and word in _PARTICLES:
        return False
    # beside a capitalised name a lower-case function word is not part of it ("Hugo est là");
    # in an all-lower-case span it is, when it is also a given name ("will smith")
    return capitalised_name or origin is None or origin.given(word) is None


def trim(text: str, spans: list[Span], origin=None) -> list[Span]:
    """``spans`` with loose edge words given back (a span is never emptied)."""
    out: list[Span] | None = None
    for i, s in enumerate(spans):
        if s.label not in ("NAME", "ADDRESS"):
            continue
        if s.label == "NAME" and text[s.start:s.start + 1].isupper() and "'" not in text[s.start:s.end] \
                and "’" not in text[s.start:s.end] and text[text.rfind(" ", s.start, s.end) + 1:s.end][:1].isupper():
            continue  # "Maria", "Maria Lopez": capitalised at both edges, nothing loose
        if s.label == "ADDRESS" and " " not in text[s.start:s.end]:
            continue
        words = list(_WORD.finditer(text, s.start, s.end))
        lo, hi = 0, len(words)
        if s.label == "NAME":
            cap = any(w.group()[:1].isupper() for w in words)
            while hi - lo > 1 and _loose(words[lo].group(), origin, True, cap):
                lo += 1
            while hi - lo > 1 and _loose(words[hi - 1].group(), origin, False, cap):
                hi -= 1
        else:  # an address: cut at the first loose word after a street / town word
            for j in range(1, len(words)):
                w = words[j].group()
                if w.isalpha() and _loose(w, None, False, False) and any(c.isalpha() for c in words[j - 1].group()) \
                        and len(w) <= 5 and w.casefold() in _CLAUSE_WORDS:
                    hi = j
                    break
        if (lo, hi) == (0, len(words)) or hi <= lo:
            continue
        start, end = words[lo].start(), words[hi - 1].end()
        if s.label == "ADDRESS":
            while end > start and text[end - 1] in " ,;":
                end -= 1
        if out is None:
            out = list(spans)
        out[i] = dataclasses.replace(s, start=start, end=end)
    return spans if out is None else out


#: words that start a clause after an address ("... ballarat so i can come", "... and then")
_CLAUSE_WORDS = frozenset("""so and but because if when then i we you he she they it that which who
    where while since until et mais donc parce quand je tu il elle nous vous y pero porque cuando yo tú
    él ella und aber weil wenn dann ich du er sie wir""".split())
