"""Name families: one person, one surrogate, whatever form of the name the chat uses.

A session that knows "Samantha" and then sees "sam" (or "Lexi" then "Lex", "Oluwaseun" then "Seun")
is talking about the same person. Forms are linked when

* the ``nicknames`` package's hand-curated table (built into ``surrogate/data/name_origin.json.gz``
  by ``scripts/build_name_origin_tables.py``, with its source) lists one as a nickname of the other
  (Sam / Samantha, Bill / William, Katya / Katherine);
* one is the other plus a diminutive ending (Lex / Lexi, Tom / Tommy, Dan / Danny);
* one is a truncation of the other — a prefix of at least 3 letters (Chris / Christopher) or a
  suffix of at least 4 letters that leaves at least 4 (Seun / Oluwaseun, Tina / Christina) — unless
  the lexicon knows the two as given names of opposite genders (Ali / Alice, Dan / Daniela);
* accents aside they are the same (Siobhán / Siobhan: one key already, ``names.fold``).

A new given-name token linked to exactly one given name the session already maps becomes the
matching form of that person's surrogate: a nickname of the surrogate when the new form is the
shorter one and the table knows one (Samantha → Veronica, sam → Ronnie), the longer form when the new
one is longer, else the surrogate itself. To make a matching form likely, a name that has nicknames
draws its surrogate among names that have them too (and a nickname among nicknames).

Tag mode (``name_tag``) gives one ``[NAME_n]`` per person: "Katya Petrova", then "Katya", "Petrova",
"Katja"… are one tag.
"""

from __future__ import annotations

import re
from .names import data_path, fold, load_once, read_table

DIMINUTIVE_ENDINGS = ("i", "ie", "y", "ey", "ee", "a", "o", "ito", "ita", "ka", "sha", "chen", "ke", "tje", "je")
_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
MIN_PREFER = 12


class Families:
    def __init__(self, nick: dict[str, tuple[str, ...]], origin=None) -> None:
        self.nick = nick
        canon: dict[str, set[str]] = {}
        for c, ns in nick.items():
            for n in ns:
                canon.setdefault(n, set()).add(c)
        self.canon = {k: tuple(sorted(v)) for k, v in canon.items()}
        self._origin = origin
        self._prefer: dict[tuple, tuple[str, ...]] = {}

    def relation(self, new: str, known: str) -> str | None:
        """"short" when ``new`` is a short form of ``known``, "long" when a longer form, else None (keys folded)."""
        if new == known or len(new) < 2 or len(known) < 2:
            return None
        if new in self.nick.get(known, ()):
            return "short"
        if known in self.nick.get(new, ()):
            return "long"
        short, long_, rel = (new, known, "short") if len(new) < len(known) else (known, new, "long")
        if len(short) < 3 or len(short) == len(long_):
            return None
        rest = long_[len(short):]
        if long_.startswith(short) and (rest in DIMINUTIVE_ENDINGS or rest[1:] in DIMINUTIVE_ENDINGS and rest[0] == short[-1]):
            return rel  # Lex / Lexi, Tom / Tommy
        truncated = (long_.startswith(short) and len(long_) - len(short) >= 2) or (
            long_.endswith(short) and len(short) >= 4 and len(long_) - len(short) >= 4)
        if truncated and not self._opposite_genders(short, long_):
            return rel
        return None

    def _opposite_genders(self, a: str, b: str) -> bool:
        if self._origin is None:
            return False
        ga, gb = self._origin.gender(a), self._origin.gender(b)
        return ga is not None and gb is not None and ga != gb

    def forms(self, surrogate: str, rel: str) -> tuple[str, ...]:
        """Forms of the surrogate matching ``rel`` (its nicknames for "short", its full forms for "long")."""
        f = fold(surrogate)
        got = self.nick.get(f, ()) if rel == "short" else self.canon.get(f, ())
        return tuple(x.title() for x in got if x.isascii() and x.isalpha() and len(x) >= 2)

    def prefer(self, pool: tuple[str, ...], key: str) -> tuple[str, ...]:
        """The candidates of ``pool`` with the same kind of family as ``key`` (a name with nicknames:
        names with nicknames; a nickname: nicknames), when there are enough; else ``pool``."""
        kind = "nick" if key in self.canon else "canon" if key in self.nick else None
        if kind is None:
            return pool
        k = (id(pool), len(pool), kind)
        got = self._prefer.get(k)
        if got is None:
            table = self.canon if kind == "nick" else self.nick
            same = tuple(n for n in pool if fold(n) in table)
            got = same if len(same) >= MIN_PREFER else pool
            if len(self._prefer) < 20_000:
                self._prefer[k] = got
        return got

    def link(self, key: str, state: "SessionMapping", real_now=()) -> tuple[str, str] | None:
        """(the session's canonical key of the same person, relation) for a new token, or None.
        Not a name of the same turn ("Abdo, Abdourahman and Abdillahi": named side by side, three people)."""
        lasts = {l for _, l in state.people}
        found = []
        for k in state.names:
            if k in lasts or k in state.aliases or k in real_now:
                continue
            rel = self.relation(key, k)
            if rel is not None:
                found.append((k, rel))
        return found[0] if len(found) == 1 else None


