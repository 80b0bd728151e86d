"""The shipped name/word lexicon (built by ``scripts/build_name_tables.py``).

For a token it answers, in O(1): how popular it is as a first name and as a last name somewhere in
the world (best rank over 105 countries, names-dataset), and how English text uses it: the
case-sensitive log-probability of the lowercase form ("will") and of the title-case form ("Will").
An ordinary word is mostly written in lowercase; a name mostly capitalised. Loaded once per process.
"""

from __future__ import annotations

import functools
import gzip
from dataclasses import dataclass
from pathlib import Path

LEXICON_PATH = Path(__file__).resolve().parent.parent / "data" / "name_lexicon.tsv.gz"

#: Log-probability used for a form the table does not hold (rarer than anything kept).
ABSENT = -20.0
#: Rank used for "not a known name".
NO_RANK = 99_999


@dataclass(frozen=True, slots=True)
class TokenInfo:
    first_rank: int = NO_RANK
    last_rank: int = NO_RANK
    logp_lower: float = ABSENT
    logp_title: float = ABSENT

    @property
    def name_rank(self) -> int:
        return min(self.first_rank, self.last_rank)

    @property
    def is_name(self) -> bool:
        return self.name_rank < NO_RANK

    @property
    def is_word(self) -> bool:
        """Known English word in lowercase (used as such in running text)."""
        return self.logp_lower > ABSENT

    @property
    def word_margin(self) -> float:
        """logp(lower) - logp(Title): > 0 means mostly an ordinary word, < 0 mostly a proper noun."""
        return self.logp_lower - self.logp_title


UNKNOWN = TokenInfo()


class Lexicon:
    """Case-folded token -> packed (first rank, last rank, logp lower, logp title)."""

    def __init__(self, path: Path = LEXICON_PATH) -> None:
        self._rows: dict[str, tuple] = {}
        self.meta = ""
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("#"):
                    self.meta = line.strip()
                    continue
                key, fr, lr, lo, ti = line.rstrip("\n").split("\t")
                self._rows[key] = (
                    int(fr) if fr else NO_RANK,
                    int(lr) if lr else NO_RANK,
                    float(lo) if lo else ABSENT,
                    float(ti) if ti else ABSENT,
                )
        self._cache: dict[str, TokenInfo] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, token: str) -> bool:
        return token.casefold() in self._rows

    def info(self, token: str) -> TokenInfo:
        key = token.casefold()
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        row = self._rows.get(key)
        if row is None and ("’" in key):
            row = self._rows.get(key.replace("’", "'"))
        out = TokenInfo(*row) if row is not None else UNKNOWN
        if len(self._cache) < 200_000:
            self._cache[key] = out
        return out


@functools.lru_cache(maxsize=1)
def get_lexicon() -> Lexicon:
    return Lexicon()
