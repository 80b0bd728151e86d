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


def _origin_group(no: NameOrigin, base: str, role: str | None, hint: str | None) -> tuple[str, str | None]:
    """("first" or "last", the origin group the table places the token in, else ``hint``); no group
    for a token not in Latin script."""
    r = "last" if role == "last" else "first"
    if not is_latin(base):
        return r, None
    return r, no.best_group(base, r) or hint


def origin_pool(no: NameOrigin, base: str, role: str | None, hint: str | None, tables=None,
                region: str | None = None) -> tuple[str, ...] | None:
    r, group = _origin_group(no, base, role, hint)
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


_REFINED: dict[tuple, tuple[str, ...]] = {}


def refine(no: NameOrigin, pool: tuple[str, ...], base: str, role: str | None, hint: str | None,
           gender: str | None = None) -> tuple[str, ...]:
    """The candidates of ``pool`` (any pool: a Faker language group's, a UN region's) that the origin
    table places in the original's origin group (and gender, for a gendered given name), when there
    are enough of them; else ``()`` (``pool`` itself when nothing is known of the original)."""
    if not is_latin(base):
        return pool
    r = "last" if role == "last" else "first"
    group = no.best_group(base, r) or hint
    if r == "first":
        got = no.given(base)
        gender = got[1] if got is not None and got[1] in ("F", "M") else gender if gender in ("F", "M") else None
    else:
        gender = None
    if group is None and gender is None:
        return pool
    key = (id(pool), len(pool), group, r, gender)
    got = _REFINED.get(key)
    if got is None:
        def fits(n: str) -> bool:
            return ((group is None or no.best_group(n, r) == group)
                    and (gender is None or no.gender(n) == gender))
        same = tuple(n for n in pool if fits(n))
        got = same if len(same) >= MIN_POOL else ()
        if len(_REFINED) < 20_000:
            _REFINED[key] = got
    return got


def choose_pool(no: NameOrigin, pool: tuple[str, ...], base: str, role: str | None, hint: str | None,
                language_group: bool, tables=None, region: str | None = None) -> tuple[str, ...]:
    """The replacer's candidates for one name token. ``pool``: what it chose by UN region, or by the
    person's finer Faker language group (``language_group``: "Jürgen Müller" → German) — kept when
    enough of it is in the token's own origin group and gender; else the token's origin-group pool
    ("Natalie Åberg": Natalie draws from the Anglo given names, Åberg from the Nordic surnames)."""
    if language_group:
        got = refine(no, pool, base, role, hint)
        if got:
            return got
        if not base.isascii() or _mostly_of(no, pool, base, role, hint):
            # letters of the language ("Jānis", "Ágatha") or too few of the finer group's names known
            # to the table: the finer group decides
            return pool
    own = origin_pool(no, base, role, hint, tables, region)
    if own:
        return refine(no, own, base, role, hint) or own
    return refine(no, pool, base, role, hint) or pool


_MOSTLY: dict[tuple, bool] = {}


def _mostly_of(no: NameOrigin, pool: tuple[str, ...], base: str, role: str | None, hint: str | None) -> bool:
    """Are most of the pool's names that the table places in the token's origin group ("Baltic"
    names of Faker's lists that names-dataset knows: Eastern European)?"""
    r, group = _origin_group(no, base, role, hint)
    if group is None:
        return True
    key = (id(pool), len(pool), group, r)
    got = _MOSTLY.get(key)
    if got is None:
        placed = [g for g in (no.best_group(n, r) for n in pool) if g is not None]
        got = bool(placed) and sum(g == group for g in placed) >= 0.5 * len(placed)
        if len(_MOSTLY) < 20_000:
            _MOSTLY[key] = got
    return got
