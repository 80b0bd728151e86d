"""The proxy's request de-identification (proxy/engine.py) without HTTP."""

from __future__ import annotations

import json

import pytest

from plainsight.middleware.config import load_settings
from plainsight.proxy.engine import Engine, RequestError
from plainsight.surrogate.crypto import StateCipher
from plainsight.surrogate.pipeline import build_pipeline
from tests.support import secret_overrides


@pytest.fixture(scope="module")
def engine():
    return Engine(build_pipeline(load_settings(None, **secret_overrides())), b"k" * 32)


def _req(*msgs):
    return {"model": "m", "messages": list(msgs), "user": "student-123"}


def test_every_part_of_a_request_is_deidentified(engine):
    ps = engine.new_session("e-1")
    body = _req(
        {"role": "system", "content": "You are tutoring Maria Lopez."},
        {"role": "user", "name": "Maria_Lopez", "content": [{"type": "text", "text": "Hi, I'm Maria Lopez"}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function", "function": {
            "name": "grades", "arguments": json.dumps({"who": "Maria Lopez", "list": [{"email": "maria.lopez@gmail.com"}],
                                                       "n": 3})}}]},
        {"role": "tool", "tool_call_id": "c", "content": "maria lopez: A-"},
    )
    d = engine.deidentify_request(ps, body)
    text = json.dumps(d.body)
    assert "maria" not in text.lower() and "lopez" not in text.lower()
    assert "student-123" not in text and "user" not in d.body
    args = json.loads(d.body["messages"][2]["tool_calls"][0]["function"]["arguments"])  # valid JSON
    assert set(args) == {"who", "list", "n"} and args["n"] == 3
    assert args["who"] == d.body["messages"][0]["content"].removeprefix("You are tutoring ").rstrip(".")
    assert {lbl for lbl, _ in d.entities} >= {"NAME", "EMAIL"}


def test_history_is_stable_and_everyday_words_stay(engine):
    ps = engine.new_session("e-2")
    first = engine.deidentify_request(ps, _req({"role": "user", "content": "I'm Will Lopez"})).body["messages"]
    again = engine.deidentify_request(ps, _req({"role": "user", "content": "I'm Will Lopez"},
                                               {"role": "assistant", "content": "Hi Will! I will help, Lopez."}))
    assert again.body["messages"][0] == first[0]
    reply = again.body["messages"][1]["content"]
    assert "Will" not in reply.replace("will help", "") and " will help" in reply  # the verb stays
    assert "Lopez" not in reply


def test_a_typed_surrogate_becomes_another_surrogate(engine):
    ps = engine.new_session("e-3")
    out = engine.deidentify_request(ps, _req({"role": "user", "content": "I'm Maria Lopez"}))
    sur = out.body["messages"][0]["content"].removeprefix("I'm ")
    typed = engine.deidentify_request(ps, _req({"role": "user", "content": f"who is {sur}?"}))
    got = typed.body["messages"][0]["content"]
    assert sur.split()[0] not in got


def test_media_parts_are_refused_unless_allowed(engine):
    ps = engine.new_session("e-4")
    body = _req({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]})
    with pytest.raises(RequestError):
        engine.deidentify_request(ps, body)
    engine.allow_media = True
    try:
        assert engine.deidentify_request(ps, body).body["messages"][0]["content"][0]["type"] == "image_url"
    finally:
        engine.allow_media = False


def test_sealed_state_round_trips(engine):
    import os

    cipher = StateCipher({"k1": os.urandom(32)}, "k1")
    ps = engine.new_session("e-5")
    a = engine.deidentify_request(ps, _req({"role": "user", "content": "I'm Maria Lopez"})).body
    blob = engine.seal(ps, cipher)
    assert b"Maria" not in blob
    ps2 = engine.open("e-5", blob, cipher)
    b = engine.deidentify_request(ps2, _req({"role": "user", "content": "I'm Maria Lopez"})).body
    assert a == b
    with pytest.raises(Exception):
        engine.open("another-session", blob, cipher)  # the session id is the associated data
