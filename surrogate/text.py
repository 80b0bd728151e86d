"""Small text helpers: case patterns, handle words, edit distance, common English words."""

from __future__ import annotations

import re
from functools import lru_cache


def case_pattern(s: str) -> str:
    """"lower", "upper", "title" or "mixed" for the letters of ``s``."""
    if s.islower():
        return "lower"
    if s.isupper():
        return "upper" if sum(c.isalpha() for c in s) > 1 else "title"
    for i, c in enumerate(s):
        if c.isalpha():
            if c.isupper() and (s[i + 1 :].islower() or not any(x.isalpha() for x in s[i + 1 :])):
                return "title"
            return "mixed"
    return "mixed"


def apply_case(model: str, value: str) -> str:
    """Give ``value`` the case pattern of ``model`` ("maria"→"lucia", "MARIA"→"LUCIA").

    A mixed-case model ("McDonald", "mARIA") leaves ``value`` in its natural form.
    """
    p = case_pattern(model)
    if p == "lower":
        return value.lower()
    if p == "upper":
        return value.upper()
    if p == "title":
        return value[:1].upper() + value[1:].lower() if value[1:].islower() or value[1:].isupper() else value[:1].upper() + value[1:]
    return value


def damerau1(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` differ by exactly one edit (insert, delete, substitute, swap)."""
    if a == b:
        return False
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        if len(diff) == 2:
            i, j = diff
            return j == i + 1 and a[i] == b[j] and a[j] == b[i]
        return False
    if la > lb:
        a, b = b, a
    # b is one longer: find the insertion.
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1 :]


_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[^\W\d_]+")


def split_camel(run: str) -> list[str]:
    """"MatthiasHimmel" → ["Matthias", "Himmel"]; "maria" → ["maria"]; "JSmith" → ["J", "Smith"]."""
    if run.islower() or run.isupper():
        return [run]
    parts = _CAMEL.findall(run)
    return parts if "".join(parts) == run else [run]


# Handle words for usernames, e-mail local parts and URL paths that aren't names. Ordinary,
# inoffensive words, grouped by length at import.
HANDLE_WORDS = tuple(
    """
    sky sun oak fox owl bee elk jay ray ivy sea bay
    blue gold mint jade lime pine fern moss wolf bear hawk dove lynx puma wren star moon
    rain snow wind leaf rock sand lake hill peak cove reef glow zest echo nova byte code
    maple cedar birch amber coral olive pearl ruby tiger eagle otter raven robin heron
    cloud storm river ocean stone field frost ember spark pixel orbit comet delta sigma
    lunar solar crisp swift quick brave happy lucky sunny misty dusty noble rapid
    falcon badger beaver cobalt copper silver violet indigo meadow forest canyon summit
    harbor island valley breeze garden rocket planet galaxy nebula quasar photon vector
    matrix cipher puzzle riddle jigsaw marble pebble acorn clover thistle willow
    dolphin panther sparrow penguin giraffe leopard hornet lantern compass voyager
    horizon thunder sunrise sunset glacier volcano rainbow harvest journey explorer
    """.split()
)


@lru_cache(maxsize=1)
def _words_by_len() -> dict[int, tuple[str, ...]]:
    out: dict[int, list[str]] = {}
    for w in HANDLE_WORDS:
        out.setdefault(len(w), []).append(w)
    return {k: tuple(v) for k, v in out.items()}


def words_near(length: int) -> tuple[str, ...]:
    """Handle words whose length is closest to ``length`` (same length when possible, else ±1, ±2…)."""
    by = _words_by_len()
    for d in range(0, 12):
        pool = by.get(length - d, ()) + (by.get(length + d, ()) if d else ())
        if pool:
            return pool
    return HANDLE_WORDS


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """Everyday English words: never treated as a surrogate when matched in lower case."""
    words: set[str] = set(HANDLE_WORDS)
    try:
        from faker.providers.lorem.en_US import Provider

        words |= {w.casefold() for w in Provider.word_list}
    except Exception:  # pragma: no cover - faker is a dependency
        pass
    words |= {
        "will", "may", "mark", "grace", "hope", "joy", "faith", "rose", "june", "april", "august",
        "summer", "dawn", "bill", "pat", "sue", "rich", "hunter", "chase", "dean", "miles", "guy",
        "art", "page", "sandy", "holly", "ivy", "lily", "daisy", "autumn", "angel", "king", "young",
    }
    return frozenset(words)
