"""Per-turn cost work (issue #12, the worker's cost in `bench stream`): the speed-ups must not
change what is found or stored."""

from __future__ import annotations

import re
from re import _constants as C
from re import _parser as P

import pytest

from plainsight.middleware.codable import plain
from plainsight.middleware.detection.recognizers import address as A
from plainsight.middleware.detection.recognizers import id_num as I
from plainsight.middleware.detection.recognizers import username as U


def _first_chars(items) -> set[str] | None:
    """Literal characters a match of the parsed pattern ``items`` can start with (None: not only
    literals; "" in the set: the pattern can start with what follows)."""
    out: set[str] = set()
    for op, av in items:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):  # \b, ^, lookarounds: zero width
            continue
        if op is C.LITERAL:
            return out | {chr(av)}
        if op is C.IN:
            return out | {chr(a) for o, a in av} if all(o is C.LITERAL for o, a in av) else None
        if op is C.BRANCH:
            for alt in av[1]:
                sub = _first_chars(alt)
                if sub is None:
                    return None
                out |= sub
            return out
        if op is C.SUBPATTERN:
            sub = _first_chars(av[-1])
            if sub is None:
                return None
            out |= sub - {""}
            if "" not in sub:
                return out
            continue
        return None
    return out | {""}


#: every code point (no surrogates), to compare two character classes under IGNORECASE
_ALL_CHARS = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)


@pytest.mark.parametrize("rx", [A._CUE_WORDS, I._ID_CONTEXT, U._USERNAME_CONTEXT], ids=["address-cue", "id-context", "username-context"])
def test_first_letter_lookahead_lets_every_match_through(rx):
    """A regex gated by a lookahead of first letters finds what it found without it, as long as the
    class holds every letter a match can start with (also under IGNORECASE's case folding)."""
    items = list(P.parse(rx.pattern, rx.flags))
    assert items[0][0] is C.ASSERT, "the regex starts with its first-letter lookahead"
    gate = re.compile("".join(rx.pattern.partition("(?=")[1:]).split(")", 1)[0] + ")", rx.flags)
    inner = re.compile(rx.pattern.replace(gate.pattern, "", 1), rx.flags)
    starts = _first_chars(list(P.parse(inner.pattern, rx.flags)))
    assert starts and "" not in starts, "every alternative starts with a letter"
    letters = re.compile("[" + re.escape("".join(sorted(starts))) + "]", rx.flags)
    may_start = set(letters.findall(_ALL_CHARS))
    passes = set(re.compile(gate.pattern[3:-1], rx.flags).findall(_ALL_CHARS))
    assert may_start <= passes, sorted(may_start - passes)[:10]


def test_gated_regexes_still_match():
    for text in ("my ADDRESS is 12 Oak St", "Ich wohne in der Hauptstr. 5", "vivo en Calle Mayor 5", "ship it to 9 Elm Rd"):
        assert A._CUE_WORDS.search(text), text
    assert not A._CUE_WORDS.search("3 plus 4 is 7")
    for text in ("my student ID is 20231487", "Passport: X1234567", "ID: AB-4471", "order number 554433"):
        assert I._ID_CONTEXT.search(text), text
    for text in ("my discord is kitty_99", "Username: CoolKid2011", "add me on insta, maria.lopez"):
        assert U._USERNAME_CONTEXT.search(text), text


def test_plain_keeps_scalars_and_containers():
    assert plain({"a": {3, 1, 2}, "b": ("x", None, 1.5, True), 7: [1, "y"]}) == {
        "a": [1, 2, 3], "b": ["x", None, 1.5, True], "7": [1, "y"]}

    class Word(str):
        pass

    assert plain([Word("w")]) == ["w"]


def test_token_info_name_rank_and_is_name_as_defined():
    from plainsight.middleware.detection.lexicon import NO_RANK, TokenInfo

    for a in (0, 1, 57, NO_RANK - 1, NO_RANK):
        for b in (0, 3, 57, NO_RANK - 1, NO_RANK):
            t = TokenInfo(a, b)
            assert t.name_rank == min(a, b)
            assert t.is_name == (min(a, b) < NO_RANK)
