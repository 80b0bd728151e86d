"""Slow fault scenarios for `plainsight bench faults`, each followed by a leak scan.

1. ``sigkill``: a worker process is SIGKILLed mid-stream and restarted: every input turn still
   gets both outputs, and every duplicate is byte-identical.
2. ``broker_restart``: the (in-memory) embedded broker restarts mid-stream: the worker
   reconnects, recreates its topics and processes the turns sent afterwards.
3. ``llm_outage``: the LLM endpoint is down: every output is flagged degraded, none leaks.
4. ``hostile``: 10,000 generated malformed or hostile records: each is processed or
   dead-lettered, the worker stays up, its memory stays bounded.
5. ``heavy_session`` (#28): light sessions at a steady rate, then the same with one session
   sending maximum-size turns (thousands of e-mails) and long tutor replies: the light sessions'
   p99 latency with it, over their p99 without it (target: within 2x).
6. ``oversized_state``: one session sends maximum-size turns full of new values: every turn is
   answered or dead-lettered (the partition keeps moving), no output is duplicated, and the
   largest state record stays under the broker's record limit.
7. ``forget_race``: 20 sessions each send a turn that races their ``plainsight forget``; erased
   values found in the newest state of each session, before and after a worker restart (0 of 20).
8. ``forged_reply``: replies copied from the logs topic, with another session's token, or with a
   made-up one: values restored (0), dead letters (all of them).

Everything the workers wrote (output, logging, DLQ and state topics, worker logs, metrics) is
then scanned for the raw values of the input (benchmarks/leak_scan.py).
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import tempfile
import time
import uuid
from pathlib import Path

from .stream import WorkerFailed, WorkerProcs, default_data_dir, dialogues_with_values, write_bench_config
from plainsight.consumers.broker import EmbeddedBroker
from plainsight.consumers.kafka import ensure_topics, make_consumer, make_producer
from .leak_scan import ValueSet, scan as _scan

CANARY_TEMPLATES = [
    "Hi, my name is {first} {last} and my email is {first_l}.{last_l}@canary-mail.org",
    "you can call me at +1 (415) 8{nn}-27{nn}, I'm {first} {last}",
    "my student id is S{id} — {first} {last} here",
]
CANARY_FIRST = ["Zorvath", "Ottoline", "Ferdinanda", "Quillon", "Marisabel", "Thaddeus", "Ysolde", "Bartholomew"]
CANARY_LAST = ["Quellin", "Brackwater", "Okonkwo-Reyes", "Vantongeren", "Szczepanik", "Abernathy", "Mbeki", "Lindqvist"]


def scan(values, **kw):
    from plainsight.surrogate.crypto import MAGIC

    from .stream import bench_secret_values

    # the workers' surrogate secret and state key must not appear anywhere either
    kw.setdefault("secrets", bench_secret_values())
    return _scan(values, state_magic=MAGIC, **kw)


def canary_turn(i: int) -> tuple[str, list[str]]:
    first, last = CANARY_FIRST[i % len(CANARY_FIRST)], CANARY_LAST[(i * 3) % len(CANARY_LAST)]
    tpl = CANARY_TEMPLATES[i % len(CANARY_TEMPLATES)]
    nn, id_ = f"{i % 100:02d}", f"{7_300_000 + i:08d}"
    text = tpl.format(first=first, last=last, first_l=first.lower(), last_l=last.lower(), nn=nn, id=id_)
    values = [first, last]
    if "email" in tpl:
        values.append(f"{first.lower()}.{last.lower()}@canary-mail.org")
    if "-27" in tpl:
        values.append(f"8{nn}-27{nn}")
    if "student id" in tpl:
        values.append(f"S{id_}")
    return text, values


def dev_dialogues_with_values(data_dir: Path, files=("ncte_uptake.jsonl", "mathdial.jsonl", "bridge.jsonl")):
    return dialogues_with_values(data_dir, files)


def build_traffic(dialogues, n_turns: int, n_sessions: int, prefix: str, canary_every: int = 20):
    """(plan, values): turns of ``n_sessions`` interleaved sessions, with canary turns mixed in."""
    import random

    rng = random.Random(7)
    order = list(range(len(dialogues)))
    rng.shuffle(order)
    vs = ValueSet()
    sessions = []
    for i in range(n_sessions):
        turns, values = dialogues[order[i % len(order)]] if dialogues else ([("student", "hello")], [])
        sid = f"{prefix}-s{i}"
        for v in values:
            vs.add(sid, v, "gold")
        sessions.append({"id": sid, "turns": list(turns), "pos": 0, "n": 0})
    plan = []
    k = 0
    nxt = n_sessions
    while len(plan) < n_turns:
        progressed = False
        for s in sessions:
            if s["pos"] >= len(s["turns"]) and dialogues:  # the session goes on with another dialogue
                turns, values = dialogues[order[nxt % len(order)]]
                nxt += 1
                for v in values:
                    vs.add(s["id"], v, "gold")
                s["turns"], s["pos"] = list(turns), 0
            if len(plan) >= n_turns:
                break
            if len(plan) % canary_every == 0:
                text, values = canary_turn(k)
                k += 1
                for v in values:
                    vs.add(s["id"], v, "canary")
                plan.append((s["id"], s["n"], "student", text))
                s["n"] += 1
                progressed = True
                continue
            if s["pos"] < len(s["turns"]):
                role, text = s["turns"][s["pos"]]
                s["pos"] += 1
                plan.append((s["id"], s["n"], role, text[:2000]))
                s["n"] += 1
                progressed = True
        if not progressed:
            break
    return plan, vs


async def _produce(settings, bootstrap, plan, rate: float = 0.0):
    p = make_producer(settings, bootstrap)
    await p.start()
    try:
        t0 = time.monotonic()
        for i, (sid, tid, role, text) in enumerate(plan):
            await p.send(settings.topics.input, key=sid.encode(), value=json.dumps(
                {"session_id": sid, "turn_id": tid, "role": role, "text": text, "sent_at": time.time()}).encode())
            if rate > 0 and i % 50 == 0:
                ahead = i / rate - (time.monotonic() - t0)
                if ahead > 0:
                    await asyncio.sleep(ahead)
        await p.flush()
    finally:
        await p.stop()


async def read_all(settings, bootstrap, topic, expect: int = 0, timeout: float = 60.0, idle: float = 2.0,
                   alive=None):
    """Records of ``topic`` until ``expect`` arrived and nothing more came for ``idle`` seconds.
    ``alive`` (e.g. ``WorkerProcs.check_alive``) is called while waiting: a dead worker ends the
    wait with its error instead of a silent timeout."""
    c = make_consumer(settings, bootstrap, topic, group_id=f"faults-reader-{uuid.uuid4().hex[:8]}",
                      max_poll_records=5000)
    await c.start()
    out = []
    try:
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        while time.monotonic() < deadline:
            batch = await c.getmany(timeout_ms=100, max_records=5000)
            got = sum(len(v) for v in batch.values())
            for _tp, msgs in batch.items():
                out.extend(msgs)
            if got:
                last = time.monotonic()
            if len(out) >= expect and time.monotonic() - last >= idle:
                break
            if alive is not None:
                alive()
    finally:
        await c.stop()
    return out


def outputs_by_turn(records):
    """Output records grouped by (session_id, turn_id): a turn with two entries was replayed."""
    d = collections.defaultdict(list)
    for m in records:
        o = json.loads(m.value)
        d[(o["session_id"], o["turn_id"])].append(m.value)
    return d


class Scenario:
    """One scenario's broker, config and worker processes; collects what to scan."""

    def __init__(self, name: str, log_dir: str, partitions: int = 6, extra_args=None, settings_over=None):
        self.name = name
        self.log_dir = log_dir
        self.prefix = f"faults-{name}-{uuid.uuid4().hex[:4]}"
        self.partitions = partitions
        self.extra_args = extra_args or []
        self.settings_over = settings_over or {}
        self.broker = EmbeddedBroker()
        self.procs = None
        self.metrics_text: list[str] = []

    async def start(self, workers: int = 1, values: ValueSet | None = None, ready_timeout: float = 120.0):
        from plainsight.middleware.config import load_settings

        bootstrap = await self.broker.start()
        self.config = write_bench_config({"worker": {"commit_interval_ms": 500}, **self.settings_over}, self.prefix,
                                         self.partitions, f"{self.prefix}-g")
        self.settings = load_settings(self.config, kafka={"bootstrap_servers": bootstrap})
        await ensure_topics(self.settings, bootstrap)
        self.procs = WorkerProcs(workers, bootstrap, self.config, self.extra_args, log_dir=self.log_dir, metrics=True)
        if values is not None:
            self.procs.mask_values = [v for _k, v in values.all_values()]
        self.procs.start()
        # a worker that exits or never gets ready fails the scenario now, with its last log lines
        await asyncio.to_thread(self.procs.wait_ready, ready_timeout)
        return bootstrap

    async def wait_outputs(self, n: int, timeout: float = 120.0):
        return await read_all(self.settings, self.broker.bootstrap_servers, self.settings.topics.output, n,
                              timeout=timeout, idle=1.0, alive=self.procs.check_alive)

    async def collect(self, values: ValueSet, n_expected: int):
        s, b = self.settings, self.broker.bootstrap_servers
        self.procs.check_alive()
        outs = await read_all(s, b, s.topics.output, n_expected, idle=1.0, alive=self.procs.check_alive)
        logs = await read_all(s, b, s.topics.logs, n_expected, idle=1.0, alive=self.procs.check_alive)
        dlq = await read_all(s, b, s.topics.dlq, 0, timeout=10, idle=1.0)
        state = await read_all(s, b, s.topics.state, 0, timeout=20, idle=1.0)
        self.metrics_text = self.procs.scrape_metrics()
        return outs, logs, dlq, state

    async def stop(self):
        if self.procs is not None:
            self.procs.stop()
        await self.broker.stop()
        try:
            os.unlink(self.config)
        except OSError:
            pass

    def worker_logs(self) -> list[str]:
        return [p.read_text(errors="replace") for p in Path(self.log_dir).glob("worker-*.log")]


