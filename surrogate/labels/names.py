"""NAME surrogates: the origin-aware choices the replacer delegates (see ``name_origin.py``).

* :func:`single_role` — a lone name token is a given name when the lexicon knows it as one
  ("Taylor", "Hunter": a student addressed by name), else a surname when it knows it as one;
* :func:`person_hint` — the origin group of a person's other name, for a token the lexicon does not know;
* :func:`origin_pool` — the surrogate candidates of a Latin-script token: names of the token's own
  origin group (as a given name or as a surname, by its role) and, for a given name, its gender.
"""

from __future__ import annotations

import re

from .name_origin import MIN_POOL, NameOrigin

_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f\u1e00-\u1eff'’.\-]+")


def is_latin(token: str) -> bool:
    return _LATIN.fullmatch(token) is not None


def single_role(no: NameOrigin, base: str, info) -> str:
    if no.given(base) is not None:
        return "first"
    if no.surname(base) is not None:
        return "last"
    return "last" if info is not None and info.kind == "l" else "first"


def person_hint(no: NameOrigin, first: str | None, last: str | None) -> str | None:
    for tok, role in ((first, "first"), (last, "last")):
        if tok and is_latin(tok):
            g = no.best_group(tok, role)
            if g is not None:
                return g
    return None


_BY_REGION: dict[tuple, tuple[str, ...]] = {}


def origin_pool(no: NameOrigin, base: str, role: str | None, hint: str | None, tables=None,
                region: str | None = None) -> tuple[str, ...] | None:
    if not is_latin(base):
        return None
    r = "last" if role == "last" else "first"
    group = no.best_group(base, r) or hint
    if group is None:
        return None
    gender = None
    if r == "first":
        got = no.given(base)
        gender = got[1] if got is not None else None
    pool = no.pool(group, r, gender)
    if pool and tables is not None and region:
        # the group's names that the UN-region tables also place in the original's region (Lusophone
        # names of Portugal for a European "Maria"), when there are enough of them
        key = (id(no), group, r, gender, region)
        got = _BY_REGION.get(key)
        if got is None:
            same = tuple(n for n in pool if (i := tables.classify(n)) is not None and i.region == region)
            got = _BY_REGION[key] = same if len(same) >= MIN_POOL else pool
        pool = got
    return pool or None
