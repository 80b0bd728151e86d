"""Deciding, from the fast pass's output, whether a turn needs the model at all.

``gate="uncertain"`` sends a turn only when the model could change the outcome:

- what the fast pass doubts (``middleware/detection/evidence.py``): ``doubtful`` — a span it masks
  on doubtful evidence (learned reviewer, greeting of a name the session does not know yet, title,
  context guess); ``candidate`` — a name it rejected without being sure; ``keep`` — a name-like
  word it kept in the clear (public figure, story character) on doubtful evidence;
- ``capitalised``: a capitalised word that is not sentence-initial and not covered by a span
  (a name the fast pass may have missed), or a name-lexicon hit not covered by a span;
- ``cue``: a self-introduction or relation cue ("my name is", "call me", "my teacher ...")
  not followed by a covered span — chat is often lower-case;
- ``contact``: an uncovered '@', a web address or a long digit run (emails, URLs, IDs, phones);
- with the shipped name/word lexicon (``lexicon(token) -> info`` with ``is_name``, ``is_word``,
  ``word_margin``): ``unknown_initial`` — a sentence-initial capitalised word that is no
  English word or mostly a proper noun ("Radenn has done this"); ``lowercase_name`` — a
  lower-case token that is a known name and not (mostly) an ordinary word ("selma is from…");
  ``address`` — a number next to a word that is no English word ("Hammarvägen 15").

Everything else (e.g. "What is the area of the pink rectangle?") is kept from the model.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from ..detection.base import Span
from ..detection.evidence import is_doubtful

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
    Student Teacher Tutor Google Zoom Internet TV You You're We They He She It There Here Its Your Our Their My
    Uh Um Umm Uhm Uh-huh Uh-oh Mm Mmm Mm-hmm Mm-hm Mhm Hm Ah Aha Ahh Oh Ooh Oops Shh Whoa Wow Yay Yup Eh Huh Ugh
    Cause Alright Inaudible Crosstalk Laughter Laughs Foreign Unintelligible Pause Silence Number Set""".split()
)
_APOS = re.compile(r"['’]")
#: lower-case tokens the name tables know but chat uses as words
LOWER_COMMON = frozenset("lets yep yup nope yeah hey hi ok okay mark bill will pat sue art".split())


def _covered(start: int, end: int, spans: Sequence[Span]) -> bool:
    return any(s.start < end and start < s.end for s in spans)


_NUM_WORD = re.compile(r"\b\d{1,6}\s+([^\W\d_]{4,})|([^\W\d_]{4,})\s+\d{1,6}\b")


def gate_reason(
    text: str,
    fast_spans: Sequence[Span],
    candidates: Sequence[Span],
    mode: str = "uncertain",
    threshold: float = 0.75,
    lexicon: Callable[[str], object] | None = None,
    keep: Callable[[str], bool] | None = None,
    keeps: Sequence[Span] = (),
) -> str | None:
    """The reason the turn goes to the model, or None when it does not.

    ``keep(token)``: the detector's confident keep decisions (e.g. the session memory's story
    characters and public figures); such tokens are settled and don't call for the model.
    ``keeps``: the name-like spans the fast pass kept in this turn (``Span.evidence`` ``keep-*``).
    """
    if mode == "never":
        return None
    if mode == "all":
        return "all"
    if any(is_doubtful(s, threshold) for s in fast_spans):
        return "doubtful"
    if candidates:
        return "candidate"
    if any(is_doubtful(k, threshold) for k in keeps):
        return "keep"
    covered = [*fast_spans, *keeps]
    kinds = {kind for _, _, kind in _scan(text, covered, lexicon, keep)}
    if "capitalised" in kinds:
        return "capitalised"
    initial_unknown = "unknown_initial" in kinds
    lower_name = "lowercase_name" in kinds
    lower_unknown = "lowercase_unknown" in kinds
    if initial_unknown:
        return "unknown_initial"
    if lower_name:
        return "lowercase_name"
    for m in _CUE.finditer(text):
        if not _covered(m.start(1), m.end(1), covered) and not (keep is not None and keep(_APOS.split(m.group(1), 1)[0])):
            return "cue"
    for m in _CONTACT.finditer(text):
        if not _covered(m.start(), m.end(), covered):
            return "contact"
    if lexicon is not None:
        for m in _NUM_WORD.finditer(text):
            g = 1 if m.group(1) else 2
            if not _covered(m.start(g), m.end(g), covered) and not lexicon(m.group(g)).is_word:
                return "address"
    if lower_unknown:
        return "lowercase_unknown"
    return None


def _scan(text: str, covered: Sequence[Span], lexicon: Callable[[str], object] | None,
          keep: Callable[[str], bool] | None) -> list[tuple[int, int, str]]:
    """Name-like tokens nothing covers: (start, end, kind) with kind ``capitalised`` (not at a
    sentence start), ``unknown_initial``, ``lowercase_name`` or ``lowercase_unknown``."""
    out: list[tuple[int, int, str]] = []
    for m in _WORD.finditer(text):
        w = m.group()
        if _covered(m.start(), m.end(), covered):
            continue
        core = _APOS.split(w, 1)[0]  # I’m → I, Jones' → Jones, Carmen's → Carmen
        if len(core) < 2 or (core.isupper() and len(core) <= 3):  # variables, points, units: B, X, GB, PM
            continue
        if lexicon is not None and "-" in core and all(_is_word(lexicon, part) for part in core.split("-") if part):
            continue  # One-half, Twenty-five
        if keep is not None and keep(core):
            continue
        end = m.start() + len(core)
        if w[0].isupper() and core not in COMMON_CAPITALISED:
            before = text[: m.start()]
            if before.strip() and not _SENT_END.search(before):
                out.append((m.start(), end, "capitalised"))
            elif lexicon is not None and not w.isupper():
                info = lexicon(core)
                if not info.is_word or info.word_margin < 0:
                    out.append((m.start(), end, "unknown_initial"))
        elif lexicon is not None and w.islower() and len(core) >= 3 and core not in LOWER_COMMON and (core == w or w[len(core) + 1 :] == "s"):
            info = lexicon(core)
            if info.is_name and (not info.is_word or info.word_margin < -1.0):
                out.append((m.start(), end, "lowercase_name"))
            elif not info.is_name and not info.is_word and len(core) >= 4 and core.isalpha():
                out.append((m.start(), end, "lowercase_unknown"))  # a typo, or a name only the model can tell
    return out


#: what a turn that fails closed masks besides the fast pass's spans, candidates and keeps
SUSPECT_KINDS = frozenset({"capitalised", "unknown_initial", "lowercase_name"})


def suspects(text: str, covered: Sequence[Span], lexicon: Callable[[str], object] | None = None,
             keep: Callable[[str], bool] | None = None) -> list[Span]:
    """The name-like tokens that send a turn to the model though the fast pass did not flag them
    (a capitalised word inside a sentence, a sentence-initial non-word, a lower-case name): when
    the model's answer is missing, failing closed masks them too (NAME, source ``llm-gate``)."""
    return [Span(a, b, "NAME", "llm-gate", 0.5, "gate") for a, b, kind in _scan(text, covered, lexicon, keep)
            if kind in SUSPECT_KINDS]


def _is_word(lexicon: Callable[[str], object], token: str) -> bool:
    info = lexicon(token)
    return bool(info.is_word) and info.word_margin >= 0


def uncertain_spans(spans: Iterable[Span], threshold: float) -> list[Span]:
    return [s for s in spans if s.score < threshold]