async def sigkill(dialogues, n_turns: int, log_dir: str) -> dict:
    sc = Scenario("sigkill", log_dir)
    plan, values = build_traffic(dialogues, n_turns, 100, sc.prefix)
    try:
        await sc.start(1, values)
        # send at a steady rate, and SIGKILL the worker while turns are still arriving
        sender = asyncio.create_task(_produce(sc.settings, sc.broker.bootstrap_servers, plan, rate=400))
        await read_all(sc.settings, sc.broker.bootstrap_servers, sc.settings.topics.output, len(plan) // 3,
                       timeout=180, idle=0.0, alive=sc.procs.check_alive)
        sc.procs.kill_one(0)
        sc.procs.start_one()
        await asyncio.to_thread(sc.procs.wait_ready)
        await sender
        outs, logs, dlq, state = await sc.collect(values, len(plan))
        worker_logs = sc.worker_logs()
    finally:
        await sc.stop()
    expected = {(sid, tid) for sid, tid, _r, _t in plan}
    res = {"turns": len(plan)}
    for name, recs in (("output", outs), ("logs", logs)):
        by = outputs_by_turn(recs)
        res[f"{name}_missing"] = len(expected - set(by))
        res[f"{name}_duplicated_turns"] = sum(1 for v in by.values() if len(v) > 1)
        res[f"{name}_duplicates_differing"] = sum(1 for v in by.values() if len(set(v)) > 1)
    rep = scan(values, outputs=[m.value for m in outs + logs], dlq=[m.value for m in dlq],
               state=[m.value for m in state], logs=worker_logs, metrics=sc.metrics_text)
    res["leak_scan"] = rep.summary()
    return res


