"""Apparent origin of a name at the level of a language / country group, and surrogate pools for it.

The shipped tables (``names.py``) classify a name into one of five UN regions, which puts
"Jürgen Müller" and "Sofía Hernández" both in "Europe" and can answer "Jorge Horvat". A finer
group is read from the per-locale name lists of Faker (already a dependency, for addresses):

* a name in a non-Latin script belongs to its script's group (Cyrillic → Russian, or Ukrainian /
  Bulgarian when it is in those lists; Han → Chinese, or Japanese with kana or when it is a
  Japanese name; Hangul → Korean; Greek, Arabic (Persian when listed), Hebrew, Devanagari, Thai);
* a name in Latin letters is a candidate of every group whose lists hold it as written
  (accents count); a person's group is the one group their first and last names share ("Jürgen"
  is in the German and Dutch lists, "Müller" in the German, French and Czech ones: German), else
  the one group of their last name, else of their first name; ties are broken by letters a group
  uses (ü, ß: German; ñ, á: Spanish; ł: Polish; ø: Nordic; ...). Names in the English lists say
  nothing alone, and a person with no group keeps the tables' UN region, as before.

Every token of a person with a group draws from that group's pools (first names by gender, last
names), preferring the names only that group lists and no English list holds, so "Jürgen Müller"
becomes a German-looking name and "Sofía Hernández" a Spanish-looking one. The lists are Faker's,
copied into ``surrogate/data/origins.json.gz`` by ``scripts/build_origin_tables.py`` (so a Faker
upgrade does not change surrogates); the pools are filtered by the caller.
"""

from __future__ import annotations

import re
import unicodedata

from .names import data_path, load_once, read_table

#: group -> Faker locales whose person lists define it
GROUPS: dict[str, tuple[str, ...]] = {
    "German": ("de_DE", "de_AT", "de_CH"),
    "Spanish": ("es_ES", "es_MX", "es_AR", "es_CO", "es_CL", "es_CA"),
    "Portuguese": ("pt_BR", "pt_PT"),
    "French": ("fr_FR", "fr_CA", "fr_CH", "fr_QC"),
    "Italian": ("it_IT",),
    "Dutch": ("nl_NL", "nl_BE"),
    "Nordic": ("sv_SE", "no_NO", "da_DK", "is_IS"),
    "Finnish": ("fi_FI",),
    "Polish": ("pl_PL",),
    "Czech-Slovak": ("cs_CZ", "sk_SK"),
    "Hungarian": ("hu_HU",),
    "Romanian": ("ro_RO",),
    "Turkish": ("tr_TR",),
    "South Slavic": ("hr_HR", "sl_SI"),
    "Baltic": ("lt_LT", "lv_LV", "et_EE"),
    "Irish": ("ga_IE",),
    "Nigerian": ("yo_NG", "ig_NG", "ha_NG", "en_NG"),
    "Southern African": ("zu_ZA",),
    "Swahili": ("sw",),
    "Indian": ("en_IN",),
    "Vietnamese": ("vi_VN",),
    "Indonesian": ("id_ID",),
    # non-Latin scripts
    "Russian": ("ru_RU",),
    "Ukrainian": ("uk_UA",),
    "Bulgarian": ("bg_BG",),
    "Greek": ("el_GR",),
    "Chinese": ("zh_CN", "zh_TW"),
    "Japanese": ("ja_JP",),
    "Korean": ("ko_KR",),
    "Arabic": ("ar_AA", "ar_SA", "ar_PS", "ar_DZ"),
    "Persian": ("fa_IR",),
    "Hebrew": ("he_IL",),
    "Hindi": ("hi_IN",),
    "Thai": ("th_TH",),
}
#: UN regions (of the shipped tables) where each group's names are at home: a group is used only
#: when the tables place the original name in one of them (or do not know it).
HOME_REGIONS: dict[str, frozenset[str]] = {
    **{g: frozenset({"Europe"}) for g in (
        "German", "French", "Italian", "Dutch", "Nordic", "Finnish", "Polish", "Czech-Slovak", "Hungarian",
        "Romanian", "South Slavic", "Baltic", "Irish", "Russian", "Ukrainian", "Bulgarian", "Greek")},
    "Spanish": frozenset({"Europe", "Americas"}),
    "Portuguese": frozenset({"Europe", "Americas"}),
    "Turkish": frozenset({"Asia", "Europe"}),
    **{g: frozenset({"Africa"}) for g in ("Nigerian", "Southern African", "Swahili")},
    **{g: frozenset({"Asia"}) for g in (
        "Indian", "Vietnamese", "Indonesian", "Chinese", "Japanese", "Korean", "Persian", "Hebrew", "Hindi", "Thai")},
    "Arabic": frozenset({"Asia", "Africa"}),
}

