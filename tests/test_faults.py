"""Faults: broker restart (with persistent storage: no loss), LLM outage (degraded, no raw PII)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid

import pytest

from consumers.broker import EmbeddedBroker, free_port
from consumers.kafka import make_consumer, make_producer
from consumers.worker import Worker
from middleware.config import load_settings

from .conftest import read_topic, turn_bytes


@pytest.fixture
def s3_server():
    """A local S3-compatible server (moto) so the embedded broker can keep data across restarts."""
    exe = shutil.which("moto_server") or os.path.join(os.path.dirname(sys.executable), "moto_server")
    if not os.path.exists(exe):
        pytest.skip("moto[server] not installed (pip install -e '.[dev]'): no persistent broker storage")
    port = free_port()
    proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        import boto3

        bucket = f"tansu-{uuid.uuid4().hex[:8]}"
        boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id="test",
                     aws_secret_access_key="test", region_name="us-east-1").create_bucket(Bucket=bucket)
        yield {"bucket": bucket, "env": {"AWS_ENDPOINT": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
                                          "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
                                          "AWS_ALLOW_HTTP": "true"}}
    finally:
        proc.terminate()
        proc.wait(10)


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


async def test_broker_restart_with_persistent_storage_loses_nothing(s3_server):
    broker = EmbeddedBroker(storage_engine=f"s3://{s3_server['bucket']}/", env=s3_server["env"])
    broker.start_sync()
    try:
        s = load_settings(kafka={"bootstrap_servers": broker.bootstrap_servers, "partitions": 2,
                                 "session_timeout_ms": 2000, "heartbeat_interval_ms": 400,
                                 "request_timeout_ms": 5000},
                          worker={"commit_interval_ms": 100}, metrics={"enabled": False})
        w = Worker(s, broker.bootstrap_servers)
        await w.start()
        task = asyncio.create_task(w.run())
        await w.wait_ready(30)
        n = 120
        records = [(f"s{i % 6}", turn_bytes(f"s{i % 6}", i, f"hello number {i}, thanks Ana")) for i in range(n)]
        sender = asyncio.create_task(_send_retrying(s, records))
        for _ in range(200):  # bounded: restart once the stream is going
            if w.stats.processed >= n // 3:
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(broker.restart_sync, 1.0)
        sent = await asyncio.wait_for(sender, 90)
        assert sent == n
        outs = await read_topic(s, s.topics.output, n, timeout=90, idle=0.5)
        if os.environ.get("PLAINSIGHT_DEBUG_FAULTS"):
            ins = await read_topic(s, s.topics.input, n, timeout=10, idle=0.5)
            print("INPUT ids", sorted(json.loads(m.value)["turn_id"] for m in ins))
            print("OUT ids", sorted(json.loads(m.value)["turn_id"] for m in outs))
            print("stats", w.stats)
        assert not task.done(), "the worker survived the broker restart"
        w.request_stop()
        await asyncio.wait_for(task, 60)
        await w.stop()
    finally:
        broker.stop_sync()
    ids = {json.loads(m.value)["turn_id"] for m in outs}
    assert ids == set(range(n)), f"missing after restart: {sorted(set(range(n)) - ids)[:10]}"


async def test_llm_outage_degrades_without_leaking(make_settings):
    from middleware.llm.simulator import closed_port_url

    s = make_settings(llm={"enabled": True, "base_url": closed_port_url(), "api_key": "sk-test", "gate": "all",
                           "max_retries": 1, "timeout_s": 1.0, "latency_budget_ms": 1500})
    w = Worker(s, s.kafka.bootstrap_servers)
    await w.start()
    task = asyncio.create_task(w.run())
    await w.wait_ready(30)
    texts = ["Hi, my name is Evangelina Ruiz and my email is evangelina.ruiz@example.com",
             "thanks Evangelina! can Marcus join? his number is (415) 555-0142",
             "What is 3 + 4?"]
    try:
        from .conftest import produce

        await produce(s, [("llm-s", turn_bytes("llm-s", i, t)) for i, t in enumerate(texts)])
        outs = await read_topic(s, s.topics.output, len(texts), timeout=60)
        logs = await read_topic(s, s.topics.logs, len(texts), timeout=30)
    finally:
        w.request_stop()
        await asyncio.wait_for(task, 60)
        await w.stop()
    assert len(outs) == len(texts)
    for m in outs + logs:
        o = json.loads(m.value)
        assert o["degraded"] is True, "an LLM outage is flagged on every output"
        for raw in ("Evangelina", "Ruiz", "evangelina.ruiz@example.com", "555-0142", "Marcus"):
            assert raw not in o["text"]