async def broker_restart(dialogues, n_turns: int, log_dir: str) -> dict:
    sc = Scenario("broker", log_dir, partitions=4)
    plan, values = build_traffic(dialogues, n_turns, 50, sc.prefix)
    before, after = plan[: len(plan) // 2], plan[len(plan) // 2:]
    try:
        await sc.start(1, values)
        await _produce(sc.settings, sc.broker.bootstrap_servers, before)
        await sc.wait_outputs(len(before) // 3, timeout=120)
        t0 = time.monotonic()
        await asyncio.to_thread(sc.broker.restart_sync, 1.0)
        await ensure_topics(sc.settings, sc.broker.bootstrap_servers)
        # probe until the worker is back
        recovered_s = None
        for attempt in range(60):
            probe = [(f"{sc.prefix}-probe", attempt, "student", "probe")]
            await _produce(sc.settings, sc.broker.bootstrap_servers, probe)
            got = await read_all(sc.settings, sc.broker.bootstrap_servers, sc.settings.topics.output, 1, timeout=2, idle=0.2)
            if any(json.loads(m.value)["session_id"].endswith("-probe") for m in got):
                recovered_s = time.monotonic() - t0
                break
        await _produce(sc.settings, sc.broker.bootstrap_servers, after)
        outs, logs, dlq, state = await sc.collect(values, len(after))
        alive = all(p.poll() is None for p in sc.procs.procs)
        worker_logs = sc.worker_logs()
    finally:
        await sc.stop()
    got = set(outputs_by_turn(outs))
    expected_after = {(sid, tid) for sid, tid, _r, _t in after}
    rep = scan(values, outputs=[m.value for m in outs + logs], dlq=[m.value for m in dlq],
               state=[m.value for m in state], logs=worker_logs, metrics=sc.metrics_text)
    return {"turns_before": len(before), "turns_after": len(after), "worker_alive": alive,
            "recovered_after_s": None if recovered_s is None else round(recovered_s, 1),
            "after_restart_missing": len(expected_after - got), "leak_scan": rep.summary(),
            "note": "in-memory broker: turns not yet processed when it restarted are lost with it"}


async def llm_outage(dialogues, n_turns: int, log_dir: str) -> dict:
    from .llm_simulator import closed_port_url

    sc = Scenario("llm", log_dir, extra_args=["--llm-base-url", closed_port_url(), "--llm-gate", "all",
                                              "--llm-budget-ms", "1500"],
                  settings_over={"llm": {"max_retries": 1, "timeout_s": 1.0}})
    plan, values = build_traffic(dialogues, n_turns, 50, sc.prefix, canary_every=5)
    os.environ.setdefault("OPENAI_API_KEY", "sk-unused")
    try:
        await sc.start(1, values)
        await _produce(sc.settings, sc.broker.bootstrap_servers, plan)
        outs, logs, dlq, state = await sc.collect(values, len(plan))
        worker_logs = sc.worker_logs()
    finally:
        await sc.stop()
    degraded = sum(1 for m in outs if json.loads(m.value).get("degraded"))
    rep = scan(values, outputs=[m.value for m in outs + logs], dlq=[m.value for m in dlq],
               state=[m.value for m in state], logs=worker_logs, metrics=sc.metrics_text)
    return {"turns": len(plan), "outputs": len(outs), "degraded": degraded, "leak_scan": rep.summary()}


async def hostile(n: int, log_dir: str) -> dict:
    import psutil

    from .hostile import generate

    sc = Scenario("hostile", log_dir, partitions=4)
    payloads = generate(n)
    canary_text, canary_values = canary_turn(1)
    values = ValueSet()
    for v in canary_values:
        values.add("hostile-canary", v, "canary")
    try:
        await sc.start(1, values)
        pid = sc.procs.procs[0].pid
        proc = psutil.Process(pid)
        await asyncio.sleep(1.0)
        rss0 = proc.memory_info().rss
        p = make_producer(sc.settings, sc.broker.bootstrap_servers)
        await p.start()
        try:
            for i, raw in enumerate(payloads):
                await p.send(sc.settings.topics.input, key=f"h{i % 64}".encode(), value=raw)
            await p.send(sc.settings.topics.input, key=b"hostile-canary", value=json.dumps(
                {"session_id": "hostile-canary", "turn_id": 0, "role": "student", "text": canary_text,
                 "sent_at": time.time()}).encode())
            await p.flush()
        finally:
            await p.stop()
        s, b = sc.settings, sc.broker.bootstrap_servers
        deadline = time.monotonic() + 600
        outs, dlq = [], []
        rss_peak = rss0
        while time.monotonic() < deadline:
            outs = await read_all(s, b, s.topics.output, 0, timeout=5, idle=0.5)
            dlq = await read_all(s, b, s.topics.dlq, 0, timeout=5, idle=0.5)
            rss_peak = max(rss_peak, proc.memory_info().rss)
            if len(outs) + len(dlq) >= n + 1:
                break
            await asyncio.sleep(2)
        alive = proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
        rss1 = proc.memory_info().rss
        _o, logs, _d, state = await sc.collect(values, 0)
        worker_logs = sc.worker_logs()
    finally:
        await sc.stop()
    reasons = collections.Counter(json.loads(m.value)["reason"] for m in dlq)
    rep = scan(values, outputs=[m.value for m in outs + logs], dlq=[m.value for m in dlq],
               state=[m.value for m in state], logs=worker_logs, metrics=sc.metrics_text)
    return {"inputs": n + 1, "processed": len(outs), "dead_lettered": len(dlq),
            "unaccounted": n + 1 - len(outs) - len(dlq), "dlq_reasons": dict(reasons), "worker_alive": alive,
            "rss_start_mb": round(rss0 / 1e6, 1), "rss_peak_mb": round(rss_peak / 1e6, 1),
            "rss_end_mb": round(rss1 / 1e6, 1), "leak_scan": rep.summary()}


def _p99(xs: list[float]) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(0.99 * (len(xs) - 1))))]


