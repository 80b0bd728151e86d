"""From decided tokens to NAME spans: two unknown capitalised words as a full name, lists of
names ("Eklund, Michael and Hodge"), and adjacent name parts and initials merged into one span
("Faina D. Yefremova"); titles, greetings and "'s" stay out. Confirmed names go to the session
memory with their strength."""

from __future__ import annotations

import re

from ..base import Span
from ..keep import FAMOUS_FULL, is_calendar, is_curricular_head, is_famous, is_place
from ..lexicon import Lexicon
from ..memory import SessionMemory
from .tokens import GREETINGS, STOP, TITLES, Tok, initial_at, is_part, looks_like_word, name_class, possessed_relation

_SPACES = re.compile(r"\s+")
#: strongest first: the evidence a multi-token span reports
EVIDENCE_ORDER = ("intro", "direct", "memory", "title", "model", "rules", "context", "bounded")


def full_names(toks: list[Tok], text: str, decided: dict[int, float], memory: SessionMemory, lex: Lexicon,
               rejected: set[int] | tuple = ()) -> None:
    """"… — Zorvath Quellin here": two adjacent capitalised tokens that are names or unknown to
    every table (not words, places, calendar, famous or story characters) read as a person's
    first and last name, whatever the session looks like. Word-problem characters rarely come
    with a surname; public figures and places are excluded by their lists."""
    ok = ("unknown", "pure", "propn")
    for k in range(len(toks) - 1):
        t, u = toks[k], toks[k + 1]
        if k in decided and k + 1 in decided:
            continue
        if k in rejected and k + 1 in rejected and t.info.is_name and u.info.is_name:
            continue  # two known names the learned reviewer saw and rejected (it knows the public-life cues)
        if not (t.cap and u.cap) or t.upper or u.upper or text[t.end : u.start] != " ":
            continue
        if name_class(t) not in ok or name_class(u) not in ok:
            continue
        if t.sent_init and name_class(t) != "pure" and t.info.is_word:
            continue
        if t.low == "im":  # "Im Kofi": I'm + a name, not a full name
            continue
        if any(is_famous(x.text) or is_place(x.text) or is_calendar(x.text) or memory.is_kept(x.text)
               or is_curricular_head(x.text) or x.low in GREETINGS or x.low in STOP
               or looks_like_word(x.low, lex) for x in (t, u)) or possessed_relation(toks, k):
            continue
        if f"{t.low} {u.low}" in FAMOUS_FULL:
            continue
        decided.setdefault(k, 0.75)
        decided.setdefault(k + 1, 0.75)


def extend_lists(toks: list[Tok], text: str, decided: dict[int, float], memory: SessionMemory, lex: Lexicon,
                 skip: set[int] | tuple = ()) -> None:
    """"Eklund, Michael and Hodge": capitalised neighbours of a found name in a list are names too.
    Each found name walks outwards until the next found one, whose own walk goes on (linear in
    the turn: a list of thousands of names is read once)."""
    for k in sorted(decided):
        for step in (1, -1):
            j = k
            while True:
                nj = j + step
                sep = ""
                if 0 <= nj < len(toks) and toks[nj].low in ("and", "or"):
                    sep = toks[nj].low
                    nj += step
                if not (0 <= nj < len(toks)):
                    break
                lo, hi = (j, nj) if step == 1 else (nj, j)
                gap = _SPACES.sub(" ", text[toks[lo].end : toks[hi].start]).strip()
                if gap not in ((", " + sep).strip(", ") if sep else ",", f", {sep}" if sep else ",", sep or ","):
                    break
                cand = toks[nj]
                if nj in skip:
                    break  # kept as public, or rejected by the reviewer in a conversation about public life
                if nj in decided:
                    break  # a name of its own: its own walk (it is in the list) goes on from there
                cls = name_class(cand)
                if (not cand.cap or cand.upper or cand.low in STOP or cand.low in GREETINGS or len(cand.text) < 2
                        or (name_class(cand) == "unknown" and looks_like_word(cand.low, lex))
                        or is_calendar(cand.text)
                        or is_place(cand.text) or is_famous(cand.text) or memory.is_kept(cand.text)
                        or not (cls in ("pure", "propn", "unknown") or (cls == "wordish" and cand.info.word_margin < 1.0))):
                    break
                decided[nj] = 0.7
                j = nj


def merge(toks: list[Tok], text: str, decided: dict[int, float], confirmed: set[int], memory: SessionMemory,
          source: str, intro: set[int] = frozenset(), how: dict[int, str] | None = None) -> list[Span]:
    """One span per run of decided tokens and the name parts next to them; each confirmed or
    likely name is remembered (2.0 introduced, 1.0 confirmed, 0.8 likely)."""
    spans: list[Span] = []
    used: set[int] = set()
    for k in sorted(decided):
        if k in used:
            continue
        a, b = _extent(toks, text, decided, k)
        for j in range(a, b + 1):
            used.add(j)
        # initials at the edges are not names on their own
        while a < b and len(toks[a].text) == 1:
            a += 1
        start, end = toks[a].start, toks[b].end
        if b > a and len(toks[b].text) == 1:
            end = toks[b].end
        score = max(decided.get(j, 0.0) for j in range(a, b + 1))
        tags = {how.get(j, "context") for j in range(a, b + 1) if j in decided} if how is not None else set()
        evidence = next((e for e in EVIDENCE_ORDER if e in tags), "")
        spans.append(Span(start, end, "NAME", source, score, evidence))
        strength = 2.0 if any(j in intro for j in range(a, b + 1)) else 1.0 if any(j in confirmed for j in range(a, b + 1)) else (0.8 if score >= 0.8 else 0.0)
        if strength:
            memory.add_person(text[start:end], strength)
    return spans


def _extent(toks: list[Tok], text: str, decided: dict[int, float], k: int) -> tuple[int, int]:
    """The token range of the name around decided token ``k``: name parts and initials separated
    by a single space, to the right then to the left."""
    a = b = k
    while b + 1 < len(toks):
        gap = text[toks[b].end : toks[b + 1].start]
        nt = toks[b + 1]
        if gap not in (" ", ". ") or (gap == ". " and len(toks[b].text) != 1):
            break
        if len(nt.text) == 1 and b + 1 not in decided and not initial_at(toks, b + 1, text):
            break  # "Put those away Mahfuzur I don't ...": the pronoun, not an initial
        if b + 1 in decided or is_part(nt, toks[k]):
            b += 1
        else:
            break
    while a - 1 >= 0:
        gap = text[toks[a - 1].end : toks[a].start]
        pt = toks[a - 1]
        if gap not in (" ", ". ") or (gap == ". " and len(pt.text) != 1):
            break
        if pt.low == "im":
            break  # "hi im Jo": "im" (I'm) introduces the name, it is not part of it
        if a - 1 in decided or (is_part(pt, toks[k]) and pt.low not in TITLES and pt.low not in GREETINGS
                                and not possessed_relation(toks, a - 1)):  # "Meine Schwester Anke": the relation stays out
            a -= 1
        else:
            break
    return a, b
