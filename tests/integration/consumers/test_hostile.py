"""Hostile and malformed input (hypothesis-generated): each record is processed or dead-lettered,
the worker stays alive, nothing leaks into the DLQ. (`plainsight bench faults` runs 10,000.)"""

from __future__ import annotations

import asyncio
import json

import psutil

from plainsight.benchmarks.hostile import generate
from plainsight.consumers.worker import Worker
from plainsight.middleware.schemas import DeadLetter

from tests.support import produce, read_topic, turn_bytes

N = 600


async def test_hostile_inputs_processed_or_dead_lettered(make_settings):
    s = make_settings(worker={"max_payload_bytes": 65536})
    payloads = generate(N)
    assert len(payloads) == N
    w = Worker(s, s.kafka.bootstrap_servers)
    await w.start()
    task = asyncio.create_task(w.run())
    await w.wait_ready(30)
    rss0 = psutil.Process().memory_info().rss
    try:
        await produce(s, [(f"k{i % 17}", p) for i, p in enumerate(payloads)])
        await produce(s, [("k0", turn_bytes("alive", 1, "still alive after all that"))])
        for _ in range(1200):  # bounded wait for the worker to get through everything
            if w.stats.processed + w.stats.dead_letters >= N + 1:
                break
            await asyncio.sleep(0.05)
        assert not task.done(), "the worker is still running"
        dlq = await read_topic(s, s.topics.dlq, w.stats.dead_letters, timeout=30)
        outs = await read_topic(s, s.topics.output, w.stats.processed, timeout=30)
    finally:
        w.request_stop()
        await asyncio.wait_for(task, 60)
        await w.stop()
    rss1 = psutil.Process().memory_info().rss
    assert w.stats.processed + w.stats.dead_letters == N + 1, "every record: one output or one dead letter"
    assert len(dlq) == w.stats.dead_letters and len(outs) == w.stats.processed
    assert any(json.loads(m.value)["session_id"] == "alive" for m in outs)
    reasons = {DeadLetter.model_validate_json(m.value).reason for m in dlq}
    assert {"not_json", "too_large", "schema"} <= reasons
    for m in dlq:
        assert b"maria" not in m.value.lower()
        dl = json.loads(m.value)
        assert set(dl) >= {"reason", "detail", "topic", "partition", "offset", "payload_sha256"}
        assert len(dl["detail"]) < 300
    assert rss1 - rss0 < 300e6, "memory stays bounded"
