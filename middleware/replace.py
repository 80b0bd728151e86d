"""Replacing detected spans in a turn: typed tags, plain redaction, or (surrogate/) realistic surrogates.

A replacer turns (text, spans) into (new text, entities located in the new text). It keeps
per-session state so the same value gets the same replacement in every turn.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Protocol

from .codable import StateCodable
from .detection.base import Span
from .schemas import EntityOut


def normalize_value(value: str, label: str) -> str:
    """The identity of a value for consistency: case-folded, whitespace collapsed, possessive dropped."""
    v = " ".join(value.split()).casefold()
    if label == "NAME":
        for suffix in ("'s", "’s", "'", "’"):
            if v.endswith(suffix) and len(v) > len(suffix) + 1:
                v = v[: -len(suffix)]
                break
    return v


class Replacer(Protocol):
    """Replaces spans consistently within a session, and maps a reply back (``reidentify``).
    Its per-session state implements :class:`middleware.codable.StateCodable` so that it can be
    stored with the session."""

    def new_state(self, session_id: str) -> StateCodable: ...

    def replace(self, text: str, spans: list[Span], state: object, mode: str) -> tuple[str, list[EntityOut]]: ...

    def reidentify(self, text: str, state: object) -> tuple[str, list[EntityOut]]:
        """A reply written with this replacer's outputs → the real values restored, located."""
        ...


@dataclass(slots=True)
class TagState(StateCodable):
    #: (label, normalised value) -> its tag number; label -> the last number given.
    numbers: dict[tuple[str, str], int] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """``{"counters": {label: n}, "numbers": {"('LABEL', 'value')": n}}`` (the key is the
        ``repr`` of the (label, normalised value) pair: the format states were always stored in)."""
        return {"counters": dict(self.counters), "numbers": {str(k): n for k, n in self.numbers.items()}}

    @classmethod
    def from_dict(cls, data: Any) -> "TagState":
        numbers: dict[tuple[str, str], int] = {}
        for key, n in data.get("numbers", {}).items():
            pair = ast.literal_eval(key)
            if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
                raise ValueError("bad tag key")
            numbers[pair] = int(n)
        return cls(numbers=numbers, counters={str(k): int(v) for k, v in data.get("counters", {}).items()})


def apply_replacements(text: str, spans: list[Span], values: list[str]) -> tuple[str, list[EntityOut]]:
    """Splice ``values`` in place of ``spans`` (sorted, non-overlapping) and locate them in the result."""
    out: list[str] = []
    ents: list[EntityOut] = []
    pos = 0
    length = 0
    for span, value in zip(spans, values):
        chunk = text[pos : span.start]
        out.append(chunk)
        length += len(chunk)
        out.append(value)
        ents.append(EntityOut(start=length, end=length + len(value), label=span.label, source=span.source))
        length += len(value)
        pos = span.end
    out.append(text[pos:])
    return "".join(out), ents


class TagReplacer:
    """``[NAME_1]``, ``[EMAIL_2]``…, numbered per session by first appearance; or ``[NAME]`` when redacting."""

    def new_state(self, session_id: str) -> TagState:
        return TagState()

    def tag_for(self, value: str, label: str, state: TagState) -> str:
        key = (label, normalize_value(value, label))
        n = state.numbers.get(key)
        if n is None:
            n = state.counters.get(label, 0) + 1
            state.counters[label] = n
            state.numbers[key] = n
        return f"[{label}_{n}]"

    def reidentify(self, text: str, state: TagState) -> tuple[str, list[EntityOut]]:
        """Tags are not mapped back: the reply is returned as it is."""
        return text, []

    def replace(self, text: str, spans: list[Span], state: TagState, mode: str) -> tuple[str, list[EntityOut]]:
        spans = sorted(spans, key=lambda s: s.start)
        if mode == "redact":
            values = [f"[{s.label}]" for s in spans]
        else:
            values = [self.tag_for(text[s.start : s.end], s.label, state) for s in spans]
        return apply_replacements(text, spans, values)


_JOINABLE = frozenset(" \t\r\n,;")


def merge_adjacent(text: str, spans: list[Span], labels: frozenset[str] = frozenset({"ADDRESS"})) -> list[Span]:
    """Join spans of ``labels`` separated only by spaces, commas or line breaks: the detector
    reports an address block part by part (as labelled data does), but one address must become
    one surrogate address, not a patchwork of fake parts."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: s.start):
        prev = out[-1] if out else None
        if (prev is not None and prev.label == s.label and s.label in labels and prev.end <= s.start
                and all(ch in _JOINABLE for ch in text[prev.end : s.start])):
            out[-1] = Span(prev.start, s.end, prev.label, prev.source, max(prev.score, s.score))
        else:
            out.append(s)
    return out
