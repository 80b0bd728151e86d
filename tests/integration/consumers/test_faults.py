"""Faults: broker restart (the worker reconnects and continues), LLM outage (degraded, no raw PII).

SIGKILLed workers are covered in test_replay.py; hostile input in test_hostile.py."""

from __future__ import annotations

import asyncio
import json
import time


from plainsight.consumers.broker import EmbeddedBroker
from plainsight.consumers.kafka import make_producer
from plainsight.consumers.worker import Worker
from plainsight.middleware.config import load_settings

from tests.support import read_topic, secret_overrides, start_worker, stop_worker, turn_bytes


async def _send_retrying(settings, records, deadline_s=60.0):
    """Produce with retries across a broker outage (the test's own producer must not lose input)."""
    i = 0
    end = time.monotonic() + deadline_s
    while i < len(records) and time.monotonic() < end:
        p = make_producer(settings, settings.kafka.bootstrap_servers, request_timeout_ms=3000)
        try:
            await p.start()
            while i < len(records):
                key, value = records[i]
                await p.send_and_wait(settings.topics.input, key=key.encode(), value=value)
                i += 1
                await asyncio.sleep(0.01)
        except Exception:
            await asyncio.sleep(0.3)
        finally:
            try:
                await asyncio.wait_for(p.stop(), 5)
            except Exception:
                pass
    return i


def _fast_settings(bootstrap):
    return load_settings(kafka={"bootstrap_servers": bootstrap, "partitions": 2, "session_timeout_ms": 2000,
                                "heartbeat_interval_ms": 400, "request_timeout_ms": 5000},
                         worker={"commit_interval_ms": 100}, metrics={"enabled": False}, **secret_overrides())


async def test_in_memory_broker_restart_worker_reconnects_and_continues():
    """An in-memory broker loses its topics and logs when it restarts mid-stream (the backlog
    is gone with it). The worker must not crash or stall: it reconnects, recreates its topics
    and processes what is sent once the broker is back."""
    broker = EmbeddedBroker()
    broker.start_sync()
    try:
        s = _fast_settings(broker.bootstrap_servers)
        w = Worker(s, broker.bootstrap_servers)
        task = await start_worker(w)
        records = [(f"s{i % 6}", turn_bytes(f"s{i % 6}", i, f"hi number {i}, Ana")) for i in range(100)]
        assert await _send_retrying(s, records) == 100
        await asyncio.to_thread(broker.restart_sync, 0.5)  # mid-stream
        await ensure_topics_retrying(s)  # (the worker also recreates them when a produce finds them gone)
        # once the worker is back (a probe turn comes out), everything sent is processed
        probe_ok = False
        for attempt in range(20):
            assert await _send_retrying(s, [("probe", turn_bytes("probe", 1000 + attempt, "probe"))]) == 1
            got = await read_topic(s, s.topics.output, 1, timeout=3)
            if any(json.loads(m.value)["session_id"] == "probe" for m in got):
                probe_ok = True
                break
        assert probe_ok, "the worker processes turns again after the broker restart"
        later = [(f"s{i % 6}", turn_bytes(f"s{i % 6}", i, f"hi number {i}, Ana")) for i in range(200, 300)]
        assert await _send_retrying(s, later) == 100
        outs = await read_topic(s, s.topics.output, 100, timeout=90, idle=1.0)
        assert not task.done()
        await stop_worker(w, task)
    finally:
        broker.stop_sync()
    ids = {json.loads(m.value)["turn_id"] for m in outs}
    assert set(range(200, 300)) <= ids, f"missing: {sorted(set(range(200, 300)) - ids)[:10]}"


async def ensure_topics_retrying(s):
    from plainsight.consumers.kafka import ensure_topics

    await ensure_topics(s, s.kafka.bootstrap_servers)


async def test_llm_outage_degrades_without_leaking(make_settings):
    from plainsight.benchmarks.llm_simulator import closed_port_url

    s = make_settings(llm={"enabled": True, "base_url": closed_port_url(), "api_key": "sk-test", "gate": "all",
                           "max_retries": 1, "timeout_s": 1.0, "latency_budget_ms": 1500})
    w = Worker(s, s.kafka.bootstrap_servers)
    task = await start_worker(w)
    texts = ["Hi, my name is Evangelina Ruiz and my email is evangelina.ruiz@example.com",
             "thanks Evangelina! can Marcus join? his number is (415) 555-0142",
             "What is 3 + 4?"]
    try:
        from tests.support import produce

        await produce(s, [("llm-s", turn_bytes("llm-s", i, t)) for i, t in enumerate(texts)])
        outs = await read_topic(s, s.topics.output, len(texts), timeout=60)
        logs = await read_topic(s, s.topics.logs, len(texts), timeout=30)
    finally:
        await stop_worker(w, task)
    assert len(outs) == len(texts)
    for m in outs + logs:
        o = json.loads(m.value)
        assert o["degraded"] is True, "an LLM outage is flagged on every output"
        for raw in ("Evangelina", "Ruiz", "evangelina.ruiz@example.com", "555-0142", "Marcus"):
            assert raw not in o["text"]
