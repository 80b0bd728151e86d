"""SurrogateReplacer: realistic, consistent, deterministic surrogates ("hidden in plain sight").

Implements the :class:`middleware.replace.Replacer` protocol::

    r = SurrogateReplacer.from_settings(settings)       # or SurrogateReplacer(secret)
    state = r.new_state(session_id)                      # a SessionMapping
    text, entities = r.replace(text, spans, state, "surrogate")   # or "tag" / "redact"
    text, entities = r.reidentify(tutor_reply, state)    # surrogates → real values

Mapping rules (see also :mod:`surrogate.state`):

* Names map token by token, keyed by the accent-stripped case-folded token, so "Maria Lopez",
  "Maria", "LOPEZ", "maria's" all agree; a name first seen as "Maria" and later as "Maria Lopez"
  keeps its first name. Case pattern (lower/UPPER/Title) and possessive "'s" are preserved;
  titles ("Mr."), particles ("van", "de") and punctuation stay; an initial stays an initial (the
  initial of the person's surrogate when the session knows who it stands for).
* A surrogate first name has the gender and UN region of the original (shipped tables); a last
  name the region of the original last name (else of the person's first name); unknown names
  draw from region-agnostic pools (unisex for first names).
* Misspellings: a new name token of >= ``fuzzy_min_length`` letters that is one edit
  (insert/delete/substitute/swap) from exactly one name already in the session is linked to it,
  unless both are known, distinct names in the tables (Maria/Marie stay two people).
* Injective: a candidate surrogate is rejected if it is a real value seen in the session (so far,
  including every value of the current turn), the surrogate of another value, one edit from the
  original, or the original itself; the next candidate comes from the same HMAC with counter + 1.
* Deterministic: every choice derives from HMAC-SHA256(secret, session_id, label, normalised
  value, counter), so replays are byte-identical and sessions are unlinkable.
"""

from __future__ import annotations

import logging
import os
import re
import weakref
from typing import Callable

from plainsight.middleware.detection.base import Span, resolve_overlaps
from plainsight.middleware.replace import TagReplacer, apply_replacements
from plainsight.middleware.schemas import EntityOut
from plainsight.middleware.values import ALL_TITLES, SURNAME_TITLES

from . import generators as G
from .families import Families, family_surrogate, name_tag
from .keyed import KeyedRandom, derive
from .labels.boundaries import trim as trim_spans
from .labels.famous import famous, neighbours
from .labels.name_origin import load_name_origin
from .labels.names import choose_pool, person_hint, single_role
from .names import NameInfo, NameTables, fold, load_tables
from .state import SessionMapping, ValueEntry
from .text import apply_case, case_pattern, common_words, damerau1, split_camel, words_near

log = logging.getLogger(__name__)

MODES = ("surrogate", "tag", "redact")

_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
_RUN = re.compile(r"[^\W\d_]+|\d+|[\W_]+")
_POSSESSIVE = ("'s", "’s", "'S", "’S")

#: Titles after which a lone name is a last name ("Mr. Lopez", "Dr Chen"), and every title kept
#: verbatim in front of a name ("Coach Maria", "Uncle Bob"): defined once in middleware/values.py.
TITLES_LAST = SURNAME_TITLES
_TITLES_ALL = ALL_TITLES
#: Post-nominal suffixes kept verbatim at the end of a name ("Maria Lopez PhD", "John Smith Jr.").
SUFFIXES = frozenset("jr sr ii iii iv phd md dds dmd dvm esq rn mba jd cpa pe".split())
PARTICLES = frozenset("van von der den de da del della di du la le bin binti ibn al el dos das do ter ten y".split())
_TITLE_BEFORE = re.compile(
    r"(?i)\b(?:" + "|".join(sorted(TITLES_LAST, key=len, reverse=True)) + r")\.?\s+$"
)
_MAX_TRIES = 48
_FALLBACK_LABELS = {"LOCATION": G.gen_location, "ORG": G.gen_org}


