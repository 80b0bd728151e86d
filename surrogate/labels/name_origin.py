"""Origin group and gender of a given name and of a surname, from names-dataset's per-country ranks.

``surrogate/data/name_origin.json.gz`` (built by ``scripts/build_name_origin_tables.py``; never
names-dataset at run time) groups names-dataset's 105 countries into origin groups that share a
naming tradition (Anglo, Hispanic, Lusophone, French, Germanic, Nordic, Southern / Eastern European,
Turkic-Persian, Arabic, Israeli, South / East / Southeast Asian, Sub-Saharan African, Pacific). A
token's group *as a given name* and *as a surname* are read separately (the group of the country
where it ranks best, unless most of its bearers live elsewhere), with the given name's gender.

A token in a non-Latin script belongs to its script's group (Han / kana / Hangul: East Asian,
Cyrillic: Eastern European, Arabic script: Arabic, or Turkic-Persian for a Persian name, Hebrew:
Israeli, Devanagari: South Asian, Thai: Southeast Asian, Greek: Southern European); its surrogate
stays in its script (``surrogate/origin.py``'s Faker lists).

Used by the replacer to pick a surrogate of the same group, gender and role, to keep East-Asian
order ("Zhang Wei": surname first), and by ``plainsight eval`` for the origin-fidelity figure.
"""

from __future__ import annotations


from ..names import data_path, fold, load_once, read_table

#: origin groups of the non-Latin scripts of ``surrogate/origin.py`` (Faker groups)
SCRIPT_GROUP = {
    "Chinese": "East Asian", "Japanese": "East Asian", "Korean": "East Asian",
    "Russian": "Eastern European", "Ukrainian": "Eastern European", "Bulgarian": "Eastern European",
    "Greek": "Southern European", "Arabic": "Arabic", "Persian": "Turkic-Persian", "Hebrew": "Israeli",
    "Hindi": "South Asian", "Thai": "Southeast Asian",
}
#: groups whose names are usually written surname first
SURNAME_FIRST = frozenset({"East Asian"})
#: a pool is used when it has at least this many names
MIN_POOL = 12


class NameOrigin:
    def __init__(self, data: dict) -> None:
        self.groups: list[str] = list(data["groups"])
        self.source: str = data.get("source", "")
        codes: dict[str, str] = {}  # one string per distinct code (a few hundred), not per name
        self._names: dict[str, str] = {k: codes.setdefault(v, v) for k, v in data.pop("names").items()}
        self._letter = {chr(ord("a") + i): g for i, g in enumerate(self.groups)}
        self.pools: dict[str, dict[str, tuple[str, ...]]] = {
            g: {k: tuple(v) for k, v in p.items()} for g, p in data["pools"].items()
        }
        self.nick: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in data.get("nick", {}).items()}

    def _code(self, token: str) -> str | None:
        return self._names.get(fold(token))

    def given(self, token: str) -> tuple[str, str] | None:
        """(group, gender "F"/"M"/"N") of the token as a given name, or None."""
        c = self._code(token)
        if c is None or c[0] == "-":
            return None
        return self._letter[c[0]], c[1]

    def surname(self, token: str) -> str | None:
        c = self._code(token)
        if c is None or c[2] == "-":
            return None
        return self._letter[c[2]]

    def mostly_surname(self, token: str) -> bool:
        c = self._code(token)
        return c is not None and c[3] == "l"

    def known(self, token: str) -> bool:
        return fold(token) in self._names

    def best_group(self, token: str, role: str) -> str | None:
        """The token's group in its role ("first"/"middle"/"single" → given name first; "last" →
        surname first), falling back to the other role."""
        if role == "last":
            g = self.surname(token)
            return g if g is not None else (self.given(token) or (None,))[0]
        got = self.given(token)
        return got[0] if got is not None else self.surname(token)

    def gender(self, token: str) -> str | None:
        got = self.given(token)
        return got[1] if got is not None and got[1] in ("F", "M") else None

    def pool(self, group: str, role: str, gender: str | None) -> tuple[str, ...]:
        p = self.pools.get(group)
        if p is None:
            return ()
        if role == "last":
            return p["L"] if len(p["L"]) >= MIN_POOL else ()
        if gender in ("F", "M"):
            return p[gender] if len(p[gender]) >= MIN_POOL else ()
        n = p["N"]
        return n if len(n) >= MIN_POOL else _interleave(p["F"], p["M"])

    def surname_first(self, first: str, second: str) -> bool:
        """"Zhang Wei": the first token is a surname of a surname-first group and the second a
        given name (or unknown) — East-Asian order."""
        g = self.surname(first)
        if g not in SURNAME_FIRST or not self.mostly_surname(first):
            return False
        got = self.given(second)
        if got is None:
            return self.surname(second) is None or not self.mostly_surname(second)
        return got[0] in SURNAME_FIRST and not self.mostly_surname(second)


def _interleave(a, b) -> tuple[str, ...]:
    out: list[str] = []
    for i in range(max(len(a), len(b))):
        out.extend(x[i] for x in (a, b) if i < len(x))
    return tuple(out)


@load_once
def load_name_origin() -> NameOrigin:
    """The shipped table, loaded once per process (~0.15 s)."""
    return NameOrigin(read_table(data_path("name_origin.json.gz")))
