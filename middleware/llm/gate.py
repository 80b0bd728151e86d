"""Deciding, from the fast pass's output, whether a turn needs the model at all.

``gate="uncertain"`` sends a turn only when the model could change the outcome:

- ``uncertain``: the fast pass has low-confidence spans or candidates (score below
  ``llm.uncertain_below``);
- ``capitalised``: a capitalised word that is not sentence-initial and not covered by a span
  (a name the fast pass may have missed), or a name-lexicon hit not covered by a span;
- ``cue``: a self-introduction or relation cue ("my name is", "call me", "my teacher ...")
  not followed by a covered span — chat is often lower-case;
- ``contact``: an uncovered '@', a web address or a long digit run (emails, URLs, IDs, phones).

Everything else (e.g. "What is the area of the pink rectangle?") is kept from the model.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from ..detection.base import Span

_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’-]*")
_SENT_END = re.compile(r"[.!?:;\n\"“(]\s*$")
_CUE = re.compile(
    r"\b(?:my name(?:'s| is)|name is|i am|i'm|im|call me|this is|named|called|"
    r"my (?:mom|mum|dad|mother|father|sister|brother|teacher|tutor|friend|cousin|aunt|uncle|grandma|grandpa|son|daughter|bf|gf)"
    r"|mr|mrs|ms|miss|dr)\b\.?\s+(\S+)",
    re.IGNORECASE,
)
_CONTACT = re.compile(r"@|\bwww\.|https?://|\.(?:com|org|net|edu|io|me|dev|co)\b|\d[\d\s().-]{5,}\d", re.IGNORECASE)

#: Capitalised words that are almost never names in tutoring chat.
COMMON_CAPITALISED = frozenset(
    """I I'm I'll I've I'd OK Ok Okay Yes No Yeah Yep Nope Hi Hello Hey Thanks Thank Please Sorry Good Great Nice
    Well So And But Or The A An This That These Those What Why How When Where Who Which Can Could Would Should
    Do Does Did Is Are Was Were Let Lets Let's Now Then Next First Second Third Also Right Sure Cool Wow Oh Hmm
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July August
    September October November December English Math Maths Science Spanish French History Algebra Geometry
    Calculus Chapter Question Answer Step Part Unit Lesson Problem Example Figure Table Page Mr Mrs Ms Dr Miss
    Student Teacher Tutor Google Zoom Internet TV""".split()
)


def _covered(start: int, end: int, spans: Sequence[Span]) -> bool:
    return any(s.start < end and start < s.end for s in spans)


def gate_reason(
    text: str,
    fast_spans: Sequence[Span],
    candidates: Sequence[Span],
    mode: str = "uncertain",
    threshold: float = 0.75,
    is_name: Callable[[str], bool] | None = None,
) -> str | None:
    """The reason the turn goes to the model, or None when it does not."""
    if mode == "never":
        return None
    if mode == "all":
        return "all"
    if any(s.score < threshold for s in fast_spans) or any(c.score < threshold for c in candidates) or candidates:
        return "uncertain"
    covered = list(fast_spans)
    for m in _WORD.finditer(text):
        w = m.group()
        if _covered(m.start(), m.end(), covered):
            continue
        if w[0].isupper() and w not in COMMON_CAPITALISED and w.rstrip("'’s") not in COMMON_CAPITALISED:
            before = text[: m.start()]
            if before.strip() and not _SENT_END.search(before):
                return "capitalised"
        if is_name is not None and len(w) > 1 and is_name(w):
            return "capitalised"
    for m in _CUE.finditer(text):
        if not _covered(m.start(1), m.end(1), covered):
            return "cue"
    for m in _CONTACT.finditer(text):
        if not _covered(m.start(), m.end(), covered):
            return "contact"
    return None


def uncertain_spans(spans: Iterable[Span], threshold: float) -> list[Span]:
    return [s for s in spans if s.score < threshold]
