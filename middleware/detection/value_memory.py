"""Session value memory: a value found once in a session is found again wherever it comes back.

The pattern recognizers find many values by their context ("my login is tkorhonen_2011", "my
student number is 40917723"); without it ("tkorhonen_2011 has 3 badges now") the same value
would stay in the clear. So every non-name value the cascade detects is remembered in the
session's detection memory (``SessionMemory.values``: label -> normalised keys, part of the sealed
session state: it survives a restart or a rebalance, and ``plainsight forget`` erases it), and
every later occurrence in the session — student or tutor turn, any case, and the normalised forms
people type — becomes a span of the same label:

* PHONE: the national number with or without separators, brackets, a trunk prefix or a country
  code ("+1 (415) 555-0134" = "415.555.0134" = "4155550134");
* EMAIL, URL: in any case (a URL with or without scheme, "www." or trailing slash);
* USERNAME: in any case, with or without a leading "@";
* ID_NUM: in any case, with or without separators ("4091-7723" = "40917723");
* ADDRESS and any other label: the same words in any case, whatever punctuation separates them.

The keys are the replacer's normal forms (``surrogate.generators.value_norm``), so every form maps
to the one surrogate of the value. Names are not handled here: the name finder has its own
person memory (``SessionMemory.people``: any case, possessives, first or last name alone).

Cost: nothing for a session without remembered values (most of them); otherwise a substring test
per value on the turn's letters and digits, and a regex pass (compiled once per set of values)
only over the turns where a value may occur.
"""

from __future__ import annotations

import bisect

import re
from functools import lru_cache

from ..values import parse_phone, url_core  # the replacer's normal forms (shared with surrogate.generators)

from .base import Span, has_digit
from .recognizers.id_num import ID_CANDIDATE, id_shape

SOURCE = "value-memory"
#: Score of a remembered value's span (below the recognizers' 1.0, above the name finder's).
SCORE = 0.99
#: At most this many values per session are remembered (bounded state and regex).
MAX_VALUES = 256
#: Shortest keys worth remembering: a short number recurs by chance (maths, years, counts).
_MIN_DIGITS_ONLY = 6
_MIN_KEY = 4
_MIN_PHONE_DIGITS = 7

_DIGIT_SEP = r"[\s.\-/()]{0,3}"
_ID_SEP = r"[\s.\-/_]?"
_PHONE_PREFIX = r"(?:(?:\+|00|011)[\s.\-]?\d{1,3}[\s.\-]*(?:\(0\)[\s.\-]*)?\(?|[01][\s.\-]*\(?|\()?"


def _key(label: str, value: str) -> str | None:
    """The normal form of ``value`` (None: not worth remembering)."""
    v = value.strip()
    if label == "PHONE":
        nsn = parse_phone(v).nsn
        return nsn if len(nsn) >= _MIN_PHONE_DIGITS and nsn.isdigit() else None
    if label == "EMAIL":
        k = v.casefold()
        return k if "@" in k and len(k) >= 6 else None
    if label == "URL":
        k = url_core(v).casefold().rstrip("/")
        return k if len(k) >= 6 else None
    if label == "USERNAME":
        k = v.lstrip("@").casefold()
    elif label == "ID_NUM":
        k = "".join(c for c in v if c.isalnum()).upper()
        if k.isdigit() and len(k) < _MIN_DIGITS_ONLY:
            return None
    else:
        k = " ".join(re.findall(r"[^\W_]+", v.casefold()))
    return k if len(k) >= _MIN_KEY else None


def _pattern(label: str, key: str) -> str:
    if label == "PHONE":
        return r"(?<![\d+])" + _PHONE_PREFIX + _DIGIT_SEP.join(key) + r"(?!\d)"
    if label == "ID_NUM":
        return r"(?<![^\W_])" + _ID_SEP.join(re.escape(c) for c in key) + r"(?![^\W_])"
    if label == "EMAIL":
        return r"(?<![\w.+\-])" + re.escape(key) + r"(?![\w\-]|\.\w)"
    if label == "USERNAME":
        return r"(?<![\w@\-])@?" + re.escape(key) + r"(?![\w\-@]|\.\w)"
    if label == "URL":
        return r"(?<![\w.\-/@])(?:https?://)?(?:www\.)?" + re.escape(key) + r"/?(?![\w\-/]|\.\w)"
    return r"(?<![^\W_])" + r"[\W_]+".join(re.escape(w) for w in key.split()) + r"(?![^\W_])"


@lru_cache(maxsize=4096)
def _regex(label: str, key: str) -> re.Pattern:
    """One value's pattern, compiled once per process (only when the value may occur in a turn)."""
    return re.compile(_pattern(label, key), re.IGNORECASE)


_NOT_ALNUM = re.compile(r"[\W_]+")


@lru_cache(maxsize=8192)
def _core(key: str) -> str:
    """The letters and digits of a key, case-folded: every form its pattern matches holds them
    contiguously once separators are dropped."""
    return _NOT_ALNUM.sub("", key).casefold()


#: Labels whose mentions may put separators between the characters ("4091-7723", "415.555.0134").
_SEPARATED = frozenset({"PHONE", "ID_NUM"})


