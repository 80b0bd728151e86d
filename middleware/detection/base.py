"""Core detection types shared by every recognizer, the cascade and the Presidio baseline."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

_DIGIT = re.compile(r"\d")


def has_digit(text: str) -> bool:
    """Any (Unicode) digit in ``text``: the cheap gate of the digit-based recognizers."""
    return _DIGIT.search(text) is not None


def count_digits(text: str) -> int:
    return len(_DIGIT.findall(text))


#: Labels scored as core PII (the others are indirect identifiers, reported separately).
CORE_LABELS = ("NAME", "EMAIL", "PHONE", "URL", "USERNAME", "ID_NUM", "ADDRESS")


@dataclass(frozen=True, slots=True)
class Span:
    """A detected entity in the *input* text. ``score`` in [0, 1]; ``source`` names the recognizer."""

    start: int
    end: int
    label: str
    source: str
    score: float = 1.0
    #: why the recognizer decided (names: "direct" greeting/vocative, "intro" self-introduction,
    #: "memory" a person known in the session, "title", "model", "rules", "context" a full name or
    #: list neighbour, "bounded" fail-closed); diagnostics only, not part of equality
    evidence: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not (0 <= self.start < self.end):
            raise ValueError(f"bad span bounds {self.start}..{self.end}")

    def overlaps(self, other: "Span") -> bool:
        return self.start < other.end and other.start < self.end

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(slots=True)
class TurnContext:
    """What a detector knows about the turn besides its text."""

    role: str = "student"
    session_id: str = ""
    turn_index: int = 0
    #: Free-form hints from the input (e.g. the word problem of a maths dialogue). Never output.
    metadata: dict = field(default_factory=dict)


class Detector:
    """Finds PII spans in one turn. ``memory`` is the session's detection memory (opaque to callers,
    made by :meth:`new_memory`); a detector may read it and record what it learned for later turns.

    Subclasses implement :meth:`detect`; the other hooks do nothing by default."""

    name: str = "detector"

    def new_memory(self) -> object:
        """A fresh session memory: None (no memory) or an instance of a class implementing
        :class:`middleware.codable.StateCodable`, so that the session can be stored."""
        return None

    def detect(self, text: str, ctx: TurnContext, memory: object) -> list[Span]:
        raise NotImplementedError

    def candidates(self, text: str, ctx: TurnContext, memory: object) -> list[Span]:
        """Doubtful spans of the turn just detected that the detector did *not* report (for a
        refiner to review). None by default."""
        return []

    def kept(self, text: str, ctx: TurnContext, memory: object) -> list[Span]:
        """Name-like spans of the turn just detected that the detector decided to keep (evidence
        ``keep-*``), for a refiner to rule on. None by default."""
        return []

    def learn(self, memory: object, text: str, spans: list[Span]) -> int:
        """Teach the session memory spans found by a later stage alone (e.g. names only the LLM
        found); returns how many were taken. Nothing by default."""
        return 0

    def follow_ruling(self, memory: object, text: str, confirmed: list[Span], rejected: list[Span]) -> int:
        """A later stage ruled on the turn's doubtful spans: ``confirmed`` stay masked, ``rejected``
        were unmasked; the session memory follows. Returns how many memory entries changed."""
        return 0

    def keep_test(self, memory: object) -> Callable[[str], bool] | None:
        """A test ``token -> bool`` for the memory's confident keep decisions (story characters,
        public figures), or None when the detector makes none."""
        return None


def resolve_overlaps(spans: list[Span]) -> list[Span]:
    """Keep a non-overlapping subset: higher score, then longer span, then earlier start wins.
    O(n log n): kept spans are held sorted by start, so each check looks at two neighbours."""
    import bisect

    ordered = sorted(spans, key=lambda s: (-s.score, -(s.end - s.start), s.start))
    starts: list[int] = []
    kept: list[Span] = []
    for s in ordered:
        i = bisect.bisect_left(starts, s.start)
        if i < len(kept) and kept[i].start < s.end:  # the next kept span starts inside s
            continue
        if i > 0 and kept[i - 1].end > s.start:  # the previous kept span reaches into s
            continue
        starts.insert(i, s.start)
        kept.insert(i, s)
    return kept
