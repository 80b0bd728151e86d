"""Session state in the compacted topic: continuity across workers, erasure, no plaintext at rest."""

from __future__ import annotations

import asyncio
import json

from plainsight.consumers.worker import Worker

from tests.support import produce, read_topic, run_forget, start_worker, stop_worker, turn_bytes


def _texts(records):
    return {(json.loads(m.value)["session_id"], json.loads(m.value)["turn_id"]): json.loads(m.value)["text"] for m in records}


def _replacements(record) -> list[str]:
    o = json.loads(record.value)
    return [o["text"][e["start"]:e["end"]] for e in sorted(o["entities"], key=lambda e: e["start"])]


async def test_state_survives_worker_restart_and_is_sealed(make_settings):
    s = make_settings()
    w1 = Worker(s, s.kafka.bootstrap_servers)
    t1 = await start_worker(w1)
    await produce(s, [("sess-a", turn_bytes("sess-a", 0, "Hi, I'm Marisol Quintero, email marisol.q@example.com"))])
    first = await read_topic(s, s.topics.output, 1)
    await stop_worker(w1, t1)

    w2 = Worker(s, s.kafka.bootstrap_servers)  # a new process would be the same: nothing in memory
    t2 = await start_worker(w2)
    try:
        await produce(s, [("sess-a", turn_bytes("sess-a", 1, "my other mail is mq.alt@example.net, or marisol.q@example.com"))])
        outs = await read_topic(s, s.topics.output, 2)
    finally:
        await stop_worker(w2, t2)
    second = [m for m in outs if json.loads(m.value)["turn_id"] == 1][0]
    email_before = _replacements(first[0])[-1]
    new_email, same_email = _replacements(second)[-2:]
    assert same_email == email_before, "the second worker continued the first worker's mapping"
    assert new_email != email_before
    assert w2.state_store.loaded >= 1
    text = json.loads(second.value)["text"]
    assert "marisol" not in text.lower() and "example.net" not in text

    state = await read_topic(s, s.topics.state, 1)
    assert state, "the session state was written to the state topic"
    for rec in state:
        assert rec.key == b"sess-a"
        blob = rec.value.lower()
        for raw in (b"marisol", b"quintero", b"example.com", b"mq.alt"):
            assert raw not in blob, "state at rest must be encrypted"


async def test_forget_erases_state_from_topic_and_running_worker(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        await produce(s, [("sess-f", turn_bytes("sess-f", 0, "my name is Evangelina Ruiz"))])
        await read_topic(s, s.topics.output, 1)
        assert w.pipeline.sessions.peek("sess-f") is not None

        assert await run_forget(s, ["sess-f"]) == 0
        for _ in range(100):  # bounded: the tail picks the tombstone up
            if w.pipeline.sessions.peek("sess-f") is None:
                break
            await asyncio.sleep(0.05)
        assert w.pipeline.sessions.peek("sess-f") is None, "the running worker dropped the session"
        assert w.state_store.erased >= 1
    finally:
        await stop_worker(w, t)
    recs = await read_topic(s, s.topics.state, 2, idle=0.3)
    last = [r for r in recs if r.key == b"sess-f"][-1]
    assert last.value is None, "the latest record for the session is a tombstone"

    # a new worker loading the partition does not resurrect the erased state
    w2 = Worker(s, s.kafka.bootstrap_servers)
    t2 = await start_worker(w2)
    try:
        assert "sess-f" not in w2.state_store._blobs
    finally:
        await stop_worker(w2, t2)
