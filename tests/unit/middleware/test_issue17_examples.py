"""The issue's examples end to end (real cascade, real replacer, the pipeline a worker runs): no raw
value remains, and the surrogates read naturally (issue #17)."""

from __future__ import annotations

import re

import pytest

from plainsight.middleware.config import load_settings
from plainsight.surrogate.pipeline import build_pipeline
from plainsight.middleware.schemas import InputTurn


@pytest.fixture(scope="module")
def pipeline():
    return build_pipeline(load_settings(None, surrogate={"secret": "issue-17-test-secret"}))


def _run(pipeline, sid: str, turns: list[tuple[str, str]]) -> list[str]:
    out = []
    for i, (role, text) in enumerate(turns):
        res = pipeline.process_sync(InputTurn(session_id=sid, turn_id=i, role=role, text=text, sent_at=0.0))
        out.append(res.logs.text)
    return out


@pytest.mark.parametrize(
    "text, raws",
    [
        ("my username on the school site is mlopez2009", ["mlopez2009"]),
        ("vivo en Calle Mayor 5, Madrid", ["Calle Mayor", "Mayor 5"]),
        ("我叫王伟", ["王伟"]),
        ("меня зовут Дима", ["Дима"]),
        ("cool. btw my name's Diego, my friend Amara Okonkwo told me about this site", ["Diego", "Amara", "Okonkwo"]),
        ("my email is jayden dot brooks at gmail dot com", ["jayden", "brooks"]),
        ("call my mom at six one seven, five five five, zero one four two", ["six one seven, five five five, zero one four two"]),
        ("I live at 12 Baker St, London NW1 6XE", ["Baker", "London", "NW1 6XE"]),
        ("hi, I'm Jürgen Müller", ["Jürgen", "Müller"]),
        ("hola, soy Sofía Hernández. my name is Sofía Hernández", ["Sofía", "Hernández"]),
    ],
)
def test_no_raw_value_remains(pipeline, text, raws):
    out = _run(pipeline, f"ex-{abs(hash(text))}", [("student", text)])[0]
    for raw in raws:
        assert raw.casefold() not in out.casefold(), (raw, out)


def test_surrogates_keep_their_style(pipeline):
    email, phone, addr = _run(pipeline, "ex-style", [
        ("student", "my email is jayden dot brooks at gmail dot com"),
        ("student", "call my mom at six one seven, five five five, zero one four two"),
        ("student", "I live at 12 Baker St, London NW1 6XE"),
    ])
    assert re.fullmatch(r"my email is [a-z]+ dot [a-z]+ at gmail dot com", email), email
    words = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
    assert re.fullmatch(rf"call my mom at {words} {words} {words}, five five five, zero one {words} {words}", phone), phone
    assert "\n" not in addr and re.fullmatch(r"I live at \d+ [^,]+, [^,]+ [A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}", addr), addr


def test_names_keep_their_origin_end_to_end(pipeline):
    from plainsight.surrogate.origin import load_origins

    o = load_origins()
    de, es = _run(pipeline, "ex-origin", [("student", "hi, I'm Jürgen Müller"),
                                          ("student", "and my friend is Sofía Hernández")])
    m = re.fullmatch(r"hi, I'm (\S+) (\S+)", de)
    assert m and o.person_group(m.group(1), m.group(2)) == "German", de
    m = re.fullmatch(r"and my friend is (\S+) (\S+)", es)
    assert m and o.person_group(m.group(1), m.group(2)) == "Spanish", es