def family_surrogate(rep: "SurrogateReplacer", key: str, base: str, role: str | None, state: "SessionMapping",
                     real_now) -> str | None:
    """The surrogate of a new given-name token that is a form of a name the session maps, or None."""
    got = han_link(rep, key, base, state, real_now)  # "Wang Wei" after "王伟"
    if got is not None:
        return got
    if role == "last":
        return None
    fam = rep.families
    got = fam.link(key, state, real_now)
    if got is None:
        return None
    known, rel = got
    sur = state.names[known]
    forms = fam.forms(sur, rel)
    if forms:
        start = rep._rng(state, "NAME", key, 0).below(len(forms))
        for j in range(len(forms)):
            cand = forms[(start + j) % len(forms)]
            if rep._name_free(cand, key, state, real_now):
                state.add_name(key, base, cand)
                return cand
    state.add_alias(key, known)
    return sur


def name_tag(rep: "SurrogateReplacer", value: str, state: "SessionMapping") -> str:
    """One ``[NAME_n]`` per person (see the module docstring)."""
    from plainsight.middleware.values import ALL_TITLES

    tags = state.tags
    keys = [fold(m.group()) for m in _TOKEN.finditer(value)]
    keys = [k[:-2] if k.endswith(("'s", "’s")) else k for k in keys]
    keys = [k for k in keys if len(k) > 1 and k.rstrip(".") not in ALL_TITLES]
    if not keys:
        return rep._tag(value, "NAME", state)
    known: dict[str, int] = {}
    for k in keys:
        n = tags.numbers.get(("NAME~", k))
        if n is None:  # a nickname / other form of a tagged name
            linked = [(t, num) for (lab, t), num in tags.numbers.items()
                      if lab == "NAME~" and rep.families.relation(k, t) is not None]
            if len({num for _, num in linked}) == 1:
                n = linked[0][1]
        if n is not None:
            known[k] = n
    nums = set(known.values())
    new = [k for k in keys if k not in known]
    n = None
    if len(nums) == 1:
        n = next(iter(nums))
        # "Maria Garcia" after "Maria Lopez": another person with the same given name
        if new and tags.numbers.get(("NAME~full", str(n))):
            n = None
    if n is None:
        tag = rep._tag(value, "NAME", state)
        n = int(tag[len("[NAME_"):-1])
    else:
        tag = f"[NAME_{n}]"
    for k in keys:
        tags.numbers.setdefault(("NAME~", k), n)
    if len(keys) > 1:
        tags.numbers[("NAME~full", str(n))] = 1
    return tag


_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
@load_once
def _pinyin() -> dict:
    """``surrogate/data/pinyin.json.gz`` (scripts/build_pinyin_tables.py), loaded on first use."""
    d = read_table(data_path("pinyin.json.gz"))
    return {"pinyin": d["pinyin"], "surnames": frozenset(d["surnames"])}


def han_parts(name: str) -> tuple[str, str] | None:
    """(surname, given name) of a Chinese name written in Han characters, surname first."""
    if not name or not all(_HAN.match(c) for c in name):
        return None
    sn = _pinyin()["surnames"]
    for k in (2, 1):
        if len(name) > k and name[:k] in sn:
            return name[:k], name[k:]
    return None


def romanise(chars: str) -> str | None:
    table = _pinyin()["pinyin"]
    out = [table.get(c) for c in chars]
    return "".join(out).title() if all(out) else None


def han_link(rep, key: str, base: str, state, real_now) -> str | None:
    """A Latin-script token that is the pinyin of the surname or given name of a Han-script name the
    session maps ("王伟" then "Wang Wei"): the pinyin of the same part of that name's surrogate."""
    if not base.isascii() or not any(_HAN.search(k) for k in state.names):
        return None
    for hk, hsur in list(state.names.items()):
        parts, sparts = han_parts(hk), han_parts(hsur)
        if parts is None or sparts is None:
            continue
        for orig, sur in zip(parts, sparts):
            r = romanise(orig)
            if r is not None and fold(r) == key:
                cand = romanise(sur)
                if cand and rep._name_free(cand, key, state, real_now):
                    state.add_name(key, base, cand)
                    return cand
    return None
