"""Reading the model's answers back into spans of the *original* text.

Marking mode: the model echoes the turn with markers around entities. The echo is never
trusted as-is: markers are extracted, the echo (markers removed) is aligned with the original
token by token (difflib), and an entity is accepted only where every one of its tokens was
echoed faithfully at one contiguous place of the original and the characters agree (up to
case, quote style and whitespace). An entity the alignment can't place is looked up by its
text in the original (all whole-word occurrences); one that can't be found at all, an answer
with broken markers, or an echo that covers too little of the original is a failure for the
turn (:class:`AnswerError`), which the stage turns into fail-closed output.

JSON mode: the model lists ``{text, label}``; each text is located in the original by exact,
then case-insensitive, then whitespace-tolerant whole-word search, all occurrences.

Exceptions carry a reason code only, never text from the turn.
"""

from __future__ import annotations

import bisect
import difflib
import json
import re
import unicodedata
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+|[^\w\s]")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "‛": "'", "`": "'", "´": "'", "“": '"', "”": '"', "„": '"', "–": "-", "—": "-", "‐": "-", "‑": "-", "−": "-"})
#: Placeholders produced by the pipeline (tags) are never entities of the raw turn.
_PLACEHOLDER = re.compile(r"^\[[A-Z_]+(?:_\d+)?\]$")


