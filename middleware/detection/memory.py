"""Per-session detection memory: who is a person here, and which names are story characters.

Held inside the session state (never logged, never output). Keys are case-folded tokens so that a
name confirmed once ("Hi Maria") is found later as "maria", "MARIA" or "Maria's"; a multi-part
name ("Maria Lopez") also registers each part, so "Lopez" alone is found too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..codable import StateCodable, fields_from_dict, fields_to_dict

#: Fields added later, stored only when not empty (see ``SessionMemory.to_dict``).
_OPTIONAL_FIELDS = ("examples", "narrative", "carry")
#: Parts of a multi-part name that are not names on their own.
_PARTICLES = frozenset({"de", "da", "del", "della", "di", "van", "von", "der", "den", "la", "le", "du", "dos", "das", "bin", "al", "el", "y"})


@dataclass(slots=True)
class SessionMemory(StateCodable):
    #: case-folded name token -> evidence strength (2.0 = speaker role or self-introduction,
    #: 1.0 = addressed / greeted, 0.8 = name lexicon only).
    people: dict[str, float] = field(default_factory=dict)
    #: case-folded tokens known to be characters of the session's problem / story, or public figures.
    kept: set[str] = field(default_factory=set)
    #: case-folded tokens of the session's problem text (metadata): characters, never participants
    #: unless someone introduces themselves with that name or speaks under it.
    problem: set[str] = field(default_factory=set)
    #: problem texts already parsed (by hash), so metadata repeated on every turn is read once.
    problems_seen: set[int] = field(default_factory=set)
    #: speaker roles already learnt.
    roles_seen: set[str] = field(default_factory=set)
    #: the session talks to a group (several people addressed, "everyone", "raise your hand", ...)
    classroom: bool = False
    #: the role (case-folded) that just asked someone's name ("What's your name?"): the next
    #: turn by another speaker is read as the answer. Empty: no question pending.
    expect_name: str = ""
    #: values of the other labels found in this session: label -> normalised keys, in the order
    #: found (``value_memory.py``: found again wherever they come back in the session).
    values: dict[str, list[str]] = field(default_factory=dict)
    turns: int = 0
    #: offsets [start, end] of the last turn's doubtful name candidates (rejected by the model
    #: without being sure) and the turn count they belong to; read by ``Cascade.candidates``.
    doubts: list = field(default_factory=list)
    doubts_turn: int = -1
    #: offsets [start, end, evidence] of the name-like spans the last turn decided to KEEP (public
    #: figure, fictional or story character, example name, place, ordinary word) and the turn count
    #: they belong to; read by ``Cascade.kept`` (the LLM stage's hook).
    keeps: list = field(default_factory=list)
    keeps_turn: int = -1
    #: case-folded tokens kept as public (a public figure, a fictional character, a place) in this
    #: session: later mentions ("Brady" after "Tom Brady") are kept too, unless someone is addressed
    #: with it or introduces themselves with it.
    public: set[str] = field(default_factory=set)
    #: turns of the session so far that talk about public life (sport, films, books, politics).
    topic: int = 0
    #: case-folded names kept as example names of a teacher's exercise ("Read this sentence: Kate's
    #: proposal was rejected"): while nobody addresses or introduces them, they stay characters
    #: wherever they come back in the session.
    examples: set[str] = field(default_factory=set)
    #: a learner has named a person of their life by a relation ("my daughter Ines"): their later
    #: turns tell of their own life (``NameFinder._life_narrative``).
    narrative: bool = False
    #: what the last turn left for the next one (``carry.py``): a spelling request, a spelled run,
    #: a name or a partial phone number that ended it; "t" is the turn it belongs to.
    carry: dict = field(default_factory=dict)

    # ---- storage (StateCodable) ----------------------------------------------------------
    def to_dict(self) -> dict:
        """Every field by name, sets as sorted lists (the state codec's "memory" document); the
        fields added after the document's first version are left out while empty, so a state that
        never used them is stored exactly as before."""
        doc = fields_to_dict(self)
        for name in _OPTIONAL_FIELDS:
            if not doc.get(name):
                doc.pop(name, None)
        return doc

    @classmethod
    def from_dict(cls, data: Any) -> "SessionMemory":
        """Inverse of :meth:`to_dict`; fields missing from an older document take their defaults."""
        return fields_from_dict(cls, data)

    def add_person(self, name: str, strength: float = 1.0) -> None:
        parts = [p for p in name.replace("\u2019", "'").split() if p]
        keys = [name.casefold()] if len(parts) <= 1 else [p.casefold() for p in parts]
        for k in keys:
            k = k.strip(".'")
            if len(k) < 2 or k in _PARTICLES:
                continue
            if self.people.get(k, 0.0) < strength:
                self.people[k] = strength
            if strength >= 1.0:
                self.kept.discard(k)
                self.public.discard(k)

    def addressed(self) -> int:
        """How many distinct people were confirmed (addressed, introduced, speaking) so far."""
        return sum(1 for v in self.people.values() if v >= 1.0)

    def person_strength(self, token: str) -> float:
        return self.people.get(token.casefold(), 0.0)

    def is_person(self, token: str, min_strength: float = 0.5) -> bool:
        return self.people.get(token.casefold(), 0.0) >= min_strength

    def add_kept(self, token: str) -> None:
        k = token.casefold()
        if self.people.get(k, 0.0) < 1.0:
            self.kept.add(k)

    def is_kept(self, token: str) -> bool:
        k = token.casefold()
        return k in self.kept or k in self.problem

    def add_public(self, token: str) -> None:
        for part in token.replace("\u2019", "'").split():
            k = part.casefold().strip(".'")
            if len(k) >= 2 and k not in _PARTICLES and self.people.get(k, 0.0) < 1.0:
                self.public.add(k)
                self.kept.add(k)

    def is_public(self, token: str) -> bool:
        return token.casefold() in self.public

    def add_problem(self, token: str) -> None:
        self.problem.add(token.casefold())

    def in_problem(self, token: str) -> bool:
        return token.casefold() in self.problem