def _latencies_ms(records, sids: set[str] | None = None) -> list[float]:
    """Input ``sent_at`` → output ``plainsight-processed-at`` header, per output record (ms)."""
    out = []
    for m in records:
        o = json.loads(m.value)
        if sids is not None and o["session_id"] not in sids:
            continue
        h = dict(m.headers or ())
        if "plainsight-processed-at" not in h:
            continue
        out.append((float(h["plainsight-processed-at"]) - float(o["sent_at"])) * 1e3)
    return out


def _heavy_turn(i: int, size: int = 60_000) -> str:
    parts, n = [], 0
    while n < size:
        e = f"writer{i}x{len(parts)}.pupil{len(parts)}@class{len(parts) % 97}.example.org"
        parts.append(e)
        n += len(e) + 2
    return ", ".join(parts)[:size]


async def _send(settings, bootstrap, topic, records):
    p = make_producer(settings, bootstrap)
    await p.start()
    try:
        for key, value in records:
            await p.send(topic, key=key.encode(), value=value)
        await p.flush()
    finally:
        await p.stop()


def _turn(sid, tid, text, role="student", **extra) -> bytes:
    return json.dumps({"session_id": sid, "turn_id": tid, "role": role, "text": text, "sent_at": time.time(),
                       **extra}).encode()


