"""Issue #11.1: a value detected once in a session is replaced wherever it comes back in that
session, by the same surrogate (student and tutor turns, any case, normalised forms), across a
worker restart; ``forget`` erases it; tutor replies are re-identified with it."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from plainsight.middleware.detection import value_memory
from plainsight.middleware.detection.base import Span, TurnContext
from plainsight.middleware.detection.memory import SessionMemory
from plainsight.middleware.pipeline import Pipeline
from plainsight.surrogate.pipeline import build_pipeline
from plainsight.middleware.schemas import InputTurn

from tests.support import produce, read_topic, run_forget, start_worker, stop_worker, turn_bytes

SECRET = "value-memory-test-secret"


@pytest.fixture(scope="module")
def pipeline() -> Pipeline:
    from plainsight.middleware.config import load_settings

    return build_pipeline(load_settings(surrogate={"secret": SECRET}))


def _run(p: Pipeline, sid: str, turns: list[tuple[str, str]]) -> list:
    return [p.process_sync(InputTurn(session_id=sid, turn_id=i, role=r, text=t, sent_at=0.0)).deid
            for i, (r, t) in enumerate(turns)]


def _values(out) -> list[tuple[str, str]]:
    return [(e.label, out.text[e.start : e.end]) for e in out.entities]


def test_the_issue_dialogue_leaks_nothing(pipeline):
    outs = _run(pipeline, "vm-issue", [
        ("student", "my login is tkorhonen_2011"),
        ("tutor", "tkorhonen_2011 has 3 badges now"),
        ("student", "my student number is 40917723"),
        ("tutor", "40917723 is enrolled in algebra"),
    ])
    for o in outs:
        assert "tkorhonen_2011" not in o.text.casefold() and "40917723" not in o.text
    login = _values(outs[0])[0]
    assert login[0] == "USERNAME" and _values(outs[1]) == [login]
    number = _values(outs[2])[0]
    assert number[0] == "ID_NUM" and _values(outs[3]) == [number]
    assert outs[1].entities[0].source == value_memory.SOURCE


def test_normalised_forms_get_the_same_surrogate(pipeline):
    outs = _run(pipeline, "vm-forms", [
        ("student", "my login is tkorhonen_2011"),
        ("tutor", "Great job @TKorhonen_2011! TKORHONEN_2011 is on the board"),
        ("student", "my student number is 40917723"),
        ("student", "sorry, it is 4091-7723 on the card"),
        ("student", "my phone is +1 (415) 293-0134"),
        ("tutor", "ok, 4152930134 noted; or is it 415.293.0134 or 1-415-293-0134?"),
        ("student", "email me at Maria.Lopez@Gmail.com"),
        ("tutor", "I will write to MARIA.LOPEZ@GMAIL.COM"),
    ])
    texts = " ".join(o.text for o in outs)
    for raw in ("korhonen", "40917723", "4091-7723", "4152930134", "415.293.0134", "293-0134", "maria.lopez"):
        assert raw not in texts.casefold(), raw
    user = _values(outs[0])[0][1]
    assert [v.lstrip("@").casefold() for _, v in _values(outs[1])] == [user.casefold()] * 2
    assert _values(outs[1])[0][1].startswith("@")  # the mention keeps its own "@" and case
    id_digits = _values(outs[2])[0][1]
    assert _values(outs[3])[0][1].replace("-", "") == id_digits
    phone = "".join(c for c in _values(outs[4])[0][1] if c.isdigit())[-10:]
    again = ["".join(c for c in v if c.isdigit())[-10:] for _, v in _values(outs[5])]
    assert again == [phone] * 3
    assert _values(outs[7])[0][1].casefold() == _values(outs[6])[0][1].casefold()


def test_same_turn_repeat_and_tutor_reply_reidentified(pipeline):
    outs = _run(pipeline, "vm-reply", [("student", "my username is qz_trombone77, yes qz_trombone77")])
    vals = _values(outs[0])
    assert len(vals) == 2 and vals[0] == vals[1] and "trombone" not in outs[0].text
    sur = vals[0][1]
    reply = InputTurn(session_id="vm-reply", turn_id=9, role="tutor", text=f"Welcome back, {sur}!", sent_at=0.0)
    back = asyncio.run(pipeline.reidentify(reply))
    assert back.text == "Welcome back, qz_trombone77!"


def test_short_numbers_and_other_sessions_are_not_affected(pipeline):
    outs = _run(pipeline, "vm-a", [("student", "my student number is 40917723"), ("student", "what is 4091 + 7723?")])
    assert "4091 + 7723" in outs[1].text  # separate numbers are not the ID
    other = _run(pipeline, "vm-b", [("student", "40917723 is the answer")])
    assert "40917723" in other[0].text  # memory is per session
    mem = SessionMemory()
    text = "my id is 2011 ok"
    assert not value_memory.remember(text, [Span(9, 13, "ID_NUM", "id_num")], mem)  # too short to recur safely


def test_memory_survives_the_sealed_state(pipeline):
    from plainsight.middleware.state_codec import SessionCodec
    from plainsight.surrogate.crypto import StateCipher

    _run(pipeline, "vm-seal", [("student", "my login is tkorhonen_2011")])
    state = pipeline.sessions.get("vm-seal")
    assert state.detect_memory.values == {"USERNAME": ["tkorhonen_2011"]}
    cipher = StateCipher({"k1": os.urandom(32)}, "k1")
    codec = SessionCodec(pipeline, cipher)
    blob = codec.encode(state)
    assert b"tkorhonen" not in blob
    restored = codec.decode("vm-seal", blob)
    assert restored.detect_memory.values == {"USERNAME": ["tkorhonen_2011"]}
    spans = pipeline.detector.detect("tkorhonen_2011 has 3 badges", TurnContext(role="tutor"), restored.detect_memory)
    assert [(s.start, s.end, s.label) for s in spans] == [(0, 14, "USERNAME")]


async def test_worker_restart_keeps_the_values_and_forget_erases_them(make_settings):
    from plainsight.consumers.worker import Worker

    s = make_settings()
    sid = "sess-vm"
    first = [
        (sid, turn_bytes(sid, 0, "my login is tkorhonen_2011")),
        (sid, turn_bytes(sid, 1, "my student number is 40917723")),
        (sid, turn_bytes(sid, 2, "my phone is +1 (415) 293-0134")),
        (sid, turn_bytes(sid, 3, "email me at Maria.Lopez@Gmail.com")),
    ]
    w1 = Worker(s, s.kafka.bootstrap_servers)
    t1 = await start_worker(w1)
    try:
        await produce(s, first)
        await read_topic(s, s.topics.output, len(first))
    finally:
        await stop_worker(w1, t1)

    later = [
        (sid, turn_bytes(sid, 4, "tkorhonen_2011 has 3 badges now", role="tutor")),
        (sid, turn_bytes(sid, 5, "40917723 is enrolled in algebra", role="tutor")),
        (sid, turn_bytes(sid, 6, "call 415.293.0134 or write to MARIA.LOPEZ@GMAIL.COM", role="tutor")),
    ]
    w2 = Worker(s, s.kafka.bootstrap_servers)  # a fresh worker: the memory comes from the sealed state
    t2 = await start_worker(w2)
    try:
        await produce(s, later)
        outs = await read_topic(s, s.topics.output, len(first) + len(later))
        by_turn = {json.loads(m.value)["turn_id"]: json.loads(m.value) for m in outs}
        assert w2.state_store.loaded >= 1
        for tid in (4, 5, 6):
            text = by_turn[tid]["text"]
            for raw in ("tkorhonen_2011", "40917723", "293.0134", "maria.lopez"):
                assert raw not in text.casefold(), (tid, raw)
        sur = lambda o: [o["text"][e["start"]:e["end"]] for e in o["entities"]]  # noqa: E731
        assert sur(by_turn[4]) == sur(by_turn[0]) and sur(by_turn[5]) == sur(by_turn[1])

        assert await run_forget(s, [sid]) == 0
        for _ in range(100):  # bounded: the worker's state tail picks the tombstone up
            if w2.pipeline.sessions.peek(sid) is None:
                break
            await asyncio.sleep(0.05)
        assert w2.pipeline.sessions.peek(sid) is None
        # the erased session no longer knows the value: without its cue it is not recognised
        await produce(s, [(sid, turn_bytes(sid, 7, "tkorhonen_2011 is back", role="tutor"))])
        outs = await read_topic(s, s.topics.output, len(first) + len(later) + 1)
        after = [json.loads(m.value) for m in outs if json.loads(m.value)["turn_id"] == 7][0]
        assert after["text"] == "tkorhonen_2011 is back" and after["entities"] == []
    finally:
        await stop_worker(w2, t2)


def test_tag_mode_numbers_the_normalised_forms_alike():
    from plainsight.middleware.config import load_settings

    p = build_pipeline(load_settings(surrogate={"secret": SECRET}, output={"deid_mode": "tag", "logs_mode": "tag"}))
    outs = _run(p, "vm-tag", [
        ("student", "my phone is +1 (415) 293-0134"),
        ("tutor", "ok 4152930134"),
        ("student", "my login is tkorhonen_2011"),
        ("tutor", "@TKorhonen_2011 hi"),
    ])
    assert [o.text for o in outs] == ["my phone is [PHONE_1]", "ok [PHONE_1]", "my login is [USERNAME_1]", "[USERNAME_1] hi"]
