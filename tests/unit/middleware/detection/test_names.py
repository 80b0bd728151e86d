"""Name evidence rules: lexicon classes, greetings/vocatives, self-introductions, titles, spans,
and the keep review (problem characters, famous people, curricular eponyms)."""

from __future__ import annotations

from tests.support import ROOT
import pytest

from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.detection.keep import has_quantities
from plainsight.middleware.detection.lexicon import get_lexicon
from plainsight.middleware.detection.memory import SessionMemory
from plainsight.middleware.detection.names import NameFinder, name_class, tokenize


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


# -- learned reviewer (middleware/data/name_model.json.gz) -----------------------------------------
def test_model_is_shipped_and_small():
    from plainsight.middleware.detection.namemodel import MODEL_PATH, get_model

    model = get_model()
    assert model is not None and 0 < model.threshold < 1
    assert MODEL_PATH.stat().st_size < 200_000
    # no weight names a candidate token itself: features are lexicon bins, shapes, context, evidence
    assert not any(k.startswith(("w=", "tok=")) for k in model.weights)


def test_model_roundtrip(tmp_path):
    from plainsight.middleware.detection.namemodel import NameModel

    m = NameModel({"c=pure": 1.5, "gp=,": -0.25}, -0.5, 0.3, {"seed": 1}, {"wordish": 0.4})
    p = tmp_path / "m.json.gz"
    m.save(p)
    m2 = NameModel.load(p)
    assert m2.weights == m.weights and m2.bias == m.bias and m2.threshold_for("wordish") == 0.4
    assert abs(m2.prob(["c=pure"]) - 1 / (1 + 2.718281828 ** -1.0)) < 1e-6
    assert p.read_bytes() == (m.save(p) or p.read_bytes())  # byte-identical rewrite


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Rim, had you gotten to finding area, yet?", ["Rim"]),  # ordinary-word name, weak context
        ("Let's see what you've got, Sandy.", ["Sandy"]),
        ("Will, can you read the next one?", ["Will"]),
        ("Olive can you explain how you got 75?", ["Olive"]),
        ("ok thanks jian", ["jian"]),  # lowercase single name
        ("I like Maga's division. I see Engy getting ready for division.", ["Maga", "Engy"]),  # classmates
        ("Listen to Sammy. Let him explain.", ["Sammy"]),
        ("Mr. Nekrasov is a 22 year old man.", ["Nekrasov"]),  # title: name no table knows
        ("Follow up with Jan Jílek next week.", ["Jan Jílek"]),  # calendar word as a first name
    ],
)
def test_model_finds_names_with_weak_evidence(finder, text, expected):
    assert names(finder, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Grace period is over. Mark the answer. Hope you are well.",
        "Sh, sh. Yay! Bless you.",
        "Newton's second law and Pascal's triangle.",
        "Mike has 4 cookies and he eats 3 cookies. So Mike has 1 cookie left?",
    ],
)
def test_model_keeps_ordinary_words_and_stories(finder, text):
    assert names(finder, text, role="tutor") == []


def test_relation_cue(finder):
    assert names(finder, "my friend mark said it was 12", role="student") == ["mark"]
    assert names(finder, "my friend said it was 12", role="student") == []


def test_pronoun_i_is_no_initial(finder):
    mem = SessionMemory()
    names(finder, "Hi Mahfuzur!", memory=mem)
    assert names(finder, "Put those away Mahfuzur I don't know why.", memory=mem) == ["Mahfuzur"]


def test_typo_of_a_problem_character_is_kept(finder):
    q = "Caitlin has 30 large beads and 30 small beads. How many beads does Caitlin have?"
    mem = SessionMemory()
    assert names(finder, "Catlin has the same number of large beads as small beads.", memory=mem, question=q) == []
    assert names(finder, "Hi Catlin!", memory=SessionMemory(), question=q) == ["Catlin"]  # addressed: a person


def test_rules_only_fallback_still_works():
    rules = NameFinder(model=None)
    assert names(rules, "Hi Sunghee, please talk me through your solution") == ["Sunghee"]
    assert names(rules, "Mike has 4 cookies and he eats 3 cookies.", role="tutor") == []


# -- packed lexicon --------------------------------------------------------------------------------
def test_packed_lexicon_matches_the_table():
    from itertools import islice

    from plainsight.middleware.detection.lexicon import TokenInfo

    lex = get_lexicon()
    for key, fr, lr, lo, ti in islice(lex.rows(), 0, 311_000, 997):
        if key.casefold() == key:
            assert lex.info(key) == TokenInfo(fr, lr, lo, ti)
    # both are keys whose str hashes collide in CPython (same raw buffer); the UTF-8 hashes don't
    assert lex.info("慧慧").first_rank == 879 and lex.info("gaga") != lex.info("慧慧")


def test_lexicon_cache_is_bounded():
    from plainsight.middleware.detection import lexicon as lx

    lex = lx.Lexicon()
    for i in range(lx._CACHE_MAX + 10):
        lex.info(f"zz{i}")
    assert len(lex._cache) <= lx._CACHE_MAX