def _views(text: str) -> tuple[str, str]:
    """The case-folded text, and its case-folded letters and digits ("" without a digit: every
    phone and ID key holds one)."""
    return text.casefold(), (_NOT_ALNUM.sub("", text).casefold() if has_digit(text) else "")


def _count(label: str, key: str, folded: str, core: str) -> int:
    """How often the key's literal part occurs in the text's views (an upper bound of its mentions)."""
    if label in _SEPARATED:
        return core.count(_core(key)) if core else 0
    return folded.count(key.split(" ", 1)[0])  # the literal key (its first word for an address)


def _present(text: str, values: dict) -> list[tuple[str, str]]:
    """The remembered (label, key) pairs that may occur in ``text``: substring tests (C speed) on the
    case-folded text — or, for phones and IDs, on its letters and digits — so that most turns of a
    session with remembered values never run a regex."""
    folded, core = _views(text)
    return [(label, k) for label, keys in values.items() for k in keys if _count(label, k, folded, core)]


def _disjoint(spans: list[Span]) -> tuple[list[int], list[int]]:
    """The union of ``spans`` as sorted, disjoint intervals (starts, ends)."""
    starts: list[int] = []
    ends: list[int] = []
    for s in sorted(spans, key=lambda s: s.start):
        if starts and s.start < ends[-1]:
            ends[-1] = max(ends[-1], s.end)
        else:
            starts.append(s.start)
            ends.append(s.end)
    return starts, ends


def _find(text: str, spans: list[Span], items) -> list[Span]:
    """Mentions of ``items`` in ``text`` that overlap no span of ``spans`` (longest value first).
    The taken intervals stay disjoint and sorted: one overlap test is two neighbours (bisect)."""
    starts, ends = _disjoint(spans)
    out: list[Span] = []
    for label, key in sorted(items, key=lambda it: -len(it[1])):
        for m in _regex(label, key).finditer(text):
            a, b = m.span()
            if a == b:
                continue
            i = bisect.bisect_right(starts, a)
            if (i > 0 and ends[i - 1] > a) or (i < len(starts) and starts[i] < b):
                continue
            starts.insert(i, a)
            ends.insert(i, b)
            out.append(Span(a, b, label, SOURCE, SCORE, "memory"))
    return sorted(out, key=lambda s: s.start)


def _mixed(key: str) -> bool:
    return len(key) >= 6 and any(c.isalpha() for c in key) and any(c.isdigit() for c in key)


@lru_cache(maxsize=1024)
def _compact_shapes(keys: tuple[str, ...]) -> frozenset[str]:
    return frozenset(id_shape(k) for k in keys if _mixed(k))


def _siblings(text: str, spans: list[Span], keys: list[str]) -> list[Span]:
    """Codes of the same shape as an ID remembered in this session, letters and digits both
    ("S-2024-11111" earlier, "and hers is S-2024-22222" now): another ID of the same kind."""
    shapes = _compact_shapes(tuple(keys))
    if not shapes:
        return []
    out = []
    for m in ID_CANDIDATE.finditer(text):
        a, b = m.span()
        compact = "".join(c for c in m.group() if c.isalnum()).upper()
        if id_shape(compact) in shapes and not any(s.start < b and a < s.end for s in spans):
            out.append(Span(a, b, "ID_NUM", SOURCE, SCORE, "memory"))
    return out


def recall(text: str, spans: list[Span], memory) -> list[Span]:
    """Spans of remembered values in ``text`` that no span of ``spans`` overlaps, and codes shaped
    like a remembered ID."""
    values = getattr(memory, "values", None)
    if not values:
        return []
    items = _present(text, values)
    found = _find(text, spans, items) if items else []
    ids = values.get("ID_NUM")
    if ids and has_digit(text):
        found += _siblings(text, [*spans, *found], ids)
    return found


def remember(text: str, spans: list[Span], memory) -> list[tuple[str, str]]:
    """Record the non-name values of ``spans``; the (label, key) pairs learnt now."""
    values = getattr(memory, "values", None)
    if values is None:
        return []
    new = []
    known: dict[str, set[str]] = {}
    total = sum(len(v) for v in values.values())
    for s in spans:
        if s.label == "NAME" or s.source == SOURCE:
            continue
        k = _key(s.label, text[s.start : s.end])
        if k is None:
            continue
        keys = values.setdefault(s.label, [])
        seen = known.get(s.label)
        if seen is None:
            seen = known[s.label] = set(keys)
        if k in seen or total >= MAX_VALUES:
            continue
        keys.append(k)
        seen.add(k)
        total += 1
        new.append((s.label, k))
    return new


def update(text: str, spans: list[Span], memory) -> list[Span]:
    """After a turn's detection: remember its values, and find a value learnt now again elsewhere
    in the same turn ("my login is X ... yes, X"); the regex runs only for a value whose literal
    part occurs more than once."""
    new = remember(text, spans, memory)
    if not new:
        return spans
    folded, core = _views(text)
    again = [(label, k) for label, k in new if _count(label, k, folded, core) > 1]
    more = _find(text, spans, again) if again else []
    return sorted([*spans, *more], key=lambda s: s.start) if more else spans
