"""One definition per constant, and what depended on the duplicates."""

from __future__ import annotations

from middleware.config import Settings
from middleware.detection import names
from middleware.detection.cascade import Cascade
from middleware.llm.prompts import safe_role
from middleware.schemas import KNOWN_ROLES, InputTurn
from surrogate.pipeline import build_pipeline


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