class SurrogateReplacer:
    """See the module docstring. Thread-compatible: one instance, many sessions (state per session)."""

    def __init__(
        self,
        secret: bytes | str,
        *,
        tables: NameTables | None = None,
        fuzzy_names: bool = True,
        fuzzy_min_length: int = 5,
        shapes: dict[str, Callable[[str], bool] | None] | None = None,
        max_entries: int | None = None,
        session_keys: bool = False,
    ) -> None:
        #: mapped values per session; past it a new value gets an unstored "[LABEL]" (bounded state)
        self.max_entries = max_entries
        #: give every new session its own random key (crypto-shredding: see SessionMapping.key)
        self.session_keys = session_keys
        #: values left unmapped past ``max_entries`` (all sessions; a metric)
        self.capped = 0
        self._secret = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
        if not self._secret:
            raise ValueError("surrogate secret is empty")
        self._tables = tables
        self._origins = None
        self._name_origin = None
        self._families: Families | None = None
        self._pools: dict[tuple, tuple[str, ...]] | None = None
        self._classify_memo: dict[str, tuple[bool, str]] | None = None
        self.fuzzy_names = fuzzy_names
        self.fuzzy_min_length = fuzzy_min_length
        self._tagger = TagReplacer()
        self._value_gens: dict[str, Callable] = {
            "EMAIL": self._gen_email,
            "PHONE": lambda v, rng, st, pend: G.gen_phone(v, rng),
            "URL": self._gen_url,
            "USERNAME": self._gen_username,
            "ID_NUM": lambda v, rng, st, pend: G.gen_id(v, rng),
            "ADDRESS": lambda v, rng, st, pend: G.gen_address(v, rng),
            **{k: (lambda f: lambda v, rng, st, pend: f(v, rng))(f) for k, f in _FALLBACK_LABELS.items()},
        }
        # Labels added by configured recognizers (STUDENT_ID, ...): format-preserving surrogates,
        # which must still fit the recognizer's own patterns / checksum when it has them.
        for label, fits in (shapes or {}).items():
            self._value_gens.setdefault(label, (lambda f: lambda v, rng, st, pend: G.gen_shaped(v, rng, f))(fits))

    @classmethod
    def from_settings(cls, settings) -> "SurrogateReplacer":
        s = settings.surrogate
        from plainsight.middleware.keys import load_configured

        secret = load_configured(settings)[0]
        if secret is None:
            # no public default: unlinkable surrogates, consistent within this process only
            secret = _process_secret()
            _info_once("no surrogate.secret configured: surrogates use a random secret of this process "
                       "(consistent within it, not reproducible across runs)")
        elif secret == _DEV_SECRET:
            _warn_once("surrogate.secret is the public development value (--insecure-dev-keys); never in production")
        return cls(
            secret,
            fuzzy_names=getattr(s, "fuzzy_names", True),
            fuzzy_min_length=getattr(s, "fuzzy_min_length", 5),
            shapes=_configured_shapes(settings),
            max_entries=getattr(settings.session, "max_entries", None),
        )

    @property
    def tables(self) -> NameTables:
        if self._tables is None:
            self._tables = load_tables()
        return self._tables

    @property
    def origins(self):
        """Language / country groups of names (``surrogate/origin.py``), loaded on first use."""
        if self._origins is None:
            from .origin import load_origins

            self._origins = load_origins()
        return self._origins

    @property
    def name_origin(self):
        """Origin group / gender of given names and surnames (``surrogate/labels/name_origin.py``)."""
        if self._name_origin is None:
            self._name_origin = load_name_origin()
        return self._name_origin

    @property
    def families(self) -> Families:
        """Nicknames, diminutives, truncations (``surrogate/families.py``)."""
        if self._families is None:
            self._families = Families(self.name_origin.nick, self.name_origin)
        return self._families

    @property
    def _group_pools(self) -> dict[tuple, tuple[str, ...]]:
        """The group pools filled so far: shared by every replacer on the same name tables (the
        pools depend on the tables and the shipped lists only), so a process fills each once."""
        if self._pools is None:
            self._pools = _SHARED_POOLS.setdefault(self.tables, {})
        return self._pools

    def warm_up(self) -> None:
        """Fill the group pools of every name-origin group now (~0.2 s, ~1-2 MB): filtering a
        group's lists (up to ~3,600 names) costs 1-12 ms in the turn that first needs it, a stall
        every turn queued behind it waits for. Not the whole-name pools of Chinese / Korean (tens
        of thousands of combinations each: filled when a session needs one)."""
        _ = self.families  # the origin table and name families (issue #23)
        pools = self._group_pools
        if pools.get(_WARM) is not None:
            return
        o = self.origins
        self._classify_memo = {}
        try:
            regions = (None, _ALL, *self.tables.regions)
            for group in o.pools:
                for gender in ("F", "M", "N"):
                    for region in regions:
                        self._group_pool(group, "first", gender, "X", region)  # one letter: never a whole name
                for base in (("X", "Xa") if group in _GENDERED_SURNAMES else ("X",)):
                    for region in regions:
                        self._group_pool(group, "last", None, base, region)
        finally:
            self._classify_memo = None
        pools[_WARM] = ()

    def _traits(self, name: str) -> tuple[bool, str]:
        """(an everyday word: in ``common_words()`` or word-like in the tables, the tables' UN
        region or "") of a pool name. While ``warm_up`` runs: memoised (one shared tuple per
        distinct answer), and without filling ``fold``'s LRU cache (the ~30k pool names would
        hold ~4 MB of it for the life of the process)."""
        memo = self._classify_memo
        if memo is None:
            info = self.tables.classify(name) or _NO_INFO
            return fold(name) in common_words() or info.wordlike, info.region
        got = memo.get(name)
        if got is None:
            key = _fold_uncached(name)
            info = self.tables.classify_folded(key) or _NO_INFO
            got = (key in common_words() or info.wordlike, info.region)
            got = memo[name] = _TRAITS.setdefault(got, got)
        return got

    def _group_pool(self, group: str, role: str, gender: str | None, base: str, region: str | None = None) -> tuple[str, ...]:
        """Surrogate candidates of a name's language / country group: letters only, not everyday
        words; a whole name (surname + given name) for a one-token Chinese / Korean name. With the
        UN region the tables give the original, the group's names the tables put in that region
        when there are enough (the Spanish lists hold names of Spain and of the Americas)."""
        from .origin import UNSPACED

        whole = group in UNSPACED and role != "last" and len(base) >= 2
        key = (group, role if role == "last" else "first", gender, whole, region)
        pools = self._group_pools
        got = pools.get(key)
        if got is None:
            if region is not None and region is not _ALL:
                wide = self._group_pool(group, role, gender, base, _ALL)
                same = tuple(n for n in wide if self._traits(n)[1] == region)
                got = same if len(same) >= 20 else wide
            elif region is None and (group, key[1], gender, whole, _ALL) in pools:
                got = pools[(group, key[1], gender, whole, _ALL)]  # the same names: share the tuple
            else:
                o = self.origins
                raw = o.full_pool(group, gender) if whole else o.pool(group, "last" if role == "last" else "first", gender)
                got = tuple(n for n in raw if n.isalpha() and len(n) >= (2 if not n.isascii() else 3)
                            and not self._traits(n)[0])
            pools[key] = got
        if region is _ALL:
            return got
        if role == "last" and group in _GENDERED_SURNAMES:
            # "Иванов" / "Иванова", "Novák" / "Nováková": a surname keeps the grammatical gender of the original
            fem = _FEMININE_SURNAME.search(base) is not None
            gkey = (*key, fem)
            same = pools.get(gkey)
            if same is None:
                same = tuple(n for n in got if (_FEMININE_SURNAME.search(n) is not None) == fem)
                same = pools[gkey] = same if len(same) >= 20 else got
            return same
        return got

    # ---- Replacer protocol ---------------------------------------------------------------
    def new_state(self, session_id: str) -> SessionMapping:
        state = SessionMapping(session_id=session_id)
        if self.session_keys:
            import os

            state.key = os.urandom(32)
        return state

    def replace(
        self, text: str, spans: list[Span], state: SessionMapping, mode: str = "surrogate"
    ) -> tuple[str, list[EntityOut]]:
        spans = sorted(spans, key=lambda s: s.start)
        if any(a.end > b.start for a, b in zip(spans, spans[1:])):
            spans = resolve_overlaps(spans)
        if any(s.label in ("NAME", "ADDRESS") for s in spans):
            spans = trim_spans(text, spans, self.name_origin)  # no neighbouring word swallowed
        if mode == "redact":
            return self._tagger.replace(text, spans, state.tags, mode)
        if mode == "tag":  # one tag per person for names (surrogate/families.py)
            return apply_replacements(text, spans, [
                name_tag(self, text[s.start : s.end], state) if s.label == "NAME" else
                self._tag(text[s.start : s.end], s.label, state) for s in spans])
        if mode != "surrogate":
            raise ValueError(f"unknown output mode {mode!r}")
        pending = self._pending(text, spans)
        values = [
            self._surrogate(text[s.start : s.end], s.label, state, pending, text[max(0, s.start - 16) : s.start])
            for s in spans
        ]
        return apply_replacements(text, spans, values)

    def surrogate_for(self, value: str, label: str, state: SessionMapping, before: str = "") -> str:
        """The surrogate of one value (creating the mapping if new): the "mapping lookup"."""
        pending = self._pending(value, [Span(0, len(value), label, "lookup")]) if value else {}
        return self._surrogate(value, label, state, pending, before)

    def reidentify(self, text: str, state: SessionMapping) -> tuple[str, list[EntityOut]]:
        from .reverse import reidentify

        return reidentify(text, state)

    # ---- dispatch ------------------------------------------------------------------------
    def _surrogate(self, value: str, label: str, state: SessionMapping, pending: dict, before: str) -> str:
        if self.max_entries is not None and state.entries >= self.max_entries and not self._mapped(value, label, state):
            # bounded work and state: past the cap a new value is tagged, not stored
            state._capped += 1
            self.capped += 1
            return f"[{label}]"
        if label == "NAME":
            return self._map_name(value, state, pending, before)
        if label in self._value_gens:
            return self._map_value(label, value, state, pending)
        # Labels without a realistic generator (DATE, AGE, …): a session-numbered tag.
        return self._tag(value, label, state)

    def _mapped(self, value: str, label: str, state: SessionMapping) -> bool:
        if label == "NAME":
            toks = [fold(_strip_possessive(m.group())[0]) for m in _TOKEN.finditer(value)]
            return all(state.real_name_seen(k) for k in toks)
        if label in self._value_gens:
            return state.value(label, G.value_norm(label, value)) is not None
        return True  # tags are numbered, not stored as mappings

    def _tag(self, value: str, label: str, state: SessionMapping) -> str:
        # keyed by the value's normal form: "415-555-0134" and "+1 4155550134" are one [PHONE_1]
        key = G.value_norm(label, value) if label in self._value_gens else value
        tag = self._tagger.tag_for(key, label, state.tags)
        if tag not in state.tag_real:  # remembered so a reply quoting the tag can be re-identified
            state.tag_real[tag] = value
            state._generation += 1
        return tag

    def _pending(self, text: str, spans: list[Span]) -> dict[str, set[str]]:
        """Every real value of the turn, registered before any surrogate is chosen."""
        pending: dict[str, set[str]] = {"NAME": set()}
        pending["_near_src"] = (text, spans)  # type: ignore[assignment]  # words beside names: _near()
        for s in spans:
            v = text[s.start : s.end]
            if s.label == "NAME":
                for m in _TOKEN.finditer(v):
                    pending["NAME"].add(fold(_strip_possessive(m.group())[0]))
            else:
                pending.setdefault(s.label, set()).add(G.value_norm(s.label, v))
        return pending

    def _rng(self, state: SessionMapping, label: str, norm: str, counter: int = 0) -> KeyedRandom:
        # the session's own key when it has one (crypto-shredding), else the configured secret
        return KeyedRandom(derive(state.key or self._secret, state.session_id, label, norm, counter))

    # ---- names ---------------------------------------------------------------------------
    def _map_name(self, value: str, state: SessionMapping, pending: dict, before: str = "") -> str:
        toks = list(_TOKEN.finditer(value))
        if not toks:
            return value
        items: list[dict] = []
        for i, m in enumerate(toks):
            base, suf = _strip_possessive(m.group())
            f = fold(base).rstrip(".")
            nxt_is_name = i < len(toks) - 1
            if f in _TITLES_ALL and nxt_is_name and (i == 0 or items[-1]["type"] == "title"):
                kind = "title"
            elif i > 0 and f in SUFFIXES and all(fold(t.group()).rstrip(".") in SUFFIXES for t in toks[i:]) and (
                f not in ("ii", "iii", "iv") or base.isupper()
            ):
                kind = "suffix"
            elif len(base) == 1:
                kind = "initial"
            elif base.islower() and f in PARTICLES and 0 < i < len(toks) - 1:
                kind = "particle"
            else:
                kind = "name"
            items.append({"m": m, "base": base, "suf": suf, "type": kind, "fold": fold(base), "role": None})

        # Group hyphen-joined name tokens ("Mary-Jane", "Smith-Jones").
        groups: list[list[int]] = []
        for i, it in enumerate(items):
            if it["type"] != "name":
                continue
            if groups and groups[-1][-1] == i - 1 and value[items[i - 1]["m"].end() : it["m"].start()] in ("-", "‐"):
                groups[-1].append(i)
            else:
                groups.append([i])
        if not groups:
            # Only initials / titles: map the initials on their own.
            return self._render_name(value, items, state, None, None)

        title_last = any(it["type"] == "title" and it["fold"].rstrip(".") in TITLES_LAST for it in items) or bool(
            _TITLE_BEFORE.search(before)
        )
        comma_at = next(
            (
                gi
                for gi in range(1, len(groups))
                if "," in value[items[groups[gi - 1][-1]]["m"].end() : items[groups[gi][0]]["m"].start()]
            ),
            None,
        )
        roles: list[str] = []
        if comma_at is not None:  # "Lopez, Maria" / "Lopez Garcia, Maria Jose"
            roles = ["last"] * comma_at + ["first"] + ["middle"] * (len(groups) - comma_at - 1)
        elif len(groups) == 1:
            first_i = groups[0][0]
            init_before = any(it["type"] == "initial" for it in items[:first_i])
            init_after = any(it["type"] == "initial" for it in items[groups[0][-1] + 1 :])
            if title_last or init_before:
                roles = ["last"]
            elif init_after:
                roles = ["first"]
            else:
                roles = ["single"]
        else:
            roles = ["first"] + ["middle"] * (len(groups) - 2) + ["last"]
            if len(groups) == 2 and not title_last and self.name_origin.surname_first(
                    items[groups[0][-1]]["base"], items[groups[1][0]]["base"]):
                roles = ["last", "first"]  # "Zhang Wei": surname first (East-Asian order)
        for g, role in zip(groups, roles):
            for i in g:
                items[i]["role"] = role

        # Person context: gender/region of the first name, region of the last name.
        first_g = groups[roles.index("first")] if "first" in roles else None
        last_g = groups[roles.index("last")] if "last" in roles else None
        person_region = person_group = None
        if any(state.name_surrogate(it["base"]) is None for it in items if it["type"] == "name"):
            first_info = self.tables.classify(items[first_g[0]]["base"]) if first_g else None
            last_info = self.tables.classify(items[last_g[-1]]["base"]) if last_g else None
            person_region = (first_info.region if first_info else None) or (last_info.region if last_info else None)
            # the language / country group ("Jürgen Müller": German), finer than the UN region
            if first_g or last_g:
                person_group = self.origins.person_group(items[first_g[0]]["base"] if first_g else None,
                                                         items[last_g[-1]]["base"] if last_g else None)
            else:
                person_group = next((self.origins.group_of(it["base"]) for it in items if it["type"] == "name"), None)
            if person_group is not None:
                from .origin import HOME_REGIONS

                known = {i.region for i in (first_info, last_info) if i is not None}
                if not (first_g or last_g):
                    known = {i.region for it in items if it["type"] == "name" and (i := self.tables.classify(it["base"]))}
                if known and not known & HOME_REGIONS.get(person_group, known):
                    person_group = None  # the tables place the person's names elsewhere: the region decides

        first_key = items[first_g[0]]["fold"] if first_g else None
        last_key = items[last_g[-1]]["fold"] if last_g else None
        prefer: dict[int, str] = {}
        if first_key and last_key:
            # "J. Smith" seen before "John Smith": John's surrogate keeps the initial already shown.
            got = state.initials.get(f"{first_key[0]}|first|{_canon(state, last_key)}")
            if got:
                prefer[first_g[0]] = got[0]
            got = state.initials.get(f"{last_key[0]}|last|{_canon(state, first_key)}")
            if got:
                prefer[last_g[-1]] = got[0]
        hint = None
        if person_region is not None or person_group is not None or any(
                state.name_surrogate(it["base"]) is None for it in items if it["type"] == "name"):
            hint = person_hint(self.name_origin, items[first_g[0]]["base"] if first_g else None,
                               items[last_g[-1]]["base"] if last_g else None)
        for i, it in enumerate(items):
            if it["type"] == "name":
                if state.name_surrogate(it["base"]) is None:  # no famous full name with the person's other names
                    _near(pending).update(fold(x["sur"]) for x in items if "sur" in x)
                it["sur"] = self._name_token(it["base"], it["role"], person_region, state, pending, prefer.get(i),
                                             group=person_group, hint=hint)
        if first_key and last_key:
            state.add_person(_canon(state, first_key), _canon(state, last_key))
        return self._render_name(value, items, state, first_key, last_key)

    def _render_name(self, value: str, items: list[dict], state, first_key, last_key) -> str:
        out: list[str] = []
        pos = 0
        name_seen = False
        for it in items:
            m = it["m"]
            out.append(value[pos : m.start()])
            if it["type"] == "name":
                out.append(apply_case(it["base"], it["sur"]) + it["suf"])
                name_seen = True
            elif it["type"] == "initial":
                letter = self._initial(it["base"], state, first_key, last_key, before_names=not name_seen)
                out.append(letter + it["suf"])
            else:
                out.append(m.group())
            pos = m.end()
        out.append(value[pos:])
        return "".join(out)

    def _initial(self, letter: str, state: SessionMapping, first_key, last_key, before_names: bool) -> str:
        """An initial of a known person → the initial of their surrogate; else a keyed letter."""
        lo = fold(letter)
        if before_names and last_key is not None:
            lk = _canon(state, last_key)
            for f, l in state.people:
                if l == lk and f.startswith(lo) and f in state.names:
                    return apply_case(letter, state.names[f][0])
            ctx = "first|" + lk
        elif not before_names and first_key is not None and last_key is None:
            fk = _canon(state, first_key)
            for f, l in state.people:
                if f == fk and l.startswith(lo) and l in state.names:
                    return apply_case(letter, state.names[l][0])
            for f, l in state.people:  # "lopezm": a surname, then the given name's initial
                if l == fk and f.startswith(lo) and f in state.names:
                    return apply_case(letter, state.names[f][0])
            ctx = "last|" + fk
        else:
            ctx = "mid|" + _canon(state, first_key or "") + "|" + _canon(state, last_key or "")
        key = lo + "|" + ctx
        got = state.initials.get(key)
        if got is None:
            rng = self._rng(state, "INITIAL", key)
            got = rng.choice([c for c in "ABCDEFGHIJKLMNOPRSTVW" if c.lower() != lo])
            # surrogate letter + the real letter as written (accents kept for re-identification)
            state.initials[key] = got + letter.upper()
            state._generation += 1
        return apply_case(letter, got[0])

    def _name_token(
        self,
        base: str,
        role: str | None,
        person_region: str | None,
        state: SessionMapping,
        pending: dict,
        prefer_initial: str | None = None,
        group: str | None = None,
        hint: str | None = None,
    ) -> str:
        key = fold(base)
        canon = state.aliases.get(key, key)
        sur = state.names.get(canon)
        if sur is not None:
            state.note_display(canon, base)
            return sur
        alias = self._fuzzy(key, state)
        if alias is not None:
            state.add_alias(key, alias)
            return state.names[alias]
        fam = family_surrogate(self, key, base, role, state, pending.get("NAME", ()))  # Sam / Samantha
        if fam is not None:
            return fam
        info = self.tables.classify(base)
        if role in (None, "single"):
            role = single_role(self.name_origin, base, info)
        if role in ("first", "middle"):
            gender = info.gender if info is not None and info.gender in ("F", "M") else "N"
            region = info.region if info is not None and info.kind == "f" else person_region
            if info is not None and info.kind == "l":
                region = person_region or info.region
            pool = self.tables.first_pool(gender, region)
            wide = self.tables.any_first()
            if group is not None:
                g_gender = gender if gender != "N" else (self.origins.gender(group, base) or self.origins.gender(group, base[1:])
                                                         or "N")  # "王伟": the given name 伟 tells
                pool = _group_or(self._group_pool(group, role, g_gender, base, region), pool)
        else:
            region = info.region if info is not None else person_region
            pool = self.tables.last_pool(region)
            wide = self.tables.any_last()
            if group is not None:
                pool = _group_or(self._group_pool(group, "last", None, base, region), pool)
        # the token's names-dataset origin group and gender (surrogate/labels/names.py)
        pool = choose_pool(self.name_origin, pool, base, role, hint, group is not None, self.tables,
                           info.region if info else person_region)  # names-dataset origin group and gender
        pool = self.families.prefer(pool, key)
        real_now = pending.get("NAME", ())
        near = _near(pending)
        if prefer_initial:
            starts = tuple(n for n in pool if n[0] == prefer_initial.upper()) or tuple(
                n for n in wide if n[0] == prefer_initial.upper()
            )
            for counter in range(min(_MAX_TRIES, 2 * len(starts))):
                cand = self._rng(state, "NAME", key, counter).choice(starts)
                if self._name_free(cand, key, state, real_now, near):
                    state.add_name(key, base, cand)
                    return cand
        for counter in range(_MAX_TRIES * 2):
            rng = self._rng(state, "NAME", key, counter)
            cand = rng.choice(pool if counter < _MAX_TRIES else wide)
            if self._name_free(cand, key, state, real_now, near):
                state.add_name(key, base, cand)
                return cand
        # Pools exhausted for this session (hundreds of names): walk the wide pool.
        start = self._rng(state, "NAME", key, 10_000).below(len(wide))
        for j in range(len(wide)):
            cand = wide[(start + j) % len(wide)]
            if self._name_free(cand, key, state, real_now, near):
                state.add_name(key, base, cand)
                return cand
        n = 2
        while True:  # pragma: no cover - thousands of names in one session
            cand = wide[start] + "-" + wide[(start + n) % len(wide)]
            if self._name_free(cand, key, state, real_now, near):
                state.add_name(key, base, cand)
                return cand
            n += 1

    @staticmethod
    def _name_free(cand: str, key: str, state: SessionMapping, real_now, near=()) -> bool:
        ck = fold(cand)
        return not famous(cand, near) and not (
            ck == key
            or ck in real_now
            or state.real_name_seen(ck)
            or state.surrogate_name_used(ck)
            or damerau1(ck, key)
            or (len(key) >= 4 and ck[:4] == key[:4])
            # a surrogate that holds the real name ("Yuki" -> "Miyuki") or sits inside it gives it away
            or (len(key) >= 3 and len(ck) >= 3 and (key in ck or ck in key))
        )

    def _fuzzy(self, key: str, state: SessionMapping) -> str | None:
        if not self.fuzzy_names or len(key) < self.fuzzy_min_length:
            return None
        cands = [k for k in state.names if len(k) >= self.fuzzy_min_length and damerau1(k, key)]
        if len(cands) != 1:
            return None
        c = cands[0]
        if self.tables.known(key) and self.tables.known(c):
            return None
        return c

    # ---- handles (e-mail local parts, usernames, URL paths): name-aware shape keeping ------
    def _handle(self, s: str, state: SessionMapping, rng: KeyedRandom, pending: dict, keep_common: bool = False) -> str:
        runs = [m.group() for m in _RUN.finditer(s)]
        alpha = [i for i, r in enumerate(runs) if r[0].isalpha()]
        out: list[str] = []
        for i, run in enumerate(runs):
            if run[0].isdigit():
                out.append(_digits_like(run, rng))
            elif run[0].isalpha():
                if len(run) == 1:
                    # "j.smith", "smith_j": an initial; tied to the neighbouring name when known.
                    pos = alpha.index(i)
                    nxt = fold(runs[alpha[pos + 1]]) if pos + 1 < len(alpha) else None
                    prv = fold(runs[alpha[pos - 1]]) if pos > 0 else None
                    if nxt and len(nxt) > 1:
                        out.append(self._initial(run, state, None, nxt, before_names=True))
                    elif prv and len(prv) > 1:
                        out.append(self._initial(run, state, prv, None, before_names=False))
                    else:
                        out.append(apply_case(run, rng.lower()))
                    continue
                out.append("".join(self._alpha_part(p, state, rng, pending, keep_common) for p in split_camel(run)))
            else:
                out.append(run)
        return "".join(out)

    def _alpha_part(self, part: str, state: SessionMapping, rng: KeyedRandom, pending: dict, keep_common: bool) -> str:
        f = fold(part)
        if keep_common and (f in G.PATH_WORDS or f in common_words()):
            return part
        if len(part) == 1:  # "CarlESteffensen": a middle initial
            return apply_case(part, rng.upper())
        seg = self._segment(f, state)
        if seg is not None:
            return apply_case(part, self._render_segments(seg, part, state, pending))
        word = _word_like(len(part), rng)
        for _ in range(8):  # never hand the original word back ("penguin" → "penguin")
            if word != f and word not in f and f not in word:
                break
            word = _word_like(len(part), rng)
        return apply_case(part, word)

    def _segment(self, f: str, state: SessionMapping) -> list[tuple[str, str]] | None:
        """Split a lower-case run into name pieces: ("name", key) / ("init", letter). None if not names."""
        def session(k: str) -> bool:
            return len(k) >= 2 and (k in state.names or k in state.aliases)

        common = common_words()

        def table(k: str, min_len: int) -> bool:
            return len(k) >= min_len and k not in common and self.tables.known_top(k)

        if session(f) or table(f, 3):
            return [("name", f)]
        best: tuple[int, list[tuple[str, str]]] | None = None
        for i in range(1, len(f)):
            a, b = f[:i], f[i:]
            score = 0
            pieces: list[tuple[str, str]] = []
            ok = True
            for piece, other in ((a, b), (b, a)):
                if len(piece) == 1:
                    # An initial only next to a name the session already knows ("jsmith" after
                    # "John Smith"); "smith" + "h" from the tables alone would be a guess.
                    if len(other) == 1 or not session(other):
                        ok = False
                        break
                    pieces.append(("init", piece))
                    score += 2
                elif session(piece):
                    pieces.append(("name", piece))
                elif table(piece, 4):
                    pieces.append(("name", piece))
                    score += 1
                else:
                    ok = False
                    break
            if ok and (best is None or score < best[0]):
                best = (score, pieces)
        return best[1] if best else None

    def _render_segments(self, seg: list[tuple[str, str]], part: str, state: SessionMapping, pending: dict) -> str:
        names = [k for t, k in seg if t == "name"]
        if len(seg) == 1:
            return self._name_token(names[0], None, None, state, pending)
        out: list[str] = []
        if len(names) == 2:
            first, last = names
            s1 = self._name_token(first, "first", None, state, pending)
            s2 = self._name_token(last, "last", None, state, pending)
            state.add_person(_canon(state, first), _canon(state, last))
            return s1 + s2
        # initial + name or name + initial
        (t0, k0), (t1, k1) = seg
        if t0 == "init":
            s = self._name_token(k1, "last", None, state, pending)
            out = [self._initial(k0, state, None, k1, before_names=True), s]
        else:
            s = self._name_token(k0, "first", None, state, pending)
            out = [s, self._initial(k1, state, k0, None, before_names=False)]
        return "".join(out)

    # ---- other labels --------------------------------------------------------------------
    def _map_value(self, label: str, value: str, state: SessionMapping, pending: dict) -> str:
        norm = G.value_norm(label, value)
        entry = state.value(label, norm)
        if entry is not None:
            return _render_value(label, value, entry)
        gen = self._value_gens[label]
        reals = pending.get(label, set())
        known = state.values.get(label, {})
        sur = aux = ""
        for counter in range(_MAX_TRIES):
            rng = self._rng(state, label, norm, counter)
            sur, aux = gen(value, rng, state, pending)
            sn = G.value_norm(label, sur)
            if sn != norm and sn not in reals and sn not in known and not state.surrogate_value_used(label, sn):
                break
        else:
            # Tiny surrogate space (e.g. a 2-digit house number): keep classes, widen with the counter.
            for counter in range(_MAX_TRIES, _MAX_TRIES * 100):
                sur, aux = G.gen_id(value, self._rng(state, label, norm, counter))
                sn = G.value_norm(label, sur)
                if sn != norm and sn not in reals and sn not in known and not state.surrogate_value_used(label, sn):
                    break
            if label == "PHONE":
                p = G.parse_phone(sur)
                aux = f"{p.nsn}|{p.ext}"
        state.add_value(label, norm, ValueEntry(value, sur, aux), G.value_norm(label, sur))
        return sur

    def _domain(self, domain: str, state: SessionMapping, pending: dict) -> str:
        d = domain.casefold()
        if G.is_free_mail(d):
            return domain
        e = state.value("_DOMAIN", d)
        if e is not None:
            return e.surrogate
        new = domain
        subs, body, suffix = G.split_domain(domain)
        # Labels of the original that must not reappear ("acme" in acme.co.uk), and the reserved
        # base it may already use (a test address at example.net must not keep "example.net").
        own = {lbl.casefold() for lbl in body if len(lbl) >= 3 and lbl.casefold() != "example"}
        for counter in range(_MAX_TRIES):
            rng = self._rng(state, "_DOMAIN", d, counter)
            if G.is_edu_domain(d):
                new = G.edu_domain(domain, rng)
            else:
                new_body = [self._handle(lbl, state, rng, pending) for lbl in body]
                new = ".".join([*subs, *new_body, G.reserved_base(d, G.generic_tld(suffix))])
            nd = new.casefold()
            if (
                nd != d
                and not state.surrogate_value_used("_DOMAIN", nd)
                and not any(lbl in nd for lbl in own)
                and not G.shares_reserved_base(d, nd)
            ):
                break
        state.add_value("_DOMAIN", d, ValueEntry(domain, new, ""), new.casefold())
        return new

    def _gen_email(self, value: str, rng: KeyedRandom, state: SessionMapping, pending: dict) -> tuple[str, str]:
        style = G.email_style(value)
        if style is not None:  # "jayden dot brooks at gmail dot com" -> "<name> dot <surname> at gmail dot com"
            plain, _ = self._gen_email(style.plain, rng, state, pending)
            lead = value[: len(value) - len(value.lstrip())]
            return lead + style.render(plain) + value[len(value.rstrip()) :], plain
        local, at, domain = value.strip().rpartition("@")
        if not at or not local:
            return self._handle(value, state, rng, pending), ""
        return f"{self._name_local(local, state, pending) or self._handle(local, state, rng, pending)}@" \
               f"{self._domain(domain, state, pending)}", ""

    def _name_local(self, local: str, state: SessionMapping, pending: dict) -> str | None:
        """"jayden.brooks", "Maria_Lopez": a local part that is a person's names joined by separators
        becomes that person's surrogate names joined the same way (the same person as in the chat)."""
        pieces = re.split(r"([._-]+)", local)
        names, seps = pieces[::2], pieces[1::2]
        if len(names) < 2 or len(names) > 3:
            return None
        common = common_words()
        for n in names:
            if not re.fullmatch(r"[^\W\d_]{2,}", n) or fold(n) in common or not self.tables.known(n):
                return None
        sur = self._map_name(" ".join(names), state, pending, "").split()
        if len(sur) != len(names):
            return None
        return "".join(a + b for a, b in zip(sur, [*seps, ""]))

    def _gen_username(self, value: str, rng: KeyedRandom, state: SessionMapping, pending: dict) -> tuple[str, str]:
        lead = "@" if value.startswith("@") else ""
        core = self._handle(value[len(lead) :], state, rng, pending)
        return lead + core, core

    def _gen_url(self, value: str, rng: KeyedRandom, state: SessionMapping, pending: dict) -> tuple[str, str]:
        parts = G.split_url(value)
        if parts is None:
            new = self._handle(value, state, rng, pending, keep_common=True)
            return new, new.rstrip("/")
        host = parts["host"]
        h = host.casefold()
        platform = next((p for p in G.PLATFORMS if h == p or h.endswith("." + p)), None)
        if platform is not None:
            prefix = host[: len(host) - len(platform)]  # "maria." in maria.blogspot.com
            new_host = (self._handle(prefix, state, rng, pending) if prefix else "") + host[len(prefix) :]
        else:
            new_host = self._domain(host, state, pending)
        path = parts["path"]
        new_path = "/".join(self._path_segment(seg, state, rng, pending) for seg in path.split("/")) if path else ""
        query = parts["query"]
        new_query = ""
        if query:
            pairs = []
            for kv in query[1:].split("&"):
                k, eq, v = kv.partition("=")
                pairs.append(k + eq + (self._handle(v, state, rng, pending, keep_common=True) if v else ""))
            new_query = "?" + "&".join(pairs)
        frag = parts["frag"]
        new_frag = "#" + self._handle(frag[1:], state, rng, pending, keep_common=True) if frag else ""
        core = new_host + parts["port"] + new_path + new_query + new_frag
        return parts["scheme"] + parts["www"] + core, core.rstrip("/")

    def _path_segment(self, seg: str, state, rng, pending) -> str:
        if not seg:
            return seg
        stem, dot, ext = seg.rpartition(".")
        if dot and stem and ext.isalnum() and len(ext) <= 5:
            return self._handle(stem, state, rng, pending, keep_common=True) + "." + ext
        return self._handle(seg, state, rng, pending, keep_common=True)


