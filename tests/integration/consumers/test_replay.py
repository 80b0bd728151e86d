"""Crashes and rebalances: nothing lost, duplicates byte-identical, surrogates consistent."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import yaml

from plainsight.benchmarks.faults import outputs_by_turn
from plainsight.consumers.worker import Worker

from tests.support import TEST_SECRETS_ENV, produce, read_topic, turn_bytes

NAMES = ["Marisol Quintero", "Tobias Lindqvist", "Amara Okonkwo", "Keanu Makoa", "Ingrid Solberg",
         "Rahul Bhattacharya", "Chloe Dubois", "Mateo Herrera", "Yuki Tanaka", "Zainab Haddad"]


def session_turns(i: int, n: int) -> list[str]:
    full = NAMES[i % len(NAMES)]
    first, last = full.split()
    lines = [f"Hi, my name is {full}.", f"Thanks {first}! What is 3 x 4?", "It's 12.",
             f"Great job {first}. My email is {first.lower()}.{last.lower()}@example.com if you need it.",
             f"{first.upper()} again, is 7 + 5 = 12?", f"Yes {first}, and {last} is a nice last name."]
    return [lines[k % len(lines)] for k in range(n)]


def _records(n_sessions: int, n_turns: int, prefix: str):
    recs = []
    for t in range(n_turns):
        for i in range(n_sessions):
            sid = f"{prefix}{i}"
            recs.append((sid, turn_bytes(sid, t, session_turns(i, n_turns)[t], sent_at=1_700_000_000.0 + t)))
    return recs


def _serve(s, cfg_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAINSIGHT_")}
    env.update(TEST_SECRETS_ENV)  # the same secret and key as the in-process workers of the tests
    return subprocess.Popen(
        [sys.executable, "-m", "plainsight.middleware.cli", "serve", "--config", str(cfg_path), "--bootstrap-servers",
         s.kafka.bootstrap_servers, "--no-metrics", "--log-level", "WARNING", "--max-runtime", "120"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


def _cfg(s, tmp_path):
    p = tmp_path / "serve.yaml"
    p.write_text(yaml.safe_dump({"topics": s.topics.model_dump(), "kafka": {
        "group_id": s.kafka.group_id, "partitions": s.kafka.partitions, "session_timeout_ms": 2000,
        "heartbeat_interval_ms": 400}, "worker": {"commit_interval_ms": 1000}}))
    return p


async def test_sigkill_mid_stream_replays_byte_identical(make_settings, tmp_path):
    s = make_settings()
    cfg = _cfg(s, tmp_path)
    n_sessions, n_turns = 20, 12
    records = _records(n_sessions, n_turns, "k")
    await produce(s, records)
    p1 = _serve(s, cfg)
    try:
        # wait (bounded) until the first worker is mid-stream
        seen = await read_topic(s, s.topics.output, len(records) // 4, timeout=90)
        assert len(seen) >= len(records) // 4
        p1.send_signal(signal.SIGKILL)
        p1.wait(10)
    finally:
        if p1.poll() is None:
            p1.kill()
    p2 = _serve(s, cfg)
    try:
        outs = await read_topic(s, s.topics.output, len(records), timeout=120, idle=1.0)
        logs = await read_topic(s, s.topics.logs, len(records), timeout=60, idle=0.5)
    finally:
        p2.send_signal(signal.SIGTERM)
        try:
            p2.wait(30)
        except subprocess.TimeoutExpired:
            p2.kill()
    for topic_out in (outs, logs):
        by = outputs_by_turn(topic_out)
        assert set(by) == {(f"k{i}", t) for i in range(n_sessions) for t in range(n_turns)}, "no turn lost"
        dups = {k: v for k, v in by.items() if len(v) > 1}
        assert dups, "the crash left processed-but-uncommitted turns to replay"
        for k, versions in dups.items():
            assert len(set(versions)) == 1, f"replayed duplicate of {k} differs"
    # the restarted worker continued each session's mapping: a session's first name always
    # gets the same replacement, before and after the crash
    by = outputs_by_turn(outs)
    for i in range(n_sessions):
        texts = [json.loads(by[(f"k{i}", t)][0])["text"] for t in range(n_turns)]
        first = NAMES[i % len(NAMES)].split()[0]
        assert all(first not in x and first.upper() not in x for x in texts)
        thanks = [x for x in texts if x.startswith("Thanks ")]
        assert len({x.split()[1] for x in thanks}) == 1, texts


async def test_rebalance_mid_session_keeps_surrogates(make_settings):
    s = make_settings(worker={"commit_interval_ms": 100})
    n_sessions, n_turns = 12, 10
    records = _records(n_sessions, n_turns, "r")
    first_half = [r for r in records if json.loads(r[1])["turn_id"] < n_turns // 2]
    second_half = [r for r in records if json.loads(r[1])["turn_id"] >= n_turns // 2]
    w1 = Worker(s, s.kafka.bootstrap_servers)
    await w1.start()
    t1 = asyncio.create_task(w1.run())
    await w1.wait_ready(30)
    w2 = None
    try:
        await produce(s, first_half)
        await read_topic(s, s.topics.output, len(first_half), timeout=60)
        # a second worker joins: partitions (and their sessions) move between workers
        w2 = Worker(s, s.kafka.bootstrap_servers)
        await w2.start()
        t2 = asyncio.create_task(w2.run())
        for _ in range(200):
            if w2._offsets and w1.stats.rebalances >= 2:
                break
            await asyncio.sleep(0.05)
        assert w2._offsets, "the second worker got partitions"
        await produce(s, second_half)
        outs = await read_topic(s, s.topics.output, len(records), timeout=60, idle=0.5)
    finally:
        for w, t in ((w1, t1), (w2, locals().get("t2"))):
            if w is not None and t is not None:
                w.request_stop()
                await asyncio.wait_for(t, 60)
                await w.stop()
    assert w2.stats.processed > 0 and w1.stats.processed > 0
    by = outputs_by_turn(outs)
    for i in range(n_sessions):
        texts = [json.loads(by[(f"r{i}", t)][0])["text"] for t in range(n_turns)]
        thanks = [x.split()[1] for x in texts if x.startswith("Thanks ")]
        assert len(set(thanks)) == 1, f"session r{i} changed its surrogate across the rebalance: {thanks}"
