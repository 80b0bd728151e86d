"""The name finder's parts (``middleware/detection/naming/``) work on their own, one job each:
tokens, direct cues, the story keep review, public keeps, features and spans."""

from __future__ import annotations

import pytest

from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.detection.lexicon import get_lexicon
from plainsight.middleware.detection.memory import SessionMemory
from plainsight.middleware.detection.naming import cues, features, public_keep, spans, story, tokens


@pytest.fixture(scope="module")
def lex():
    return get_lexicon()


def _at(toks, word):
    return next(k for k, t in enumerate(toks) if t.text == word)


def _cue(lex, text, word):
    toks = tokens.tokenize(text, lex)
    k = _at(toks, word)
    gap_prev = text[toks[k - 1].end : toks[k].start] if k else text[: toks[k].start]
    gap_next = text[toks[k].end : toks[k + 1].start] if k + 1 < len(toks) else text[toks[k].end :]
    return cues.cue(toks, k, text, gap_prev, gap_next, tokens.name_class(toks[k]))


@pytest.mark.parametrize(
    "text,word,expected",
    [
        ("Hi Maria, can you read it?", "Maria", "direct"),
        ("Good job, Tesha.", "Tesha", "direct"),
        ("Zizan, you go next", "Zizan", "direct"),
        ("my name is Rogelio", "Rogelio", "intro"),
        ("call me zorvath", "zorvath", "intro"),
        ("my friend Jonah is here", "Jonah", "direct"),
        ("Mr. Nekrasov said so", "Nekrasov", "title"),
        ("his name is Rogelio", "Rogelio", ""),  # someone talked about, not an introduction
        ("a video game called Halo", "Halo", ""),
        ("Maria has 5 apples", "Maria", ""),  # no direct cue: for the keep review and the model
    ],
)
def test_direct_cues(lex, text, word, expected):
    assert _cue(lex, text, word) == expected


def test_name_question_and_answer(lex):
    mem = SessionMemory()
    q = "Hello! What's your name?"
    assert cues.name_question(q, tokens.tokenize(q, lex), "tutor", mem) == (None, False)
    assert mem.expect_name == "tutor"
    a = "it's Zorvath Quellin"
    toks = tokens.tokenize(a, lex)
    start, here = cues.name_question(a, toks, "student", mem)
    assert (start, here) == (0, False)
    assert [toks[k].text for k in cues.name_answer(toks, start, lex)] == ["Zorvath", "Quellin"]
    no = tokens.tokenize("why do you need it", lex)
    assert cues.name_answer(no, 0, lex) == []


def test_story_keep_review(lex):
    text = "Ron has 12 red pens. How many pens does he have?"
    toks = tokens.tokenize(text, lex)
    mem = SessionMemory()
    sig = story.signals(toks, 0, text, mem, True, text[toks[0].end : toks[1].start])
    assert sig["verb"] and sig["qty"] and not sig["pers"]
    assert story.keep_decision(toks, 0, mem, sig)
    assert story.story_character(toks, text, 0, sig, mem, "Ron has 12 red pens.")
    assert story.near_problem("catlin", {"caitlin"}) and not story.near_problem("maria", {"caitlin"})


def _public(lex, text, word, memory=None, role="tutor"):
    toks = tokens.tokenize(text, lex)
    lows = [t.low for t in toks]
    k = _at(toks, word)
    mem = memory or SessionMemory()
    found = public_keep.public_keep(toks, lows, k, text, mem, 0, set(), set(), TurnContext(role=role), [], lex)
    return None if found is None else (text[toks[found[0]].start : toks[found[1]].end], found[2])


def test_public_keeps(lex):
    assert _public(lex, "she speaks Portuguese at home", "Portuguese") == ("Portuguese", "keep-word")
    assert _public(lex, "I loved Atticus Finch in that book", "Atticus") == ("Atticus Finch", "keep-fiction")
    assert _public(lex, "he goes to Parker Elementary School", "Parker") == ("Parker", "keep-org")
    assert _public(lex, "my colleague Olu is off this week", "Olu") is None  # a relation makes a person


def test_public_keep_sentence_evidence(lex):
    text = "QB Lamar Jackson threw for 300 yards"
    toks = tokens.tokenize(text, lex)
    lows = [t.low for t in toks]
    assert public_keep.sentence_evidence(toks, lows, 1, text, talk=False) == 3
    assert _public(lex, "My coach Dan says hi", "Dan") is None  # a possessive and a role: a person of one's life


def test_features_and_gaps(lex):
    assert features.gap_class(", ", False) == "," and features.gap_class(" ", True) == "^"
    assert features.gap_class(" ", True, end=True) == "$" and features.gap_class("", False, poss=True) == "p"
    text = "Hi Rogelio, can you read?"
    toks = tokens.tokenize(text, lex)
    assert features.gate(toks, 1, "pure", 0.0)
    sig = story.signals(toks, 1, text, SessionMemory(), False, ", ")
    f = features.model_features(toks, 1, text, "pure", 0.8, 0.0, sig, False, SessionMemory(), TurnContext(role="tutor"),
                                False, " ", ", ")
    assert "c=pure" in f and "p1=hi" in f and "adr=,A" in f


def test_spans_merge_name_parts_and_remember_them(lex):
    text = "Faina D. Yefremova and Eklund, Michael"
    toks = tokens.tokenize(text, lex)
    mem = SessionMemory()
    decided = {0: 0.95, 5: 0.8}
    spans.extend_lists(toks, text, decided, mem, lex)
    out = spans.merge(toks, text, decided, {0}, mem, "names", how={0: "direct", 5: "model"})
    assert [text[s.start : s.end] for s in out] == ["Faina D. Yefremova", "Eklund", "Michael"]
    assert out[0].evidence == "direct" and mem.person_strength("Yefremova") >= 1.0


def test_names_module_runs_the_parts_and_re_exports_them():
    from plainsight.middleware.detection import names

    assert names.tokenize is tokens.tokenize and names.STOP is tokens.STOP and names.TITLES is tokens.TITLES
    assert names.TITLES <= names.STOP