def test_refill_keeps_offsets_and_the_mapping_consistent():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(ROOT / "scripts"))
    from name_data import NamePool, mark_characters, refill

    d = {"id": "x", "meta": {"question": "Carmen buys 3 pens. How many pens does Carmen have?"},
         "turns": [{"speaker": "teacher", "text": "Hi Maria Lopez, what did Carmen buy?"},
                   {"speaker": "teacher", "text": "maria, and Lopez's pens? Carmen has 3."}],
         "spans": [{"turn": 0, "start": 3, "end": 14, "label": "NAME", "text": "Maria Lopez"},
                   {"turn": 1, "start": 0, "end": 5, "label": "NAME", "text": "maria"},
                   {"turn": 1, "start": 11, "end": 16, "label": "NAME", "text": "Lopez"}]}
    out = refill(mark_characters(d), NamePool(3))
    assert "question" not in out["meta"] and "Carmen" not in out["turns"][0]["text"] + out["turns"][1]["text"]
    texts = [s["text"] for s in out["spans"]]
    assert all(out["turns"][s["turn"]]["text"][s["start"]:s["end"]] == s["text"] for s in out["spans"])
    first, last = texts[0].split()
    assert texts[1] == first.lower() and texts[2] == last and len(out["spans"]) == 3


# -- word-problem characters a tutor tells without problem metadata ------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Mia and Daquan have a lemonade stand. At the end of the day, they have $12.",
        "wonderful. now answer this. Ron has red, blue and black pens. together there are 48 pens.",
        "If Pablo wants to know how big the surface of his garden is, what should he measure?",
        "Maleka used a list of students in her school and samples every tenth one.",
    ],
)
def test_story_characters_told_by_a_tutor_are_kept(finder, text):
    assert names(finder, text, role="tutor") == []


def test_story_character_stays_kept_later_in_the_session(finder):
    mem = SessionMemory()
    assert names(finder, "Maleka used a list of students in her school and samples every tenth one.", "tutor", mem) == []
    assert names(finder, "he surveys the kids in his class", "student", mem) == []  # "his class" is no classroom
    assert names(finder, "Tony samples all the students in his classes.", "tutor", mem) == []
    assert names(finder, "So Maleka has the best method for producing accurate results.", "tutor", mem) == []


@pytest.mark.parametrize(
    "text,expected",
    [
        # someone is addressed in the turn: a teacher talking to and about the class
        ("Thanks, Aries. Mia and Daquan have a lemonade stand. At the end of the day, they have $12.", ["Aries", "Daquan"]),
        ("Very good, Omowunmi.  So Omowunmi noticed that half of 5 is two and a half.", ["Omowunmi", "Omowunmi"]),
        # "has done", "remembered": a classroom narrating its students, not a problem
        ("Radenn has done this.  11 minus 8 which is 3.", ["Radenn"]),
        # direct address and self-introduction always win
        ("Bye Sofia.", ["Sofia"]),
        ("My name is Kiara", ["Kiara"]),
    ],
)
def test_people_next_to_maths_are_still_found(finder, text, expected):
    assert names(finder, text, role="tutor") == expected


def test_a_word_typed_with_a_space_is_not_a_name(finder):
    assert names(finder, "please solve it without adding logarithm. use simple arith matic stepwise.") == []
    assert names(finder, "hi mari ana, can you explain step 2?") != []  # two halves of a name stay a name


# -- answers to a name question -------------------------------------------------------------------
def _dialogue(finder, turns):
    mem = SessionMemory()
    return [names(finder, text, role, mem) for role, text in turns]


@pytest.mark.parametrize(
    "answer,expected",
    [
        ("jildau", ["jildau"]),  # lowercase, no table knows it
        ("Jildau Bouts", ["Jildau Bouts"]),  # a capitalised surname that is also a word
        ("it's zorvath", ["zorvath"]),
        ("my name is juan pablo", ["juan pablo"]),
        ("Maria L. Lopez", ["Maria L. Lopez"]),
        ("ok", []),
        ("no", []),
        ("why do you need it", []),
        ("I'm fine thanks", []),
    ],
)
def test_the_answer_to_a_name_question_is_a_name(finder, answer, expected):
    assert _dialogue(finder, [("tutor", "Hi! What's your name?"), ("student", answer)]) == [[], expected]


def test_name_question_waits_for_the_other_speaker_and_then_expires(finder):
    turns = [("tutor", "Who am I talking to?"), ("tutor", "hello?"), ("student", "sam")]
    assert _dialogue(finder, turns) == [[], [], ["sam"]]
    later = [("tutor", "What is your name?"), ("student", "sam"), ("tutor", "ok"), ("student", "wow")]
    assert _dialogue(finder, later)[3] == []  # answered once: the question does not linger
    assert names(finder, "What's your last name? Boyle") == ["Boyle"]  # answered in the same turn
    assert names(finder, "Over your name?  I don't even know") == []  # not a name question


def test_a_name_question_followed_by_more_talk_still_expects_the_answer(finder):
    turns = [("tutor", "What's your name? Mine is Ms. Lee."), ("student", "kwabena")]
    assert _dialogue(finder, turns) == [["Lee"], ["kwabena"]]


def test_story_rule_is_for_the_tutor_a_student_s_third_person_stays_with_the_reviewer(finder):
    text = "Mia and Daquan have a lemonade stand. At the end of the day, they have $12."
    assert names(finder, text, role="tutor") == []
    assert "Daquan" in names(finder, text, role="student")  # recall first: the reviewer's call