#: Lists whose names are too widespread to say anything about origin.
ENGLISH_LOCALES = ("en_US", "en_GB", "en_NZ", "en_IE", "en_CA", "en_PH", "en_KE", "en_PK", "en_TH", "en_AU")

_SCRIPTS = (
    (re.compile(r"[\u3040-\u30ff]"), "Japanese"),
    (re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]"), "Chinese"),
    (re.compile(r"[\uac00-\ud7af]"), "Korean"),
    (re.compile(r"[\u0400-\u04ff]"), "Russian"),
    (re.compile(r"[\u0370-\u03ff\u1f00-\u1fff]"), "Greek"),
    (re.compile(r"[\u0600-\u06ff\u0750-\u077f]"), "Arabic"),
    (re.compile(r"[\u05d0-\u05ea]"), "Hebrew"),
    (re.compile(r"[\u0900-\u097f]"), "Hindi"),
    (re.compile(r"[\u0e00-\u0e7f]"), "Thai"),
)
#: Letters that point to groups (tie-breaks between the groups whose lists hold a name).
_LETTERS: dict[str, str] = {
    "German": "äöüß", "Spanish": "ñáéíóú", "Portuguese": "ãõçâêôáéíóú", "French": "éèêëàâçîïôûù",
    "Nordic": "øæåäö", "Finnish": "äö", "Polish": "łśźżńąęó", "Czech-Slovak": "řěůčšžýáíéú",
    "Hungarian": "őűáéíóöü", "Turkish": "şğıçöü", "Romanian": "țșăâî", "South Slavic": "čćšžđ",
    "Baltic": "āēīūčšžėįųõäö", "Irish": "áéíóú", "Vietnamese": "ơưđạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ",
}
#: Unspaced scripts: one token is a whole name (surname first), e.g. "王伟", "김민수".
UNSPACED = frozenset({"Chinese", "Korean"})
#: A pool of names only the group lists is used when it has at least this many names.
_MIN_OWN = 20


def _fold(s: str) -> str:
    nfkd = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in nfkd if not unicodedata.combining(ch)).casefold()


