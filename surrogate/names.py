"""The shipped name tables (``surrogate/data/names.json.gz``): classify a real name, pick a surrogate.

Built by ``scripts/build_surrogate_tables.py`` from names-dataset (the 1.9 GB dataset is never
loaded at runtime). Regions are the five UN M49 regions; see ``surrogate/data/README.md``.

* :meth:`NameTables.classify` → ``NameInfo(gender, region, kind)`` for a first/last name token, or
  None when the token is not in the tables (unknown names fall back to region-agnostic pools).
* :meth:`NameTables.first_pool` / :meth:`last_pool` → candidate surrogates for a (gender, region).
"""

from __future__ import annotations

import functools
import gzip
import json
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

GENDERS = ("F", "M", "N")


@lru_cache(maxsize=65536)
def fold(s: str) -> str:
    """Accent-stripped, case-folded form used as a name's identity (José ≡ jose ≡ JOSE)."""
    nfkd = unicodedata.normalize("NFKD", s)
    return "".join(ch for ch in nfkd if not unicodedata.combining(ch)).casefold()


@dataclass(frozen=True, slots=True)
class NameInfo:
    #: "F", "M" or "N" (unisex / unknown); "-" when the token is only known as a last name.
    gender: str
    region: str
    #: "f": more common as a first name; "l": as a last name.
    kind: str
    #: Ranks within the top 200 of some country (a common name) and is not an English word.
    top: bool = False
    #: Also an everyday English word ("Joy", "Cool", "Miller").
    wordlike: bool = False


class NameTables:
    def __init__(self, data: dict) -> None:
        self.version: int = int(data["version"])
        self.regions: list[str] = list(data["regions"])
        self._classify: dict[str, str] = data["classify"]
        self._first: dict[str, dict[str, tuple[str, ...]]] = {
            r: {g: tuple(v) for g, v in pools.items()} for r, pools in data["first"].items()
        }
        self._last: dict[str, tuple[str, ...]] = {r: tuple(v) for r, v in data["last"].items()}
        # Region-agnostic pools: the regions' pools interleaved (unknown names, exhausted pools).
        self._first_any = {g: _interleave([self._first[r].get(g, ()) for r in self.regions]) for g in GENDERS}
        self._last_any = _interleave([self._last[r] for r in self.regions])
        self._all_first = _interleave([self._first_any[g] for g in GENDERS])
        self.surrogate_forms: frozenset[str] = frozenset(
            fold(n) for pool in (self._all_first, self._last_any) for n in pool
        )

    # ---- classification ------------------------------------------------------------------
    def classify(self, token: str) -> NameInfo | None:
        return self.classify_folded(fold(token))

    def classify_folded(self, key: str) -> NameInfo | None:
        """:meth:`classify` of a token already folded (``fold(token)``)."""
        code = self._classify.get(key)
        if code is None:
            return None
        return NameInfo(code[0], self.regions[int(code[1])], code[2], code[3:4] == "t", code[3:4] == "w")

    def known(self, token: str) -> bool:
        return fold(token) in self._classify

    def known_top(self, token: str) -> bool:
        code = self._classify.get(fold(token))
        return code is not None and code[3:4] == "t"

    # ---- generation pools ----------------------------------------------------------------
    def first_pool(self, gender: str | None, region: str | None) -> tuple[str, ...]:
        g = gender if gender in GENDERS else "N"
        if region in self._first:
            pool = self._first[region].get(g) or ()
            if len(pool) >= 20:
                return pool
            # Few unisex names in this region: unisex from everywhere.
        return self._first_any[g]

    def last_pool(self, region: str | None) -> tuple[str, ...]:
        if region in self._last and len(self._last[region]) >= 20:
            return self._last[region]
        return self._last_any

    def any_first(self) -> tuple[str, ...]:
        return self._all_first

    def any_last(self) -> tuple[str, ...]:
        return self._last_any


def _interleave(lists: list[tuple[str, ...]]) -> tuple[str, ...]:
    out: list[str] = []
    seen: set[str] = set()
    for i in range(max((len(x) for x in lists), default=0)):
        for lst in lists:
            if i < len(lst) and lst[i] not in seen:
                seen.add(lst[i])
                out.append(lst[i])
    return tuple(out)


def data_path(name: str = "names.json.gz") -> Path:
    return Path(str(resources.files("plainsight.surrogate").joinpath("data", name)))


def read_table(path: str | Path) -> dict:
    """A gzip JSON table (``data_path(name)``: one shipped in ``surrogate/data``)."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def load_once(build):
    """``build()`` run once per process, on the first call, under a lock (a worker's threads may ask
    at the same moment); every call returns that one object. The shipped tables' loaders."""
    lock = threading.Lock()
    box: list = []

    @functools.wraps(build)
    def get():
        if not box:
            with lock:
                if not box:
                    box.append(build())
        return box[0]

    return get


@load_once
def _shipped_tables() -> NameTables:
    return NameTables(read_table(data_path()))


def load_tables(path: str | Path | None = None) -> NameTables:
    """The shipped tables, loaded once per process (~0.2 s, ~15 MB) on first use."""
    return NameTables(read_table(path)) if path is not None else _shipped_tables()