async def heavy_session(dialogues, n_turns: int, log_dir: str, heavy_turns: int = 6) -> dict:
    sc = Scenario("heavy", log_dir, partitions=4)
    plan, values = build_traffic(dialogues, n_turns, 40, sc.prefix)
    half = len(plan) // 2
    try:
        await sc.start(1, values)
        s, b = sc.settings, sc.broker.bootstrap_servers
        light = {sid for sid, *_ in plan}
        # phase 1: the light sessions alone, at a steady rate
        await _produce(s, b, plan[:half], rate=100)
        outs1 = await read_all(s, b, s.topics.output, half, timeout=300, idle=1.0, alive=sc.procs.check_alive)
        base = _latencies_ms(outs1, light)
        # phase 2: the same rate, while one session sends maximum-size turns and long replies
        heavy = f"{sc.prefix}-heavy"
        sender = asyncio.create_task(_produce(s, b, plan[half:], rate=100))
        t0 = time.monotonic()
        sent_heavy = 0
        for i in range(heavy_turns):
            await _send(s, b, s.topics.input, [(heavy, _turn(heavy, i, _heavy_turn(i)))])
            sent_heavy += 1
            got = await read_all(s, b, s.topics.output, 0, timeout=5, idle=0.3)
            mine = [json.loads(m.value) for m in got if json.loads(m.value)["session_id"] == heavy]
            if mine:  # a long reply that quotes the session's surrogates, with its reply token
                reply = (mine[-1]["text"] + " ") * 1
                await _send(s, b, s.topics.replies_in, [(heavy, _turn(heavy, f"r{i}", reply[:60_000], role="tutor",
                                                                       reply_token=mine[-1]["reply_token"]))])
            await asyncio.sleep(0.5)
        await sender
        outs2 = await read_all(s, b, s.topics.output, len(plan) + 1, timeout=600, idle=2.0, alive=sc.procs.check_alive)
        heavy_s = time.monotonic() - t0
        n1 = {(json.loads(m.value)["session_id"], json.loads(m.value)["turn_id"]) for m in outs1}
        with_heavy = _latencies_ms([m for m in outs2 if (json.loads(m.value)["session_id"],
                                                        json.loads(m.value)["turn_id"]) not in n1], light)
        _o, logs, dlq, state = await sc.collect(values, 0)
        replies = await read_all(s, b, s.topics.replies_out, 0, timeout=10, idle=1.0)
        worker_logs = sc.worker_logs()
    finally:
        await sc.stop()
    reasons = collections.Counter(json.loads(m.value)["reason"] for m in dlq)
    rep = scan(values, outputs=[m.value for m in outs2 + logs], dlq=[m.value for m in dlq],
               state=[m.value for m in state], logs=worker_logs, metrics=sc.metrics_text)
    reply_ms = [json.loads(dict(m.headers or ()).get("plainsight-timings-ms", b"{}")).get("reidentify")
                for m in replies]
    p_base, p_heavy = _p99(base), _p99(with_heavy)
    return {"light_turns": len(plan), "heavy_turns": sent_heavy, "heavy_phase_s": round(heavy_s, 1),
            "p99_ms_without": None if p_base is None else round(p_base, 1),
            "p99_ms_with": None if p_heavy is None else round(p_heavy, 1),
            "p99_ratio": None if not p_base or p_heavy is None else round(p_heavy / p_base, 2),
            "max_state_record_bytes": max((len(m.value or b"") for m in state), default=0),
            "heavy_replies_reidentified": len(replies),
            "heavy_reply_reidentify_ms_max": max((x for x in reply_ms if x is not None), default=None),
            "dlq_reasons": dict(reasons), "leak_scan": rep.summary()}


