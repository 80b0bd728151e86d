"""Per-turn cost work (issue #12, the worker's cost in `bench stream`): the speed-ups must not
change what is found or stored."""

from __future__ import annotations

import re

from middleware.codable import plain
from middleware.detection.recognizers import address as A


def _top_level_alternatives(pattern: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in pattern:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "|" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def test_address_cue_lookahead_holds_every_cue_words_first_letter():
    m = re.fullmatch(r"\(\?i\)\(\?=\[([a-z]+)\]\)\(\?:(.*)\)", A._CUE_WORDS.pattern)
    assert m, "the cue words keep their first-letter lookahead"
    gate, words = set(m.group(1)), _top_level_alternatives(m.group(2))
    assert len(words) > 20
    assert {w[0] for w in words} <= gate  # a word added without its first letter would never match
    for text in ("my ADDRESS is 12 Oak St", "Ich wohne in der Hauptstr. 5", "vivo en Calle Mayor 5", "ship it to 9 Elm Rd"):
        assert A._CUE_WORDS.search(text), text
    assert not A._CUE_WORDS.search("3 plus 4 is 7")


def test_plain_keeps_scalars_and_containers():
    assert plain({"a": {3, 1, 2}, "b": ("x", None, 1.5, True), 7: [1, "y"]}) == {
        "a": [1, 2, 3], "b": ["x", None, 1.5, True], "7": [1, "y"]}

    class Word(str):
        pass

    assert plain([Word("w")]) == ["w"]


def test_token_info_name_rank_and_is_name_as_defined():
    from middleware.detection.lexicon import NO_RANK, TokenInfo

    for a in (0, 1, 57, NO_RANK - 1, NO_RANK):
        for b in (0, 3, 57, NO_RANK - 1, NO_RANK):
            t = TokenInfo(a, b)
            assert t.name_rank == min(a, b)
            assert t.is_name == (min(a, b) < NO_RANK)
