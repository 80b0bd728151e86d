"""Issue #11.2: "im" / "Im" / "i'm" / "I am" before a name is the introduction, not part of the name."""

from __future__ import annotations

import re

import pytest

from plainsight.middleware.detection.base import TurnContext
from plainsight.middleware.detection.memory import SessionMemory
from plainsight.middleware.detection.names import NameFinder
from plainsight.surrogate.pipeline import build_pipeline
from plainsight.middleware.schemas import InputTurn
from plainsight.surrogate.names import fold, load_tables


@pytest.fixture(scope="module")
def finder() -> NameFinder:
    return NameFinder()


@pytest.mark.parametrize(
    "text,name",
    [("hi im Jo", "Jo"), ("hey im kofi", "kofi"), ("Im Jo", "Jo"), ("i'm Jo", "Jo"), ("I am Jo", "Jo"),
     ("hi Im Kofi Mensah", "Kofi Mensah"), ("im Kofi Mensah", "Kofi Mensah")],
)
def test_im_introduces_the_name(finder, text, name):
    spans = finder.find(text, TurnContext(role="student"), SessionMemory())
    assert [text[s.start : s.end] for s in spans] == [name]


def test_im_stays_in_the_output_with_a_first_name_surrogate():
    p = build_pipeline()
    tables = load_tables()
    for i, (text, lead) in enumerate([("hi im Jo", "hi im "), ("hey im kofi", "hey im ")]):
        out = p.process_sync(InputTurn(session_id=f"im-{i}", turn_id=0, role="student", text=text, sent_at=0.0)).deid.text
        assert out.startswith(lead), out
        sur = out[len(lead):]
        assert re.fullmatch(r"[^\W\d_]+", sur), out  # one token: a first name for a first name
        info = tables.classify(sur)
        assert fold(sur) != fold(text.split()[-1]) and info is not None and info.kind == "f", (out, info)