async def oversized_state(log_dir: str, n_turns: int = 30) -> dict:
    sc = Scenario("oversized", log_dir, partitions=2)
    sid = f"{sc.prefix}-big"
    values = ValueSet()
    try:
        await sc.start(1, values)
        s, b = sc.settings, sc.broker.bootstrap_servers
        await _send(s, b, s.topics.input, [(sid, _turn(sid, i, _heavy_turn(i))) for i in range(n_turns)]
                    + [(sid, _turn(sid, n_turns, "still here, thanks"))])
        deadline = time.monotonic() + 600
        outs, dlq = [], []
        while time.monotonic() < deadline:
            outs = await read_all(s, b, s.topics.output, 0, timeout=5, idle=0.5)
            dlq = await read_all(s, b, s.topics.dlq, 0, timeout=5, idle=0.5)
            if len(outputs_by_turn(outs)) + len(dlq) >= n_turns + 1:
                break
            sc.procs.check_alive()
            await asyncio.sleep(2)
        _o, logs, _d, state = await sc.collect(values, 0)
        metrics = sc.metrics_text
    finally:
        await sc.stop()
    by = outputs_by_turn(outs)
    reasons = collections.Counter(json.loads(m.value)["reason"] for m in dlq)
    capped = sum(float(line.rsplit(" ", 1)[1]) for text in metrics for line in text.splitlines()
                 if line.startswith('plainsight_state_events_total{event="capped_value"}'))
    return {"turns": n_turns + 1, "answered": len(by), "dead_lettered": len(dlq),
            "unaccounted": n_turns + 1 - len(by) - len(dlq), "dlq_reasons": dict(reasons),
            "duplicated_turns": sum(1 for v in by.values() if len(v) > 1),
            "last_turn_answered": (sid, n_turns) in by, "state_records": len(state),
            "max_state_record_bytes": max((len(m.value or b"") for m in state), default=0),
            "capped_values": capped}


