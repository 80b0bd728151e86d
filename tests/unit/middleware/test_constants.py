"""One definition per constant, and what depended on the duplicates."""

from __future__ import annotations

from plainsight.middleware.config import Settings
from plainsight.middleware.detection import names
from plainsight.middleware.detection.cascade import Cascade
from plainsight.middleware.llm.prompts import safe_role
from plainsight.middleware.schemas import KNOWN_ROLES, InputTurn
from plainsight.surrogate.pipeline import build_pipeline


def test_a_role_the_name_finder_knows_is_a_role_in_the_output():
    """"instructor" was a role to the name finder (25 roles) but not to the pipeline (9 roles),
    so the speaker field came out as a fake name."""
    assert names.KNOWN_ROLES is KNOWN_ROLES
    p = build_pipeline(Settings(surrogate={"secret": "roles"}))
    for role in ("instructor", "Mentor", "TA", "learner"):
        res = p.process_sync(InputTurn(session_id="r", turn_id=role, role=role, text="ok, next one", sent_at=0.0))
        assert res.deid.role == role and res.logs.role == role
        assert safe_role(role) == role.casefold()
    res = p.process_sync(InputTurn(session_id="r", turn_id=9, role="Maria", text="ok", sent_at=0.0))
    assert res.deid.role != "Maria" and safe_role("Maria") == "participant"


def test_rules_only_cascade_loads_spacy_ner():
    """Without the name model the cascade uses spaCy NER as evidence; __init__ tested the argument
    (None) instead of the resolved flag, so NER was never loaded."""
    c = Cascade(use_model=False)
    assert c.names.model is None and c.use_ner
    assert c._nlp is not None
    assert Cascade(use_model=True)._nlp is None  # with the model (the default) NER stays unloaded


def test_titles_are_defined_once_for_the_name_finder_and_the_replacer():
    """TITLES (name finder) and TITLES_LAST/TITLES_OTHER (replacer) were two lists that had drifted;
    both now derive from the title groups in middleware/values.py."""
    from plainsight.middleware import values
    from plainsight.surrogate import replacer

    assert values.NAME_TITLES == frozenset(
        "mr mrs ms miss mx mister dr doctor prof professor sir madam madame coach mme mlle".split())
    assert names.TITLES == values.NAME_TITLES
    assert replacer.TITLES_LAST is values.SURNAME_TITLES and replacer._TITLES_ALL is values.ALL_TITLES
    assert values.SURNAME_TITLES == frozenset(
        "mr mrs ms miss mx dr prof professor mister madam mme mlle herr frau sr sra srta".split())
    groups = (values.COURTESY_TITLES, values.COURTESY_TITLES_DE_ES, values.ACADEMIC_TITLES,
              values.RANK_HONORIFICS, values.ROLE_TITLES, values.KINSHIP_TITLES)
    assert values.NAME_TITLES | values.ALL_TITLES == frozenset().union(*groups)
    assert all(t == t.casefold() and "." not in t for t in values.NAME_TITLES | values.ALL_TITLES)


def test_the_replacer_keeps_titles_and_renders_a_surname_after_a_surname_title():
    from plainsight.middleware.detection.base import Span
    from plainsight.surrogate.replacer import SurrogateReplacer

    r = SurrogateReplacer(secret="titles")
    st = r.new_state("t")
    for text, title in (("Mr. Lopez", "Mr. "), ("Uncle Bob", "Uncle "), ("Coach Maria", "Coach ")):
        out, _ = r.replace(text, [Span(0, len(text), "NAME", "t")], st, "surrogate")
        assert out.startswith(title) and text[len(title):] not in out
