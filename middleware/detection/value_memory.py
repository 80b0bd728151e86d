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

import re
from functools import lru_cache

from .base import Span, has_digit

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
_DIGIT_LABELS = frozenset({"PHONE", "ID_NUM"})


def _key(label: str, value: str) -> str | None:
    """The normal form of ``value`` (None: not worth remembering)."""
    from surrogate.generators import parse_phone, url_core

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


@lru_cache(maxsize=2048)
def _compiled(items: tuple[tuple[str, str], ...]) -> tuple[re.Pattern, tuple[str, ...], bool]:
    """One regex for a session's remembered values (longest first, so a value that contains
    another wins); group i+1 is value i."""
    order = sorted(items, key=lambda it: -len(it[1]))
    rx = re.compile("|".join(f"({_pattern(label, key)})" for label, key in order), re.IGNORECASE)
    return rx, tuple(label for label, _ in order), all(label in _DIGIT_LABELS for label, _ in order)


_NOT_ALNUM = re.compile(r"[\W_]+")


@lru_cache(maxsize=8192)
def _core(key: str) -> str:
    """The letters and digits of a key, case-folded: every form its pattern matches holds them
    contiguously once separators are dropped."""
    return _NOT_ALNUM.sub("", key).casefold()


#: Labels whose mentions may put separators between the characters ("4091-7723", "415.555.0134").
_SEPARATED = frozenset({"PHONE", "ID_NUM"})


def _present(text: str, values: dict) -> tuple[tuple[str, str], ...]:
    """The remembered (label, key) pairs that may occur in ``text``: substring tests (C speed) on the
    case-folded text — or, for phones and IDs, on its letters and digits — so that most turns of a
    session with remembered values never run the regex."""
    folded = core = None
    out = []
    for label, keys in values.items():
        for k in keys:
            if label in _SEPARATED:
                if core is None:
                    core = _NOT_ALNUM.sub("", text).casefold() if has_digit(text) else ""
                hit = bool(core) and _core(k) in core
            else:
                if folded is None:
                    folded = text.casefold()
                hit = k.split(" ", 1)[0] in folded  # the literal key (its first word for an address)
            if hit:
                out.append((label, k))
    return tuple(out)


def recall(text: str, spans: list[Span], memory) -> list[Span]:
    """Spans of remembered values in ``text`` that no span of ``spans`` overlaps."""
    values = getattr(memory, "values", None)
    if not values:
        return []
    items = _present(text, values)
    if not items:
        return []
    rx, labels, _digits_only = _compiled(items)
    taken = sorted((s.start, s.end) for s in spans)
    out: list[Span] = []
    for m in rx.finditer(text):
        a, b = m.span()
        if a == b or any(x < b and a < y for x, y in taken):
            continue
        out.append(Span(a, b, labels[m.lastindex - 1], SOURCE, SCORE, "memory"))
    return out


def remember(text: str, spans: list[Span], memory) -> bool:
    """Record the non-name values of ``spans``; True when something new was learnt."""
    values = getattr(memory, "values", None)
    if values is None:
        return False
    new = False
    for s in spans:
        if s.label == "NAME" or s.source == SOURCE:
            continue
        k = _key(s.label, text[s.start : s.end])
        if k is None:
            continue
        keys = values.setdefault(s.label, [])
        if k in keys or sum(len(v) for v in values.values()) >= MAX_VALUES:
            continue
        keys.append(k)
        new = True
    return new


def update(text: str, spans: list[Span], memory) -> list[Span]:
    """After a turn's detection: remember its values, and when that taught something new, find
    the new values again elsewhere in the same turn ("my login is X ... X")."""
    if not remember(text, spans, memory):
        return spans
    more = recall(text, spans, memory)
    return sorted([*spans, *more], key=lambda s: s.start) if more else spans