def _state_holds(cipher, sid: str, blob: bytes | None, needle: str) -> bool:
    import base64

    if blob is None:
        return False
    doc = json.loads(cipher.decrypt(blob, sid))
    rep = doc.get("replace") or {}
    raw = base64.b64decode(rep["b"]) if "b" in rep else json.dumps(rep.get("d")).encode()
    return needle.encode() in raw or needle.encode() in json.dumps(doc).encode()


async def _latest_state(s, b) -> dict[str, bytes | None]:
    latest = {}
    for m in await read_all(s, b, s.topics.state, 0, timeout=20, idle=1.0):
        latest[m.key.decode("utf-8", "replace")] = m.value
    return latest


async def forget_race(log_dir: str, n: int = 20) -> dict:
    import subprocess
    import sys

    from plainsight.surrogate.crypto import StateCipher

    from .stream import bench_secret_env

    sc = Scenario("forget", log_dir, partitions=4)
    sids = [f"{sc.prefix}-f{i}" for i in range(n)]
    values = ValueSet()
    for i, sid in enumerate(sids):
        values.add(sid, f"erased.{i}@forget-race.org", "canary")
    try:
        await sc.start(1, values)
        s, b = sc.settings, sc.broker.bootstrap_servers
        env = dict(os.environ)
        env.update(bench_secret_env(sc.config))
        from .stream import _BENCH_SECRETS

        env.update(_BENCH_SECRETS)
        from plainsight.middleware.config import load_settings

        cipher = StateCipher.from_settings(
            load_settings(sc.config, surrogate={"keys_file": _BENCH_SECRETS["PLAINSIGHT_SURROGATE__KEYS_FILE"]}))
        await _send(s, b, s.topics.input, [(sid, _turn(sid, 0, f"my email is erased.{i}@forget-race.org"))
                                           for i, sid in enumerate(sids)])
        await read_all(s, b, s.topics.output, n, timeout=120, idle=0.5, alive=sc.procs.check_alive)
        # each session's racing turn (a new value: it writes state) goes out as forget runs
        racing = asyncio.create_task(_send(s, b, s.topics.input, [
            (sid, _turn(sid, 1, f"also erased.{i}@forget-race.org and 212-555-01{i:02d}")) for i, sid in enumerate(sids)]))
        cmd = [sys.executable, "-m", "plainsight.middleware.cli", "forget", "--config", sc.config,
               "--bootstrap-servers", b, *sids]
        proc = await asyncio.to_thread(subprocess.run, cmd, env=env, capture_output=True, text=True, timeout=120)
        await racing
        await asyncio.sleep(3.0)
        latest = await _latest_state(s, b)
        before = sum(_state_holds(cipher, sid, latest.get(sid), f"erased.{i}@forget-race.org") for i, sid in enumerate(sids))
        sc.procs.kill_one(0)
        sc.procs.start_one()
        await asyncio.to_thread(sc.procs.wait_ready)
        await asyncio.sleep(3.0)
        latest = await _latest_state(s, b)
        after = sum(_state_holds(cipher, sid, latest.get(sid), f"erased.{i}@forget-race.org") for i, sid in enumerate(sids))
    finally:
        await sc.stop()
    return {"sessions": n, "forget_exit": proc.returncode, "came_back": before, "came_back_after_restart": after,
            "forget_report_lines": len(proc.stderr.splitlines())}