# ---- helpers ------------------------------------------------------------------------------

_NO_INFO = NameInfo("N", "", "f")
_ALL = "*"  # _group_pool: the group's whole pool, before the surname-gender choice
_WARM = ("warm",)  # in the shared pools: warm_up has filled them
_fold_uncached = fold.__wrapped__
_TRAITS: dict[tuple[bool, str], tuple[bool, str]] = {}
#: name tables -> their group pools (see SurrogateReplacer._group_pools)
_SHARED_POOLS: "weakref.WeakKeyDictionary[NameTables, dict[tuple, tuple[str, ...]]]" = weakref.WeakKeyDictionary()
#: Groups whose surnames change with gender, and the feminine endings ("-ова", "-ová", "-ska").
_GENDERED_SURNAMES = frozenset({"Russian", "Ukrainian", "Bulgarian", "Czech-Slovak", "Polish", "Baltic"})
_FEMININE_SURNAME = re.compile(r"(?:[аяa]|ová|ská|cká|ska|cka|dzka|ienė|aitė|ytė|ūtė|ova|eva)$", re.IGNORECASE)


def _near(pending: dict) -> set[str]:
    """The words beside the turn's names (labels/famous.py), found when a new name first needs them."""
    near = pending.get("_near")
    if near is None:
        near = pending["_near"] = set()
        text, spans = pending.get("_near_src") or ("", ())
        for s in spans:
            if s.label == "NAME":
                near.update(neighbours(text, s.start, s.end))
    return near


