"""No famous surrogate: a surrogate name is never a well-known person's name, alone or with the word
next to it ("Taylor Swift lyrics" with only "Taylor" private must not become "<X> Swift" where
"<X> Swift" is famous), nor a famous full name with the person's other surrogate name.

The well-known people are Pantheon 1.0's (``../shared/data/lexicons/pantheon_people.tsv``), built into
``middleware/data/public_names.json.gz`` by ``scripts/build_public_tables.py`` (the detector's table
of public figures, read here too).
"""

from __future__ import annotations

import re

from ..names import fold

_WORD = re.compile(r"[^\W\d_]+")


def _people() -> frozenset[str]:
    from plainsight.middleware.detection.public import tables

    return tables()["people"]


def famous(candidate: str, near=()) -> bool:
    """Is ``candidate`` (a surrogate name token) a famous name alone, or with a word of ``near``
    (folded words beside the name in the turn, or the person's other surrogate names) before or after it?"""
    people = _people()
    c = candidate.casefold()
    if c in people or fold(c) in people:
        return True
    for w in near:
        if f"{c} {w}" in people or f"{w} {c}" in people:
            return True
    return False


def neighbours(text: str, start: int, end: int) -> tuple[str, ...]:
    """The words right before and right after a span, case-folded."""
    out = []
    m = re.search(r"([^\W\d_]+)\s+$", text[max(0, start - 40): start])
    if m:
        out.append(m.group(1).casefold())
    m = re.match(r"\s+([^\W\d_]+)", text[end: end + 40])
    if m:
        out.append(m.group(1).casefold())
    return tuple(out)
