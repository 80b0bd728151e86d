"""The streaming worker against the real embedded Kafka-protocol broker (no Kafka mocks)."""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import random

import pytest
from aiokafka import TopicPartition

from plainsight.consumers.kafka import make_consumer
from plainsight.consumers.worker import Worker, _PartitionOffsets
from plainsight.middleware.pipeline import Pipeline
from plainsight.surrogate import SurrogateReplacer
from plainsight.middleware.schemas import DeadLetter, OutputTurn

from tests.support import produce, read_topic, start_worker, stop_worker, turn_bytes


class SlowPipeline(Pipeline):
    """The real pipeline, with a random await before each turn so sessions interleave."""

    def __init__(self, settings, max_delay=0.01, **kw):
        kw.setdefault("replacer", SurrogateReplacer.from_settings(settings))
        super().__init__(settings, **kw)
        self.max_delay = max_delay
        self.rng = random.Random(7)

    async def process(self, turn):
        await asyncio.sleep(self.rng.random() * self.max_delay)
        return await super().process(turn)


async def test_round_trip(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    task = await start_worker(w)
    try:
        await produce(s, [("sess-1", turn_bytes("sess-1", 1, "Hi, I'm Maria Lopez, email maria.lopez@gmail.com"))])
        deid = await read_topic(s, s.topics.output, 1)
        logs = await read_topic(s, s.topics.logs, 1)
    finally:
        await stop_worker(w, task)
    assert len(deid) == 1 and len(logs) == 1
    assert deid[0].key == b"sess-1"
    out = OutputTurn.model_validate_json(deid[0].value)
    assert out.session_id == "sess-1" and out.turn_id == 1 and out.role == "student"
    assert "maria.lopez@gmail.com" not in out.text and "Maria" not in out.text
    labels = {e.label for e in out.entities}
    assert {"NAME", "EMAIL"} <= labels
    for e in out.entities:  # positions refer to the output text, and never hold the raw value
        assert 0 <= e.start < e.end <= len(out.text)
    assert b"maria" not in deid[0].value.lower() and b"maria" not in logs[0].value.lower()
    assert out.degraded is False
    headers = dict(deid[0].headers)
    assert "total" in json.loads(headers["plainsight-timings-ms"])
    assert b"timings" not in deid[0].value and b"processed_at" not in deid[0].value, "payload stays deterministic"


async def test_per_session_order_50_sessions_interleaved(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers, pipeline=SlowPipeline(s, max_delay=0.02))
    task = await start_worker(w)
    n_sessions, n_turns = 50, 8
    records = [
        (f"s{i}", turn_bytes(f"s{i}", t, f"turn {t} of session {i}: what is {t} + {i}?"))
        for t in range(n_turns)
        for i in range(n_sessions)
    ]
    try:
        await produce(s, records)
        outs = await read_topic(s, s.topics.output, len(records), timeout=60)
    finally:
        await stop_worker(w, task)
    seen = collections.defaultdict(list)
    for m in outs:
        o = json.loads(m.value)
        seen[o["session_id"]].append(o["turn_id"])
    assert len(outs) == len(records)
    assert len(seen) == n_sessions
    for sid, ids in seen.items():
        assert ids == list(range(n_turns)), f"{sid} out of order: {ids}"
    assert w.stats.processed == len(records)


async def test_restart_mid_stream_loses_no_turn(make_settings):
    s = make_settings()
    n = 400
    records = [(f"s{i % 20}", turn_bytes(f"s{i % 20}", i, f"message {i}, thanks Ana")) for i in range(n)]
    await produce(s, records)

    w1 = Worker(s, s.kafka.bootstrap_servers, pipeline=SlowPipeline(s, max_delay=0.01))
    t1 = await start_worker(w1)
    for _ in range(300):  # bounded wait until it is mid-stream
        if w1.stats.processed >= n // 4:
            break
        await asyncio.sleep(0.05)
    assert 0 < w1.stats.processed < n
    await stop_worker(w1, t1)
    first = w1.stats.processed

    w2 = Worker(s, s.kafka.bootstrap_servers)
    t2 = await start_worker(w2)
    try:
        outs = await read_topic(s, s.topics.output, n, timeout=60, idle=0.5)
    finally:
        await stop_worker(w2, t2)
    ids = {json.loads(m.value)["turn_id"] for m in outs}
    assert ids == set(range(n))
    # a graceful stop commits what it finished, so the second worker doesn't redo it all
    assert w2.stats.processed <= n - first + s.worker.max_in_flight


BAD_INPUTS = {
    "not_json": b'{"session_id": "x", "text": "SECRETPII Maria Lopez',
    "invalid_utf8": b'{"session_id":"x","turn_id":1,"role":"student","text":"SECRETPII \xff\xfe","sent_at":1}',
    "schema_missing": json.dumps({"session_id": "x", "role": "student", "text": "SECRETPII no turn id"}).encode(),
    "schema_types": json.dumps(
        {"session_id": "x", "turn_id": [1], "role": "student", "text": "SECRETPII", "sent_at": "yesterday"}
    ).encode(),
    "empty_text": json.dumps({"session_id": "x", "turn_id": 1, "role": "student", "text": "   ", "sent_at": 1}).encode(),
    "too_large": turn_bytes("x", 1, "SECRETPII " * 20_000),
    "not_object": json.dumps(["SECRETPII", "Maria"]).encode(),
    "lone_surrogate": b'{"session_id":"x","turn_id":1,"role":"student","text":"SECRETPII \\ud800","sent_at":1}',
}
EXPECTED_REASON = {
    "not_json": "not_json",
    "invalid_utf8": "invalid_utf8",
    "schema_missing": "schema",
    "schema_types": "schema",
    "empty_text": "empty_text",
    "too_large": "too_large",
    "not_object": "not_object",
    "lone_surrogate": "invalid_utf8",
}


async def test_bad_input_goes_to_dlq_without_raw_text(make_settings, caplog):
    caplog.set_level(logging.DEBUG)
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    task = await start_worker(w)
    try:
        # one partition (same key) so the good turn after them proves the worker kept going
        await produce(s, [("k", v) for v in BAD_INPUTS.values()] + [("k", turn_bytes("k", 99, "still alive"))])
        dlq = await read_topic(s, s.topics.dlq, len(BAD_INPUTS), idle=0.3)
        good = await read_topic(s, s.topics.output, 1)
        await asyncio.sleep(0.5)  # let the committer run
        committed = await _committed(s)
    finally:
        await stop_worker(w, task)
    assert len(dlq) == len(BAD_INPUTS), "exactly one dead letter per bad record"
    reasons = sorted(DeadLetter.model_validate_json(m.value).reason for m in dlq)
    assert reasons == sorted(EXPECTED_REASON.values())
    for m in dlq:
        assert b"SECRETPII" not in m.value and b"Maria" not in m.value
        dl = DeadLetter.model_validate_json(m.value)
        assert dl.topic == s.topics.input and dl.offset >= 0 and len(dl.payload_sha256) == 64
    assert len(good) == 1 and json.loads(good[0].value)["turn_id"] == 99
    ours = "\n".join(
        r.getMessage() for r in caplog.records
        if r.name.startswith(("plainsight.middleware", "plainsight.consumers", "plainsight.surrogate"))
    )
    assert "dead letter" in ours
    assert "SECRETPII" not in ours and "Maria" not in ours
    assert sum(committed.values()) == len(BAD_INPUTS) + 1, "bad records are committed, not retried forever"


async def _committed(s) -> dict:
    c = make_consumer(s, s.kafka.bootstrap_servers)  # same group, not subscribed: just asks
    await c.start()
    try:
        out = {}
        for p in range(s.kafka.partitions):
            tp = TopicPartition(s.topics.input, p)
            out[p] = await c.committed(tp) or 0
        return out
    finally:
        await c.stop()


async def test_shutdown_drains_in_flight_turns(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers, pipeline=SlowPipeline(s, max_delay=0.0))

    class Slow(SlowPipeline):
        async def process(self, turn):
            await asyncio.sleep(0.4)
            return await Pipeline.process(self, turn)

    w.pipeline = Slow(s)
    task = await start_worker(w)
    n = 30
    await produce(s, [(f"s{i}", turn_bytes(f"s{i}", i, f"hello number {i}")) for i in range(n)])
    for _ in range(200):
        if w.in_flight >= n // 2:
            break
        await asyncio.sleep(0.02)
    assert w.in_flight > 0, "turns should be in flight when we ask to stop"
    await stop_worker(w, task)
    assert w.stats.processed == n, "every in-flight turn finished before exit"
    outs = await read_topic(s, s.topics.output, n, timeout=20)
    assert {json.loads(m.value)["turn_id"] for m in outs} == set(range(n))
    committed = await _committed(s)
    assert sum(committed.values()) == n, "all drained turns were committed"


def test_partition_offsets_commit_only_contiguous_prefix():
    po = _PartitionOffsets()
    for off in (10, 11, 12, 13):
        po.add(off)
    po.finish(11)
    po.finish(12)
    assert po.committable() is None, "10 is unfinished: nothing may be committed"
    po.finish(10)
    assert po.committable() == 13
    po.mark_committed(13)
    assert list(po.pending) == [13]
    po.finish(13)
    assert po.committable() == 14


async def test_backpressure_bounds_in_flight(make_settings):
    s = make_settings(worker={"max_in_flight": 5})

    class Slow(Pipeline):
        async def process(self, turn):
            await asyncio.sleep(0.05)
            return await super().process(turn)

    w = Worker(s, s.kafka.bootstrap_servers, pipeline=Slow(s, replacer=SurrogateReplacer.from_settings(s)))
    task = await start_worker(w)
    n = 60
    await produce(s, [(f"s{i}", turn_bytes(f"s{i}", i, "hi")) for i in range(n)])
    peak = 0
    for _ in range(400):
        peak = max(peak, w.in_flight)
        if w.stats.processed >= n:
            break
        await asyncio.sleep(0.01)
    await stop_worker(w, task)
    assert w.stats.processed == n
    assert 0 < peak <= 5


@pytest.mark.parametrize("n_workers", [2])
async def test_two_workers_share_partitions(make_settings, n_workers):
    s = make_settings()
    workers = [Worker(s, s.kafka.bootstrap_servers) for _ in range(n_workers)]
    tasks = []
    for w in workers:
        await w.start()
        tasks.append(asyncio.create_task(w.run()))
    n = 200
    try:
        await asyncio.wait_for(asyncio.gather(*(w.wait_ready(30) for w in workers)), 40)
        await asyncio.sleep(3)  # let the group settle
        await produce(s, [(f"s{i % 40}", turn_bytes(f"s{i % 40}", i, "hi Ana")) for i in range(n)])
        outs = await read_topic(s, s.topics.output, n, timeout=60)
    finally:
        for w, t in zip(workers, tasks):
            await stop_worker(w, t)
    assert {json.loads(m.value)["turn_id"] for m in outs} == set(range(n))
    assert sum(w.stats.processed for w in workers) >= n