async def forged_reply(log_dir: str, n: int = 20) -> dict:
    sc = Scenario("forged", log_dir, partitions=4)
    values = ValueSet()
    sids = [f"{sc.prefix}-r{i}" for i in range(n)]
    plan = []
    for i, sid in enumerate(sids):
        text, vals = canary_turn(i)
        for v in vals:
            values.add(sid, v, "canary")
        plan.append((sid, text))
    try:
        await sc.start(1, values)
        s, b = sc.settings, sc.broker.bootstrap_servers
        await _send(s, b, s.topics.input, [(sid, _turn(sid, 0, text)) for sid, text in plan])
        outs = {json.loads(m.value)["session_id"]: json.loads(m.value)
                for m in await read_all(s, b, s.topics.output, n, timeout=120, idle=0.5, alive=sc.procs.check_alive)}
        logs = {json.loads(m.value)["session_id"]: json.loads(m.value)
                for m in await read_all(s, b, s.topics.logs, n, timeout=60, idle=0.5)}
        forged = []
        for i, sid in enumerate(sids):
            text = logs[sid]["text"]
            other = outs[sids[(i + 1) % n]]["reply_token"]
            forged += [(sid, _turn(sid, f"copy{i}", text, role="tutor")),
                       (sid, _turn(sid, f"other{i}", text, role="tutor", reply_token=other)),
                       (sid, _turn(sid, f"made{i}", text, role="tutor", reply_token="rt1." + "ab" * 16 + "." + "cd" * 16))]
        await _send(s, b, s.topics.replies_in, forged)
        dlq = await read_all(s, b, s.topics.dlq, len(forged), timeout=120, idle=1.0)
        replies = await read_all(s, b, s.topics.replies_out, 0, timeout=10, idle=2.0)
    finally:
        await sc.stop()
    restored = sum(1 for m in replies for v in values.all_values() if v[1] in json.loads(m.value)["text"])
    reasons = collections.Counter(json.loads(m.value)["reason"] for m in dlq)
    return {"forged_replies": len(forged), "replies_out": len(replies), "values_restored": restored,
            "dead_lettered": len(dlq), "dlq_reasons": dict(reasons)}


async def run_all(data_dir: Path, turns: int, hostile_n: int, only: list[str] | None = None) -> dict:

    dialogues = dev_dialogues_with_values(data_dir or default_data_dir())
    out = {}
    with tempfile.TemporaryDirectory(prefix="plainsight-faults-") as tmp:
        for name, fn in (("sigkill", lambda d: sigkill(dialogues, turns, d)),
                         ("broker_restart", lambda d: broker_restart(dialogues, turns, d)),
                         ("llm_outage", lambda d: llm_outage(dialogues, max(200, turns // 10), d)),
                         ("hostile", lambda d: hostile(hostile_n, d)),
                         ("heavy_session", lambda d: heavy_session(dialogues, max(400, turns // 3), d)),
                         ("oversized_state", lambda d: oversized_state(d)),
                         ("forget_race", lambda d: forget_race(d)),
                         ("forged_reply", lambda d: forged_reply(d))):
            if only and name not in only:
                continue
            d = os.path.join(tmp, name)
            os.makedirs(d)
            t0 = time.monotonic()
            try:
                out[name] = await fn(d)
            except WorkerFailed as exc:  # no result to report: say so, with the worker's last log lines
                out[name] = exc.report()
            out[name]["seconds"] = round(time.monotonic() - t0, 1)
    out["total_leaks"] = sum(v["leak_scan"]["leaks"] for v in out.values() if isinstance(v, dict) and "leak_scan" in v)
    return out