def _group_or(group_pool: tuple[str, ...], pool: tuple[str, ...]) -> tuple[str, ...]:
    """The group's pool when it is large enough to choose from, else the region's."""
    return group_pool if len(group_pool) >= 20 else pool

_DEV_SECRET = "plainsight-dev-secret-change-me"
_WARNED: set[str] = set()
_PROCESS_SECRET: list[bytes] = []


def _process_secret() -> bytes:
    """One random secret per process (every replacer of the process agrees)."""
    if not _PROCESS_SECRET:
        _PROCESS_SECRET.append(os.urandom(32))
    return _PROCESS_SECRET[0]


def _info_once(msg: str) -> None:
    if msg not in _WARNED:
        _WARNED.add(msg)
        log.info(msg)


def _configured_shapes(settings) -> dict[str, Callable[[str], bool] | None]:
    """label → what its surrogate must fit, for labels of configured recognizers asking for a
    format-preserving surrogate (``surrogate: shape``, the default; ``tag`` keeps ``[LABEL_n]``)."""
    from plainsight.middleware.pipeline import detection_registry

    reg = detection_registry(settings)
    out: dict[str, Callable[[str], bool] | None] = {}
    for label in reg.added_labels:
        info = reg.label_info(label)
        if info is not None and info.surrogate == "shape":
            out[label] = info.shape.fits if info.shape is not None else None
    return out