class AnswerError(Exception):
    """The model's answer can't be used for this turn. ``reason`` is a short code (no text)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Found:
    """An entity located in the original text."""

    start: int
    end: int
    label: str


@dataclass(slots=True)
class Alignment:
    spans: list[Found]
    #: Share of the original's tokens the echo reproduced faithfully.
    coverage: float
    #: Character ranges of the original that the echo did not reproduce (not reviewed by the model).
    unreviewed: list[tuple[int, int]]
    #: Entities placed by text search because the alignment could not place them.
    by_search: int = 0


def norm(s: str) -> str:
    return unicodedata.normalize("NFKC", s).translate(_QUOTES).casefold()


def _squash(s: str) -> str:
    return "".join(norm(s).split())


def tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


# ---------------------------------------------------------------- marking answers


def contains_markers(text: str, markers: dict[str, tuple[str, str]]) -> bool:
    """True if the raw text already holds a marker string (then marking mode can't be trusted)."""
    return any(o in text or c in text for o, c in markers.values())


def clean_answer(answer: str) -> str:
    """Drop wrappers models like to add: code fences, the turn tags."""
    a = answer.strip()
    if a.startswith("```"):
        a = a.split("\n", 1)[1] if "\n" in a else a[3:]
        if a.rstrip().endswith("```"):
            a = a.rstrip()[:-3]
    a = a.replace("<current_turn>", "").replace("</current_turn>", "")
    return a.strip("\n")


def parse_marked(answer: str, markers: dict[str, tuple[str, str]]) -> tuple[str, list[Found]]:
    """Remove markers from ``answer``; return (plain echo, entities located in the plain echo)."""
    openers = {o: (label, c) for label, (o, c) in markers.items()}
    all_marks = sorted({m for pair in markers.values() for m in pair}, key=len, reverse=True)
    any_mark = re.compile("|".join(re.escape(m) for m in all_marks))
    out: list[str] = []
    found: list[Found] = []
    pos = 0
    length = 0
    while True:
        m = any_mark.search(answer, pos)
        if m is None:
            out.append(answer[pos:])
            break
        tok = m.group()
        if tok not in openers:
            raise AnswerError("stray_marker")
        label, closer = openers[tok]
        close_at = answer.find(closer, m.end())
        if close_at < 0:
            raise AnswerError("unclosed_marker")
        inner = answer[m.end() : close_at]
        if any_mark.search(inner):
            raise AnswerError("nested_marker")
        chunk = answer[pos : m.start()]
        out.append(chunk)
        length += len(chunk)
        if inner.strip():
            # trim whitespace the model may have put inside the markers
            lead = len(inner) - len(inner.lstrip())
            trail = len(inner.rstrip())
            found.append(Found(length + lead, length + trail, label))
        out.append(inner)
        length += len(inner)
        pos = close_at + len(closer)
    return "".join(out), found


def align_marked(original: str, answer: str, markers: dict[str, tuple[str, str]], min_coverage: float = 0.8) -> Alignment:
    """Locate the entities of a marking-mode ``answer`` in ``original``. Raises :class:`AnswerError`."""
    plain, marked = parse_marked(clean_answer(answer), markers)
    a = tokens(original)
    b = tokens(plain)
    if not a:
        return Alignment([], 1.0, [])
    an = [norm(t) for t, _, _ in a]
    bn = [norm(t) for t, _, _ in b]
    sm = difflib.SequenceMatcher(None, an, bn, autojunk=False)
    b2a: dict[int, int] = {}
    matched_a = [False] * len(a)
    for blk in sm.get_matching_blocks():
        for k in range(blk.size):
            b2a[blk.b + k] = blk.a + k
            matched_a[blk.a + k] = True
    coverage = sum(matched_a) / len(a)
    if coverage < min_coverage:
        raise AnswerError("unaligned")
    unreviewed: list[tuple[int, int]] = []
    i = 0
    while i < len(a):
        if not matched_a[i]:
            j = i
            while j + 1 < len(a) and not matched_a[j + 1]:
                j += 1
            unreviewed.append((a[i][1], a[j][2]))
            i = j + 1
        else:
            i += 1

    b_starts = [s for _, s, _ in b]
    spans: list[Found] = []
    by_search = 0
    for ent in marked:
        # tokens of the echo overlapping the entity
        lo = bisect.bisect_right(b_starts, ent.start) - 1
        if lo < 0 or b[lo][2] <= ent.start:
            lo += 1
        hi = lo
        while hi < len(b) and b[hi][1] < ent.end:
            hi += 1
        idx = list(range(lo, hi))
        placed = _place(original, plain, a, b, b2a, ent, idx)
        if placed is not None:
            spans.append(placed)
            continue
        hits = find_all(original, plain[ent.start : ent.end])
        if not hits:
            raise AnswerError("entity_not_found")
        by_search += 1
        spans.extend(Found(s, e, ent.label) for s, e in hits)
    return Alignment(_dedupe(spans), coverage, unreviewed, by_search)


def _place(original, plain, a, b, b2a, ent: Found, idx: list[int]) -> Found | None:
    if not idx or any(i not in b2a for i in idx):
        return None
    ai = [b2a[i] for i in idx]
    if ai != list(range(ai[0], ai[0] + len(ai))):
        return None
    first, last = idx[0], idx[-1]
    start = a[ai[0]][1]
    end = a[ai[-1]][2]
    # an entity boundary inside a token: keep the same offset if the token was echoed verbatim
    if ent.start > b[first][1]:
        if a[ai[0]][0] != b[first][0]:
            return None
        start += ent.start - b[first][1]
    if ent.end < b[last][2]:
        if a[ai[-1]][0] != b[last][0]:
            return None
        end -= b[last][2] - ent.end
    if start >= end or _squash(original[start:end]) != _squash(plain[ent.start : ent.end]):
        return None
    return Found(start, end, ent.label)


def _dedupe(spans: list[Found]) -> list[Found]:
    return sorted(set(spans), key=lambda f: (f.start, f.end, f.label))


# ---------------------------------------------------------------- text search


def find_all(original: str, needle: str) -> list[tuple[int, int]]:
    """Whole-word occurrences of ``needle``: exact, else case-insensitive, else whitespace-tolerant."""
    needle = needle.strip()
    if not needle:
        return []
    # whole words, and not a piece of a longer email/URL/handle ("jake" in "jake.t@mail.com")
    lead = r"(?<![\w@])(?<!\w[.\-/])" if needle[0].isalnum() or needle[0] == "_" else ""
    trail = r"(?!\w|[.@\-/]\w)" if needle[-1].isalnum() or needle[-1] == "_" else ""
    exact = re.compile(lead + re.escape(needle) + trail)
    hits = [(m.start(), m.end()) for m in exact.finditer(original)]
    if hits:
        return hits
    ci = re.compile(lead + re.escape(needle) + trail, re.IGNORECASE)
    hits = [(m.start(), m.end()) for m in ci.finditer(original)]
    if hits:
        return hits
    parts = needle.split()
    if len(parts) > 1:
        loose = re.compile(lead + r"\s*".join(re.escape(p) for p in parts) + trail, re.IGNORECASE)
        hits = [(m.start(), m.end()) for m in loose.finditer(original)]
        if hits:
            return hits
    # quote/dash style only (same length after the translation)
    if len(norm(needle)) == len(needle):
        n = norm(needle)
        o = norm(original)
        if len(o) == len(original):
            return [(m.start(), m.end()) for m in re.compile(lead + re.escape(n) + trail).finditer(o)]
    return []


# ---------------------------------------------------------------- JSON answers


def parse_json_entities(answer: str, labels: set[str]) -> list[tuple[str, str]]:
    """[(text, label)] from a JSON-mode answer. Raises :class:`AnswerError` if malformed."""
    a = clean_answer(answer)
    try:
        data = json.loads(a)
    except (json.JSONDecodeError, ValueError):
        raise AnswerError("bad_json") from None
    if isinstance(data, dict):
        data = data.get("entities")
    if not isinstance(data, list):
        raise AnswerError("bad_json_shape")
    out: list[tuple[str, str]] = []
    for item in data:
        if not isinstance(item, dict):
            raise AnswerError("bad_json_shape")
        text, label = item.get("text"), item.get("label")
        if not isinstance(text, str) or not isinstance(label, str):
            raise AnswerError("bad_json_shape")
        label = label.strip().upper()
        if label not in labels:
            label = "NAME" if label in {"PERSON", "NAME_STUDENT", "STUDENT_NAME"} else label
        if label not in labels:
            continue
        out.append((text, label))
    return out


def locate_json(original: str, entities: list[tuple[str, str]], context: str = "") -> list[Found]:
    """All occurrences of each listed entity; unknown text → :class:`AnswerError`.

    Entities that only occur in the (de-identified) context turns are ignored: the model
    copied them from the context, they are not in this turn. Placeholder tags are ignored.
    """
    spans: list[Found] = []
    for text, label in entities:
        t = text.strip()
        if not t or _PLACEHOLDER.match(t):
            continue
        hits = find_all(original, t)
        if not hits:
            if context and find_all(context, t):
                continue
            raise AnswerError("entity_not_found")
        spans.extend(Found(s, e, label) for s, e in hits)
    return _dedupe(spans)


# ---------------------------------------------------------------- verifier answers

_VERDICT = re.compile(r"^\s*\[?(\d+)\]?\s*[:.)=-]\s*\**\s*([TF])(?:rue|alse)?\b", re.IGNORECASE | re.MULTILINE)


def parse_verdicts(answer: str, n: int) -> dict[int, bool]:
    """{candidate number (1-based): is PII} from "1: T" lines. Missing numbers are absent."""
    out: dict[int, bool] = {}
    for m in _VERDICT.finditer(answer):
        k = int(m.group(1))
        if 1 <= k <= n and k not in out:
            out[k] = m.group(2).upper() == "T"
    if not out and n == 1:
        s = answer.strip().strip(".").upper()
        if s in {"T", "TRUE"}:
            out[1] = True
        elif s in {"F", "FALSE"}:
            out[1] = False
    return out
