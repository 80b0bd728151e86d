"""Recognizers built from configuration alone: regex patterns (with scores, context words and a
checksum) and deny lists. See :mod:`middleware.detection.spec` for their settings."""

from __future__ import annotations

import logging
import re
from typing import Sequence

import regex

from .base import Span, TurnContext
from .recognizer import VALIDATORS, ContextWords, Recognizer, ShapeSpec
from .spec import DenyListSpec, PatternRecognizerSpec

log = logging.getLogger(__name__)


class _Configured(Recognizer):
    """What every recognizer declared in configuration takes from its spec: name, its one label,
    the kind of surrogate and the label's description for the LLM stage."""

    contains_names = True

    def __init__(self, spec: PatternRecognizerSpec | DenyListSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.labels = (spec.label,)
        self.label = spec.label
        self.surrogate = spec.surrogate
        if spec.description:
            self.descriptions = {spec.label: spec.description}


class PatternRecognizer(_Configured):
    """Regexes with scores. A context word before the match raises its score by
    ``context_boost`` (at least to ``context_min_score``); a failing checksum drops the match;
    matches below ``min_score`` are dropped. Matches are taken on word boundaries: a pattern
    never matches inside a longer word or number."""

    def __init__(self, spec: PatternRecognizerSpec) -> None:
        super().__init__(spec)
        # the `regex` module (as Presidio): no catastrophic backtracking on most patterns, and a
        # time limit per pattern and turn for the rest (a user's regex must not stall the worker)
        flags = regex.IGNORECASE if spec.ignore_case else 0
        self.patterns = tuple((regex.compile(p.regex, flags), p.score, p.name or f"pattern{i}")
                              for i, p in enumerate(spec.patterns))
        self.timeout_s = spec.timeout_ms / 1000.0
        self.context = ContextWords(spec.context, spec.context_window)
        self.validator = VALIDATORS[spec.validator] if spec.validator else None
        self._shape = ShapeSpec(tuple(p for p, _, _ in self.patterns), self.validator)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        out: list[Span] = []
        spec = self.spec
        for rx, score, pname in self.patterns:
            try:
                matches = list(rx.finditer(text, timeout=self.timeout_s))
            except TimeoutError:
                _warn_timeout(self.name, pname)
                continue
            for m in matches:
                a, b = m.span()
                if a == b or not _bounded(text, a, b):
                    continue
                if self.validator is not None and not self.validator(m.group()):
                    continue
                s = score
                evidence = pname
                if self.context:
                    word = self.context.found(text, a, b)
                    if word is not None:
                        s = max(min(1.0, s + spec.context_boost), spec.context_min_score)
                        evidence = f"{pname}+context"
                if s < spec.min_score:
                    continue
                out.append(Span(a, b, self.label, self.name, round(s, 4), evidence))
        return out

    def shape_of(self, label: str) -> ShapeSpec | None:
        return self._shape if label == self.label else None


_TIMED_OUT: set[tuple[str, str]] = set()


def _warn_timeout(name: str, pattern: str) -> None:
    """Once per pattern and process (names only: never the turn)."""
    if (name, pattern) not in _TIMED_OUT:
        _TIMED_OUT.add((name, pattern))
        log.warning("recognizer %s: pattern %s ran past its time limit on a turn and was skipped for it "
                    "(simplify the regex or raise timeout_ms)", name, pattern)


def _bounded(text: str, a: int, b: int) -> bool:
    """Not in the middle of a word or number: "S-2024-00042" inside "XS-2024-000421" is no match."""
    if a > 0 and text[a - 1].isalnum() and text[a].isalnum():
        return False
    if b < len(text) and text[b].isalnum() and text[b - 1].isalnum():
        return False
    return True


class DenyListRecognizer(_Configured):
    """Words or phrases that are always the label (whole words; any case by default; any run
    of spaces inside a phrase)."""

    def __init__(self, spec: DenyListSpec) -> None:
        super().__init__(spec)
        words = sorted({" ".join(w.split()) for w in spec.deny_list}, key=len, reverse=True)
        alts = "|".join(r"\s+".join(re.escape(p) for p in w.split()) for w in words)
        self.regex = re.compile(rf"(?<!\w)(?:{alts})(?!\w)", re.IGNORECASE if spec.ignore_case else 0)

    def analyze(self, text: str, ctx: TurnContext | None = None) -> list[Span]:
        if self.spec.score < self.spec.min_score:
            return []
        return [Span(m.start(), m.end(), self.label, self.name, self.spec.score, "deny-list")
                for m in self.regex.finditer(text)]


def build_configured(specs: Sequence[PatternRecognizerSpec | DenyListSpec]) -> list[Recognizer]:
    out: list[Recognizer] = []
    for s in specs:
        if not s.enabled:
            continue
        out.append(PatternRecognizer(s) if isinstance(s, PatternRecognizerSpec) else DenyListRecognizer(s))
    return out