def _warn_once(msg: str) -> None:
    if msg not in _WARNED:
        _WARNED.add(msg)
        log.warning(msg)


def _strip_possessive(tok: str) -> tuple[str, str]:
    if len(tok) > 3 and tok[-2:] in _POSSESSIVE:
        return tok[:-2], tok[-2:]
    return tok, ""


def _canon(state: SessionMapping, key: str) -> str:
    return state.aliases.get(key, key)


def _digits_like(run: str, rng: KeyedRandom) -> str:
    if len(run) == 4 and run[:2] in ("19", "20"):
        return run[:2] + rng.digits(2)
    return rng.digits(len(run))


def _word_like(length: int, rng: KeyedRandom) -> str:
    if length <= 8:
        return rng.choice(words_near(length))
    a = rng.choice(words_near(length // 2))
    return a + rng.choice(words_near(length - len(a)))


def _render_value(label: str, mention: str, e: ValueEntry) -> str:
    """The stored surrogate, in the surface form of this mention of the same value."""
    if mention == e.real:
        return e.surrogate
    out: str | None = None
    if label == "PHONE":
        nsn, _, ext = e.aux.partition("|")
        out = G.render_phone(mention, nsn, ext)
    elif label == "ID_NUM":
        out = G.render_id(mention, e.aux)
        if out is not None and case_pattern(mention) in ("lower", "upper"):
            out = apply_case(mention, out)
    elif label == "URL":
        parts = G.split_url(mention)
        if parts is not None and e.aux:
            out = parts["scheme"] + parts["www"] + e.aux + ("/" if mention.rstrip().endswith("/") else "")
    elif label == "USERNAME":
        core = e.aux or e.surrogate.lstrip("@")
        if case_pattern(mention.lstrip("@")) in ("lower", "upper"):
            core = apply_case(mention.lstrip("@"), core)
        out = ("@" if mention.startswith("@") else "") + core
    elif label == "EMAIL":
        style = G.email_style(mention)
        plain = e.aux or (e.surrogate if G.email_style(e.surrogate) is None else "")
        if plain:  # the same address written another way ("maria dot lopez at ..." / "maria.lopez@...")
            out = style.render(plain) if style is not None else plain
        if case_pattern(mention) in ("lower", "upper"):
            out = apply_case(mention, out if out is not None else e.surrogate)
    return out if out is not None else e.surrogate
