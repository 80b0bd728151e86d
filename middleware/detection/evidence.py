"""Calibrated doubt: which fast-pass decisions a second opinion (the LLM stage) may overrule.

Every span the cascade reports carries ``Span.evidence``, the reason it was decided on. This module
splits that evidence into two classes:

- **certain**: the fast pass is right nearly always, and nothing a model says (or a student types)
  may unmask it: a self-introduction or the answer to a name question (``intro``), a person the
  session has confirmed (``memory``: strength >= 1.0, i.e. introduced, speaking, or confirmed by the
  model), a fail-closed bound on pathological input (``bounded``), the speaker role, and every
  pattern label (emails, phones, URLs, usernames, IDs, addresses);
- **doubtful**: the fast pass guessed, and the model rules: the learned reviewer (``model``), the
  rules-only fallback (``rules``), a greeting or vocative of a name the session does not know yet
  (``direct``: a known one reports ``memory``), a title (``title``), a full-name or list neighbour
  (``context``), and the fast pass's *keeps* of name-like words it left in the clear
  (``keep-public``, ``keep-fiction``, ``keep-story``, ``keep-example``, ``keep-word``, ``keep-place``)
  — except characters of the turn's own problem text (``keep-problem``), which the metadata settles.

Evidence this module does not know falls back to the span's score: below ``threshold``
(``llm.uncertain_below``) it is doubtful — except for the cascade's name finder, whose spans always
say why they were decided: one of its spans with no known evidence is doubtful.

``CALIBRATED`` maps evidence to the precision it had on the *tune* split of the dev files (see
``scripts/reliability_table.py`` and the reliability table in ``docs/llm.md``, measured on the
held-out *final* split): the score a consumer can read as "probability this is a real name".

The memory helpers :func:`confirm` and :func:`reject` apply the model's ruling to the session
memory, so that a person the model rejected is not "confirmed" by memory in the next turn (and a
person it confirmed is not sent again).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from .base import Span

CERTAIN = "certain"
DOUBTFUL = "doubtful"

#: NAME evidence the model never overrules.
CERTAIN_EVIDENCE = frozenset({"intro", "memory", "bounded"})
#: NAME evidence the model rules on.
DOUBTFUL_EVIDENCE = frozenset({"direct", "named", "model", "rules", "title", "context"})
#: Keeps (name-like words the fast pass left in the clear) the metadata settles: never sent.
CERTAIN_KEEPS = frozenset({"keep-problem", "keep-place", "keep-org", "keep-word"})
#: Span sources whose spans are certain whatever their evidence (the speaker field).
CERTAIN_SOURCES = frozenset({"role"})
#: The cascade's name finder (``names``, ``names-keep``, ...): its spans always carry evidence.
NAME_FINDER_SOURCE = "names"

#: Observed NAME precision per evidence on the tune split of the six dev files (ncte, mathdial,
#: ncte_uptake, bridge, presidio_synth, topicalchat), from
#: ``scripts/reliability_table.py --split tune --calibration``; ``context``, ``rules`` and
#: ``bounded`` have too few spans there to measure and carry a conservative guess.
CALIBRATED: dict[str, float] = {
    "memory": 0.99,
    "direct": 0.96,
    "intro": 0.88,
    "model": 0.80,
    "title": 0.91,
    "context": 0.5,
    "rules": 0.5,
    "bounded": 0.5,
}


def is_keep(span: Span) -> bool:
    return span.evidence.startswith("keep")


def classify(span: Span, threshold: float = 0.75) -> str:
    """``CERTAIN`` or ``DOUBTFUL`` for one span (a mask decision or a keep)."""
    ev = span.evidence
    if ev.startswith("keep"):
        return CERTAIN if ev in CERTAIN_KEEPS else DOUBTFUL
    if span.label != "NAME" or span.source in CERTAIN_SOURCES:
        return CERTAIN
    if ev in CERTAIN_EVIDENCE:
        return CERTAIN
    if ev in DOUBTFUL_EVIDENCE:
        return DOUBTFUL
    if span.source.startswith(NAME_FINDER_SOURCE):
        return DOUBTFUL  # the name finder always says why; no reason given = nothing certain
    return DOUBTFUL if span.score < threshold else CERTAIN


def is_doubtful(span: Span, threshold: float = 0.75) -> bool:
    return classify(span, threshold) == DOUBTFUL


def split(spans: Iterable[Span], threshold: float = 0.75) -> tuple[list[Span], list[Span]]:
    """(certain, doubtful) in input order."""
    certain: list[Span] = []
    doubtful: list[Span] = []
    for s in spans:
        (doubtful if is_doubtful(s, threshold) else certain).append(s)
    return certain, doubtful


def calibrated(span: Span) -> float:
    """The precision spans with this evidence had on the tune split (the raw score if unknown)."""
    if span.label != "NAME":
        return span.score
    return CALIBRATED.get(span.evidence, span.score)


# ---------------------------------------------------------------- session memory


def _keys(value: str) -> list[str]:
    parts = [p.strip(".'\u2019") for p in value.replace("\u2019", "'").split()]
    keys = [p.casefold() for p in parts if len(p) >= 2]
    if keys and keys[-1].endswith("'s"):
        keys[-1] = keys[-1][:-2]
    return [k for k in keys if k]


def confirm(memory: object, text: str, spans: Sequence[Span], strength: float = 1.0) -> int:
    """The model confirmed these NAME spans: the session memory knows them as people (later
    mentions are certain, ``memory``). Returns how many were taught."""
    from .memory import SessionMemory

    if not isinstance(memory, SessionMemory):
        return 0
    n = 0
    for s in spans:
        if s.label == "NAME" and not is_keep(s):
            memory.add_person(text[s.start : s.end], strength)
            n += 1
    return n


def reject(memory: object, text: str, spans: Sequence[Span]) -> int:
    """The model rejected these doubtful NAME spans: the session memory forgets them as people
    (unless one introduced themselves: strength >= 2.0) and remembers them as kept, so a later
    mention is not a certain ``memory`` hit. Returns how many tokens were forgotten."""
    from .memory import SessionMemory

    if not isinstance(memory, SessionMemory):
        return 0
    n = 0
    for s in spans:
        if s.label != "NAME":
            continue
        for k in _keys(text[s.start : s.end]):
            if memory.people.get(k, 0.0) >= 2.0:
                continue
            if memory.people.pop(k, None) is not None:
                n += 1
            memory.kept.add(k)
    return n
