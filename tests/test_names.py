"""Name evidence rules: lexicon classes, greetings/vocatives, self-introductions, titles, spans,
and the keep review (problem characters, famous people, curricular eponyms)."""

from __future__ import annotations

import pytest

from middleware.detection.base import TurnContext
from middleware.detection.keep import has_quantities
from middleware.detection.lexicon import get_lexicon
from middleware.detection.memory import SessionMemory
from middleware.detection.names import NameFinder, name_class, tokenize


@pytest.fixture(scope="module")
def finder() -> NameFinder:
    return NameFinder()


def names(finder: NameFinder, text: str, role: str = "teacher", memory: SessionMemory | None = None, **meta) -> list[str]:
    mem = memory if memory is not None else SessionMemory()
    spans = finder.find(text, TurnContext(role=role, metadata=meta), mem)
    return [text[s.start : s.end] for s in spans]


# -- lexicon -------------------------------------------------------------------------------------
def test_lexicon_tells_names_from_words():
    lex = get_lexicon()
    assert lex.info("Maria").is_name and lex.info("Maria").word_margin < 0
    assert lex.info("will").word_margin > 2  # an ordinary word first
    assert not lex.info("Zzyzxq").is_name


@pytest.mark.parametrize(
    "token,cls",
    [("Rogelio", "pure"), ("Maria", "propn"), ("Will", "wordish"), ("Okay", "wordish"), ("table", "word")],
)
def test_name_class(token, cls):
    lex = get_lexicon()
    assert name_class(tokenize(token, lex)[0]) == cls


def test_tokenize_strips_possessive():
    toks = tokenize("Maria's and Teupola’s work", get_lexicon())
    assert [t.text for t in toks][:3] == ["Maria", "and", "Teupola"]
    assert toks[0].poss and toks[2].poss


# -- greetings, vocatives, introductions ------------------------------------------------------------
@pytest.mark.parametrize(
    "text,expected",
    [
        ("Hi Sunghee, please talk me through your solution", ["Sunghee"]),
        ("hi maria can you explain?", ["maria"]),
        ("Good job, Will.", ["Will"]),
        ("Thanks Hope!", ["Hope"]),
        ("Okay.  Teupola?", ["Teupola"]),
        ("What are we doing, Zizan?", ["Zizan"]),
        ("Alifereti, are you done?", ["Alifereti"]),
        ("Nooru can you explain how you got that?", ["Nooru"]),
    ],
)
def test_greetings_and_vocatives(finder, text, expected):
    assert names(finder, text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("my name is Kiara", ["Kiara"]),
        ("I'm Joaquín, nice to meet you", ["Joaquín"]),
        ("you can call me Mark", ["Mark"]),
        ("I'm good thanks", []),
        ("I'm done with number 3", []),
    ],
)
def test_self_introductions(finder, text, expected):
    assert names(finder, text, role="student") == expected


def test_ordinary_words_are_not_names_without_cue(finder):
    assert names(finder, "Will you mark the answer? I hope so. Grace period is over.") == []
    assert names(finder, "Okay. So, good. Yes?") == []


def test_title_is_outside_the_span(finder):
    assert names(finder, "Please give it to Mr. Okonkwo tomorrow.") == ["Okonkwo"]


def test_multi_part_names_form_one_span(finder):
    assert names(finder, "Hi Krisztián Szöllösy, welcome.") == ["Krisztián Szöllösy"]
    assert names(finder, "Hello Faina D. Yefremova!") == ["Faina D. Yefremova"]


def test_non_ascii_name(finder):
    assert names(finder, "Thanks, Šárka!") == ["Šárka"]


def test_role_name_is_learnt(finder):
    mem = SessionMemory()
    assert names(finder, "Sure, I can do that.", role="mariana", memory=mem) == []
    assert names(finder, "Good point mariana, and Mariana's idea too", role="teacher", memory=mem) == ["mariana", "Mariana"]


# -- keep review ---------------------------------------------------------------------------------
def test_problem_characters_are_kept(finder):
    q = "Carmen goes to an auction. She bids $200 and Carmen wins. How much does the desk cost her?"
    mem = SessionMemory()
    assert names(finder, "Hi Sunghee, please talk me through your solution", memory=mem, question=q) == ["Sunghee"]
    assert names(finder, "Carmen bid after each of the other 3 people.", role="student", memory=mem, question=q) == []
    assert names(finder, "So Sunghee, what did Carmen pay?", memory=mem, question=q) == ["Sunghee"]


def test_word_problem_narrative_is_kept(finder):
    assert names(finder, "Mike has 4 cookies and he eats 3 cookies.", role="tutor") == []
    assert names(finder, "How many yards did Jason sprint?", role="tutor") == []


def test_classmate_talked_about_is_found(finder):
    assert names(finder, "I like how Julia is showing me her eight eighths.") == ["Julia"]


def test_famous_people_and_curricular_terms_are_kept(finder):
    assert names(finder, "Remember Newton's second law and the Riemann sum.") == []
    assert names(finder, "Pythagoras' theorem works for right triangles, like Euclid said.") == []


def test_quantities():
    assert has_quantities("Mike has 4 cookies")
    assert has_quantities("one-third of the pizza")
    assert not has_quantities("a 19 year old man")
