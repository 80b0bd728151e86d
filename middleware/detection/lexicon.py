"""The shipped name/word lexicon (built by ``scripts/build_name_tables.py``).

For a token it answers, in O(1): how popular it is as a first name and as a last name somewhere in
the world (best rank over 105 countries, names-dataset), and how English text uses it: the
case-sensitive log-probability of the lowercase form ("will") and of the title-case form ("Will").
An ordinary word is mostly written in lowercase; a name mostly capitalised. Loaded once per process.

Packed in memory (~5 MB instead of ~68 MB for a dict of tuples): the 311k case-folded keys are
kept only as the 64-bit ``hash()`` of their UTF-8 bytes (stable within the process, which builds the
table; str hashes would collide across string kinds: CPython hashes the raw buffer) in a
sorted numpy array, next to one packed 64-bit value per key (two 16-bit ranks, two 8-bit log-probs
in tenths). A hash collision between two of the keys is checked for at load (none expected:
probability ~1e-9); an unknown token matching a key's hash has odds ~1e-14 per lookup. Hot tokens
are served from a small bounded cache of :class:`TokenInfo` objects.
"""

from __future__ import annotations

from importlib import resources
import functools
import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

LEXICON_PATH = Path(str(resources.files("plainsight.middleware").joinpath("data", "name_lexicon.tsv.gz")))

#: Log-probability used for a form the table does not hold (rarer than anything kept).
ABSENT = -20.0
#: Rank used for "not a known name".
NO_RANK = 99_999

_NO16 = 0xFFFF  # packed "no rank"
_NOLP = 0xFF  # packed "absent log-prob"
_CACHE_MAX = 30_000


@dataclass(frozen=True, slots=True)
class TokenInfo:
    first_rank: int = NO_RANK
    last_rank: int = NO_RANK
    logp_lower: float = ABSENT
    logp_title: float = ABSENT

    # written out (no min(), no property calling a property): asked ~35 times per turn by the name finder
    @property
    def name_rank(self) -> int:
        a, b = self.first_rank, self.last_rank
        return a if a < b else b

    @property
    def is_name(self) -> bool:
        return self.first_rank < NO_RANK or self.last_rank < NO_RANK

    @property
    def is_word(self) -> bool:
        """Known English word in lowercase (used as such in running text)."""
        return self.logp_lower > ABSENT

    @property
    def word_margin(self) -> float:
        """logp(lower) - logp(Title): > 0 means mostly an ordinary word, < 0 mostly a proper noun."""
        return self.logp_lower - self.logp_title


UNKNOWN = TokenInfo()


def _parse(line: str) -> tuple[str, int, int, float, float]:
    key, fr, lr, lo, ti = line.rstrip("\n").split("\t")
    return (
        key,
        int(fr) if fr else NO_RANK,
        int(lr) if lr else NO_RANK,
        float(lo) if lo else ABSENT,
        float(ti) if ti else ABSENT,
    )


def _pack_rank(r: int) -> int:
    return _NO16 if r >= NO_RANK else min(r, _NO16 - 1)


def _pack_lp(lp: float) -> int:
    return _NOLP if lp <= ABSENT else min(_NOLP - 1, max(0, int(round(-lp * 10))))


def _unpack(v: int) -> TokenInfo:
    fr, lr, lo, ti = (v >> 32) & 0xFFFF, (v >> 16) & 0xFFFF, (v >> 8) & 0xFF, v & 0xFF
    return TokenInfo(
        NO_RANK if fr == _NO16 else fr,
        NO_RANK if lr == _NO16 else lr,
        ABSENT if lo == _NOLP else -lo / 10.0,
        ABSENT if ti == _NOLP else -ti / 10.0,
    )


class Lexicon:
    """Case-folded token -> (first rank, last rank, logp lower, logp title), packed."""

    def __init__(self, path: Path = LEXICON_PATH) -> None:
        self.path = path
        self.meta = ""
        hashes: list[int] = []
        values: list[int] = []
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("#"):
                    self.meta = line.strip()
                    continue
                key, fr, lr, lo, ti = _parse(line)
                hashes.append(hash(key.encode("utf-8")))
                values.append((_pack_rank(fr) << 32) | (_pack_rank(lr) << 16) | (_pack_lp(lo) << 8) | _pack_lp(ti))
        h = np.array(hashes, dtype=np.int64)
        order = np.argsort(h, kind="stable")
        self._hashes = h[order]
        self._values = np.array(values, dtype=np.uint64)[order]
        if len(self._hashes) > 1 and bool((self._hashes[1:] == self._hashes[:-1]).any()):
            raise RuntimeError("name lexicon: hash collision between two keys")  # never seen; rebuild keys
        self._n = len(self._hashes)
        self._cache: dict[str, TokenInfo] = {}

    def __len__(self) -> int:
        return self._n

    def _lookup(self, key: str) -> TokenInfo | None:
        h = hash(key.encode("utf-8"))
        i = int(self._hashes.searchsorted(h))
        if i < self._n and self._hashes[i] == h:
            return _unpack(int(self._values[i]))
        return None

    def __contains__(self, token: str) -> bool:
        return self._lookup(token.casefold()) is not None

    def info(self, token: str) -> TokenInfo:
        key = token.casefold()
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        out = self._lookup(key)
        if out is None and "\u2019" in key:
            out = self._lookup(key.replace("\u2019", "'"))
        if out is None:
            out = UNKNOWN
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = out
        return out

    def rows(self) -> Iterator[tuple[str, int, int, float, float]]:
        """All rows of the shipped table, read again from disk (build scripts and tests only)."""
        with gzip.open(self.path, "rt", encoding="utf-8") as fh:
            for line in fh:
                if not line.startswith("#"):
                    yield _parse(line)


@functools.lru_cache(maxsize=1)
def get_lexicon() -> Lexicon:
    return Lexicon()
