"""The recognizer contract: what every part of the fast pass implements.

A recognizer gets the turn's text, its :class:`~middleware.detection.base.TurnContext` (role,
session, metadata), the session's detection memory (:class:`~middleware.detection.memory.SessionMemory`)
and the spans the recognizers before it found in this turn; it returns
:class:`~middleware.detection.base.Span` s (offsets, label, score, ``source`` = its name,
``evidence`` = why). The cascade runs the recognizers of a
:class:`~middleware.detection.registry.RecognizerRegistry` in order; name finding is one of them
(it runs last and sees what the pattern recognizers found).

A stateless recognizer implements :meth:`Recognizer.analyze` only; one that reads or writes the
session's memory overrides :meth:`Recognizer.detect`. Plug-ins subclass :class:`Recognizer` and
are published under the entry-point group ``plainsight.recognizers``::

    # pyproject.toml of the plug-in package
    [project.entry-points."plainsight.recognizers"]
    district_login = "district_pii:DistrictLoginRecognizer"

and switched on with ``detection.recognizers: [{plugin: district_login, options: {...}}]``.
"""

from __future__ import annotations

import re
from abc import ABC
from dataclasses import dataclass
from typing import Callable, ClassVar, Sequence

from ..values import luhn_ok
from .base import Span, TurnContext
from .memory import SessionMemory


class Recognizer(ABC):
    """Base class of every recognizer (see the module docstring)."""

    #: The recognizer's name: the ``source`` of its spans, a metric label value (closed set).
    name: str = ""
    #: The labels it can emit (the registry makes the pipeline, the metrics, the LLM stage and
    #: the surrogates aware of them).
    labels: tuple[str, ...] = ()
    #: What the LLM stage is told each of its labels means (labels missing here get a generic line).
    descriptions: ClassVar[dict[str, str]] = {}
    #: ``shape``: surrogates keep length and character classes; ``tag``: ``[LABEL_n]``. Only used
    #: for labels without a dedicated generator (NAME, EMAIL, PHONE, URL, ... have their own).
    surrogate: str = "shape"
    #: Spans of these labels hide name candidates inside them (an ID "S-2024-00042" holds no name).
    contains_names: bool = False

    def detect(self, text: str, ctx: TurnContext, memory: SessionMemory, found: Sequence[Span] = ()) -> list[Span]:
        """Spans of ``text``. ``found``: what the recognizers before this one found in this turn."""
        return self.analyze(text, ctx)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        """Stateless recognizers implement this; ``detect`` calls it."""
        raise NotImplementedError(f"{type(self).__name__} implements neither detect nor analyze")

    def shape_of(self, label: str) -> "ShapeSpec | None":
        """How a surrogate of ``label`` must look (patterns it must match, a checksum); None: any
        value of the same length and character classes."""
        return None


@dataclass(frozen=True, slots=True)
class ShapeSpec:
    """What a format-preserving surrogate must satisfy: match one of ``patterns`` (whole value)
    and pass ``validator`` when given."""

    patterns: tuple[re.Pattern[str], ...] = ()
    validator: Callable[[str], bool] | None = None

    def fits(self, value: str) -> bool:
        if self.patterns and not any(p.fullmatch(value) for p in self.patterns):
            return False
        return self.validator is None or self.validator(value)


# --------------------------------------------------------------------------- checksums

def _digits(value: str) -> str:
    return "".join(c for c in value if c.isdigit())


def luhn_valid(value: str) -> bool:
    """Luhn (payment cards, many national IDs): the digits of ``value``, separators ignored."""
    d = _digits(value)
    return len(d) >= 2 and luhn_ok(d)


def iban_valid(value: str) -> bool:
    """ISO 13616 mod-97 (IBAN), spaces ignored."""
    s = "".join(value.split()).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", s):
        return False
    return int("".join(str(int(c, 36)) for c in s[4:] + s[:4])) % 97 == 1


def mod11_valid(value: str) -> bool:
    """Weighted mod 11 (ISBN-10 style: weights n..1 over the digits, last may be X)."""
    s = "".join(c for c in value if c.isdigit() or c in "xX")
    if len(s) < 2 or any(c in "xX" for c in s[:-1]):
        return False
    vals = [10 if c in "xX" else int(c) for c in s]
    n = len(vals)
    return sum(v * (n - i) for i, v in enumerate(vals)) % 11 == 0


_VERHOEFF_D = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 2, 3, 4, 0, 6, 7, 8, 9, 5), (2, 3, 4, 0, 1, 7, 8, 9, 5, 6),
    (3, 4, 0, 1, 2, 8, 9, 5, 6, 7), (4, 0, 1, 2, 3, 9, 5, 6, 7, 8), (5, 9, 8, 7, 6, 0, 4, 3, 2, 1),
    (6, 5, 9, 8, 7, 1, 0, 4, 3, 2), (7, 6, 5, 9, 8, 2, 1, 0, 4, 3), (8, 7, 6, 5, 9, 3, 2, 1, 0, 4),
    (9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
)  # fmt: skip
_VERHOEFF_P = (
    (0, 1, 2, 3, 4, 5, 6, 7, 8, 9), (1, 5, 7, 6, 2, 8, 3, 0, 9, 4), (5, 8, 0, 3, 7, 9, 6, 1, 4, 2),
    (8, 9, 1, 6, 0, 4, 3, 5, 2, 7), (9, 4, 5, 3, 1, 2, 6, 8, 7, 0), (4, 2, 8, 6, 5, 7, 3, 9, 0, 1),
    (2, 7, 9, 3, 8, 0, 6, 4, 1, 5), (7, 0, 4, 6, 9, 1, 3, 2, 5, 8),
)  # fmt: skip


def verhoeff_valid(value: str) -> bool:
    """Verhoeff (e.g. India's Aadhaar)."""
    d = _digits(value)
    if len(d) < 2:
        return False
    c = 0
    for i, ch in enumerate(reversed(d)):
        c = _VERHOEFF_D[c][_VERHOEFF_P[i % 8][int(ch)]]
    return c == 0


VALIDATORS: dict[str, Callable[[str], bool]] = {
    "luhn": luhn_valid,
    "iban": iban_valid,
    "mod11": mod11_valid,
    "verhoeff": verhoeff_valid,
}


# --------------------------------------------------------------------------- context words

_WORD = re.compile(r"\w+")


class ContextWords:
    """Presidio-style context: a match scores higher when one of the words or phrases occurs among
    the ``window`` words just before it (any case; a phrase counts when its words appear in order)."""

    __slots__ = ("phrases", "window")

    def __init__(self, words: Sequence[str], window: int = 5) -> None:
        self.phrases = tuple(tuple(w.casefold() for w in _WORD.findall(p)) for p in words if _WORD.search(p))
        self.window = window

    def __bool__(self) -> bool:
        return bool(self.phrases)

    def found(self, text: str, start: int, end: int) -> str | None:
        """The context phrase found before ``start`` (or on the same line just after ``end``), or None."""
        before = [m.group().casefold() for m in _WORD.finditer(text, max(0, start - 200), start)][-self.window :]
        after = [m.group().casefold() for m in _WORD.finditer(text, end, min(len(text), end + 60))][:2]
        for words in (before, after):
            for p in self.phrases:
                n = len(p)
                for i in range(len(words) - n + 1):
                    if tuple(words[i : i + n]) == p:
                        return " ".join(p)
        return None
