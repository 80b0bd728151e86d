"""General knowledge for the name reviewer (``detection/knowledge.py``, built by
``scripts/build_knowledge_table.py``): classes are evidence, never a veto."""

from __future__ import annotations

import pytest

from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.detection.knowledge import foreign_word, kinds, sentence_language
from plainsight.middleware.detection.lexicon import get_lexicon
from plainsight.middleware.detection.naming.features import knowledge_features
from plainsight.middleware.detection.naming.tokens import tokenize


def test_classes_from_maintained_packages():
    assert "L" in kinds("russian") and "N" in kinds("british")
    assert "C" in kinds("france") and "C" in kinds("frankreich") and "C" in kinds("espagne")
    assert "K" in kinds("europe") and "T" in kinds("linz") and "M" in kinds("january") and "M" in kinds("montag")
    assert "G" in kinds("buddhist") and "H" in kinds("thanksgiving") and "R" in kinds("bayern")
    assert kinds("new york") and kinds("jessica") == ""
    # Paris, Georgia, Jordan are places AND people: the class is there, the finder still weighs context
    assert kinds("georgia") and kinds("jordan")


def test_sentence_language_and_frequent_words():
    assert sentence_language("die katze schläft auf dem sofa".split()) == "de"
    assert sentence_language("meine mutter kocht gern".split()) == "de"
    assert sentence_language("hola me llamo ana y vivo en madrid".split()) == "es"
    assert sentence_language("eu moro em lisboa com a minha mãe".split()) == "pt"
    assert sentence_language("i speak russian and a little english".split()) == "en"
    assert foreign_word("katze", "de") and not foreign_word("katze", "en")
    assert not foreign_word("anna", "de")  # a popular given name is no plain word of the language


def test_knowledge_features():
    text = "RT @ann: I speak Russian #ThrowbackThursday"
    toks = tokenize(text, get_lexicon())
    k = [t.text for t in toks].index("Russian")
    f = knowledge_features(toks, k, text, "propn", "C", "_", "_", "speak")
    assert "gk=LN" in f and "lg=en" in f and "soc" in f and "rt" in f
    k = [t.text for t in toks].index("ThrowbackThursday")
    assert "hash" in knowledge_features(toks, k, text, "unknown", "C", "o", "$", "o")


def test_unknown_word_share_of_a_turn():
    """A turn English does not know (a language no table covers) is told apart from English, so an
    unknown lowercase word there is no evidence of a name; too few lowercase words: no figure."""
    lex = get_lexicon()

    def unk(text: str, word: str) -> str:
        toks = tokenize(text, lex)
        k = [t.text for t in toks].index(word)
        return next((f for f in knowledge_features(toks, k, text, "unknown", "l", "_", "_", "-") if f.startswith("unk=")), "")

    assert unk("Kung totoong may feelings siya sayo hindi na siya magtatanong", "sayo") == "unk=3"
    assert unk("my friend zuzanna is coming over to do the homework with me", "zuzanna") == "unk=0"
    assert unk("hi zuzanna", "zuzanna") == ""


@pytest.fixture(scope="module")
def cascade():
    from plainsight.middleware.detection.cascade import Cascade

    return Cascade(use_ner=False)


def _names(cascade, text: str) -> list[str]:
    spans = cascade.detect(text, TurnContext(role="student", session_id="k", turn_index=0, metadata={}), cascade.new_memory())
    return [text[s.start : s.end] for s in spans if s.label == "NAME"]


@pytest.mark.parametrize("text", ["I speak Russian and a little English", "the bus to Linz takes an hour",
                                  "Die Katze schläft", "#ThrowbackThursday with my class"])
def test_not_people(cascade, text):
    assert _names(cascade, text) == []


@pytest.mark.parametrize("text,name", [("my friend Paris is coming tomorrow", "Paris"),
                                       ("Hi Maria, how was your weekend?", "Maria"),
                                       ("My sister Georgia lives in Austin", "Georgia")])
def test_evidence_not_veto(cascade, text, name):
    assert name in _names(cascade, text)