class Origins:
    def __init__(self, data: dict) -> None:
        # Compact on purpose (a worker holds this for its lifetime, and a larger heap costs every
        # garbage collection): one string object per distinct name or key, and one frozenset per
        # distinct set of groups (~700 of them, shared by ~53k keys) instead of a set per key.
        strings: dict[str, str] = {}
        one = strings.setdefault
        self.faker_version: str = data.get("faker", "")
        self.english = frozenset(one(c, c) for c in (n.casefold() for n in data["english"]))
        sets: dict[frozenset[str], frozenset[str]] = {}
        none: frozenset[str] = frozenset()

        def add(table: dict[str, frozenset[str]], key: str, group: str) -> None:
            have = table.get(key, none)
            if group not in have:
                grown = have | {group}
                table[key] = sets.setdefault(grown, grown)

        self._exact: dict[str, frozenset[str]] = {}
        self._folded: dict[str, frozenset[str]] = {}
        #: group -> casefolded first name -> "F" / "M" (the first list that holds it)
        self._gender: dict[str, dict[str, str]] = {}
        raw: dict[str, dict[str, list[str]]] = data["groups"]
        for group, p in raw.items():
            genders = self._gender.setdefault(group, {})
            for kind in ("F", "M"):
                for x in p[kind]:
                    c = x.casefold()
                    genders.setdefault(one(c, c), kind)
            for x in (*p["F"], *p["M"], *p["N"], *p["L"]):
                c = x.casefold()
                add(self._exact, one(c, c), group)
                if not x.isascii():  # an ASCII name folds to itself: found by _exact already
                    f = _fold(x)
                    add(self._folded, one(f, f), group)
        self.pools: dict[str, dict[str, tuple[str, ...]]] = {}
        for group, p in raw.items():
            out: dict[str, tuple[str, ...]] = {}
            for kind in ("F", "M", "N", "L"):
                names = p[kind] if kind != "N" else (p["N"] or _interleave(p["F"], p["M"]))
                own = tuple(x for x in names if self._exact.get(x.casefold()) == {group} and x.casefold() not in self.english)
                out[kind] = tuple(one(x, x) for x in (
                    own if len(own) >= _MIN_OWN else tuple(x for x in names if x.casefold() not in self.english)))
            self.pools[group] = out

    # ---- classification ----------------------------------------------------------------------
    def candidates(self, token: str) -> set[str]:
        """Groups whose lists hold this token (its script's group for a non-Latin script)."""
        t = token.strip(".'’")
        if not t:
            return set()
        for rx, group in _SCRIPTS:
            if rx.search(t):
                listed = self._exact.get(t.casefold(), set())
                if group == "Russian":
                    gs = listed & {"Ukrainian", "Bulgarian", "Russian"}
                    return {next(iter(gs))} if len(gs) == 1 else {"Russian"}
                if group == "Chinese" and "Japanese" in listed:
                    return {"Japanese"}
                if group == "Arabic" and listed == {"Persian"}:
                    return {"Persian"}
                return {group}
        gs = set(self._exact.get(t.casefold(), ()))
        if t.isascii():  # "Jurgen" typed without the umlaut
            gs |= self._folded.get(t.casefold(), set()) if not gs else set()
        if not gs:
            gs = {g for g, letters in _LETTERS.items() if any(c in letters for c in t.casefold())}
            if len(gs) != 1:
                return set()
        return gs

    def group_of(self, token: str) -> str | None:
        """The group of one token alone: when only one group lists it (and no English list)."""
        gs = self.candidates(token)
        if len(gs) == 1 and token.strip(".'’").casefold() not in self.english:
            return next(iter(gs))
        return None

    def person_group(self, first: str | None, last: str | None) -> str | None:
        """A person's group from their first and last names (see the module docstring)."""
        a = self.candidates(first) if first else set()
        b = self.candidates(last) if last else set()
        if first and first.casefold() in self.english and len(a) > 1:
            a = set()  # "Maria", "Diego": a widespread name says nothing alone
        if last and last.casefold() in self.english and len(b) > 1:
            b = set()
        both = a & b
        for cands in (both, b, a):
            if len(cands) == 1:
                return next(iter(cands))
            if len(cands) > 1:
                g = self._by_letters(cands, (first or "") + (last or ""))
                if g is not None:
                    return g
                if cands is both:
                    return None  # several groups share both names: no decision
        return None

    @staticmethod
    def _by_letters(cands: set[str], text: str) -> str | None:
        low = text.casefold()
        scores = {g: sum(c in _LETTERS.get(g, "") for c in low if not c.isascii()) for g in cands}
        best = max(scores.values(), default=0)
        top = [g for g, v in scores.items() if v == best]
        return top[0] if best > 0 and len(top) == 1 else None

    def gender(self, group: str, token: str) -> str | None:
        genders = self._gender.get(group)
        return genders.get(token.casefold()) if genders is not None else None

    # ---- generation ---------------------------------------------------------------------------
    def pool(self, group: str, role: str, gender: str | None) -> tuple[str, ...]:
        """Candidates for a ``role`` ("first" / "middle" / "last") name of ``group``."""
        p = self.pools.get(group)
        if p is None:
            return ()
        if role == "last":
            return p["L"]
        if gender in ("F", "M") and p[gender]:
            return p[gender]
        return p["N"] or _interleave(p["F"], p["M"])

    def full_pool(self, group: str, gender: str | None, size: int = 60) -> tuple[str, ...]:
        """Whole names written as one token (surname + given name), for the unspaced scripts."""
        p = self.pools.get(group)
        if p is None or not p["L"]:
            return ()
        given = self.pool(group, "first", gender)
        return tuple(s + g for s in p["L"][:size] for g in given)


def _interleave(a, b) -> tuple[str, ...]:
    out: list[str] = []
    seen: set[str] = set()
    for i in range(max(len(a), len(b))):
        for lst in (a, b):
            if i < len(lst) and lst[i].casefold() not in seen:
                seen.add(lst[i].casefold())
                out.append(lst[i])
    return tuple(out)


@load_once
def load_origins() -> Origins:
    """The shipped lists, loaded once per process."""
    return Origins(read_table(data_path("origins.json.gz")))
