"""Slow fault scenarios for `plainsight bench faults`, each followed by a leak scan.

1. ``sigkill``: a worker process is SIGKILLed mid-stream and restarted: every input turn still
   gets both outputs, and every duplicate is byte-identical.
2. ``broker_restart``: the (in-memory) embedded broker restarts mid-stream: the worker
   reconnects, recreates its topics and processes the turns sent afterwards.
3. ``llm_outage``: the LLM endpoint is down: every output is flagged degraded, none leaks.
4. ``hostile``: 10,000 generated malformed or hostile records: each is processed or
   dead-lettered, the worker stays up, its memory stays bounded.

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


async def run_all(data_dir: Path, turns: int, hostile_n: int, only: list[str] | None = None) -> dict:

    dialogues = dev_dialogues_with_values(data_dir or default_data_dir())
    out = {}
    with tempfile.TemporaryDirectory(prefix="plainsight-faults-") as tmp:
        for name, fn in (("sigkill", lambda d: sigkill(dialogues, turns, d)),
                         ("broker_restart", lambda d: broker_restart(dialogues, turns, d)),
                         ("llm_outage", lambda d: llm_outage(dialogues, max(200, turns // 10), d)),
                         ("hostile", lambda d: hostile(hostile_n, d))):
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
