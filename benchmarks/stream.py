"""Streaming benchmark: realistic chat through a broker and 1..K worker processes.

The driver (this process) starts the embedded broker unless one is given, starts K
``plainsight serve`` worker processes in one consumer group, sends turns of N concurrent
sessions at a target rate (turns taken from the dev dialogue files, re-timed: ``sent_at`` is
the moment of sending), and reads the de-identified outputs back. It reports sustained
turns/s, end-to-end latency percentiles (``sent_at`` → output read back, so it includes both
broker hops), and the workers' CPU and RSS.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from plainsight.middleware.commands._common import embedded_tuning, percentile

DEFAULT_FILES = ("ncte_uptake.jsonl", "mathdial.jsonl", "bridge.jsonl", "ncte.jsonl")


from plainsight.middleware.detection.base import CORE_LABELS
from plainsight.middleware.evaluation import default_data_dir


def load_dialogues(data_dir: Path | None = None, files=DEFAULT_FILES) -> list[list[tuple[str, str]]]:
    """Dialogues as lists of (role, text); falls back to the bundled demo chats."""
    out = [turns for turns, _values in dialogues_with_values(data_dir or default_data_dir(), files)]
    if not out:
        from plainsight.middleware.commands.demo import load_chats

        out = [[(t["role"], t["text"]) for t in c["turns"]] for c in load_chats(None)]
    return out




def dialogues_with_values(data_dir: Path, files=DEFAULT_FILES) -> list[tuple[list[tuple[str, str]], list[str]]]:
    """(turns as (role, text), gold core-PII values) per dialogue of the dev files present."""
    out = []
    for name in files:
        p = data_dir / name
        if not p.exists():
            continue
        for line in p.open(encoding="utf-8"):
            d = json.loads(line)
            turns = [(t["speaker"], t["text"]) for t in d["turns"] if t["text"].strip()]
            if turns:
                out.append((turns, [s["text"] for s in d.get("spans", []) if s["label"] in CORE_LABELS]))
    return out


def plan_turns(dialogues, n_turns: int, n_sessions: int, prefix: str, max_chars: int = 2000):
    """``n_turns`` turns from ``n_sessions`` concurrent sessions, round-robin interleaved.

    Each session plays dialogues one after another (a finished dialogue is followed by the
    next one in the same session), so sessions stay long-lived like real chats."""
    import random

    rng = random.Random(1234)
    order = list(range(len(dialogues)))
    rng.shuffle(order)
    cursor = [0]

    def next_dialogue():
        d = dialogues[order[cursor[0] % len(order)]]
        cursor[0] += 1
        return d

    sessions = [{"id": f"{prefix}-s{i}", "turns": list(next_dialogue()), "pos": 0, "n": 0} for i in range(n_sessions)]
    plan = []
    while len(plan) < n_turns:
        for s in sessions:
            if len(plan) >= n_turns:
                break
            if s["pos"] >= len(s["turns"]):
                s["turns"], s["pos"] = list(next_dialogue()), 0
            role, text = s["turns"][s["pos"]]
            s["pos"] += 1
            plan.append((s["id"], s["n"], role, text[:max_chars]))
            s["n"] += 1
    return plan


@dataclass
class StreamResult:
    workers: int
    sessions: int
    target_rate: float
    turns_sent: int = 0
    turns_received: int = 0
    elapsed_s: float = 0.0
    turns_per_s: float = 0.0
    e2e_ms: list[float] = field(default_factory=list)
    #: where the end-to-end time goes: driver send → the worker took the turn from its fetch
    #: (driver producer, broker, worker fetch) | → output built (queueing in the worker, detection,
    #: surrogates) | → the driver read the output (worker producer, broker, driver fetch)
    inbound_ms: list[float] = field(default_factory=list)
    in_worker_ms: list[float] = field(default_factory=list)
    outbound_ms: list[float] = field(default_factory=list)
    broker_cpu_percent: float | None = None
    worker_cpu_percent: float = 0.0
    worker_rss_mb: float = 0.0
    driver_cpu_percent: float = 0.0
    llm_latency_ms: float | None = None
    dead_letters: int = 0
    degraded: int = 0
    missing: int = 0

    def summary(self) -> dict:
        lat = self.e2e_ms
        return {
            "workers": self.workers,
            "sessions": self.sessions,
            "target_rate": self.target_rate,
            "llm_latency_ms": self.llm_latency_ms,
            "turns_sent": self.turns_sent,
            "turns_received": self.turns_received,
            "missing": self.missing,
            "elapsed_s": round(self.elapsed_s, 2),
            "turns_per_s": round(self.turns_per_s, 1),
            "e2e_p50_ms": round(percentile(lat, 50), 2) if lat else None,
            "e2e_p95_ms": round(percentile(lat, 95), 2) if lat else None,
            "e2e_p99_ms": round(percentile(lat, 99), 2) if lat else None,
            "e2e_max_ms": round(max(lat), 2) if lat else None,
            # in send order: the embedded broker's in-memory log gets slower as it grows (see
            # `plainsight bench broker`), so later windows of a run are slower than early ones
            "e2e_p99_ms_per_2000_turns": [round(percentile(lat[i : i + 2000], 99), 1) for i in range(0, len(lat), 2000)],
            "in_worker_p99_ms_per_2000_turns": [round(percentile(self.in_worker_ms[i : i + 2000], 99), 1)
                                                for i in range(0, len(self.in_worker_ms), 2000)],
            "e2e_mean_ms": round(statistics.fmean(lat), 2) if lat else None,
            **{f"{name}_p{q}_ms": (round(percentile(xs, q), 2) if xs else None)
               for name, xs in (("inbound", self.inbound_ms), ("in_worker", self.in_worker_ms), ("outbound", self.outbound_ms))
               for q in (50, 99)},
            "broker_cpu_percent": None if self.broker_cpu_percent is None else round(self.broker_cpu_percent, 1),
            "worker_cpu_percent": round(self.worker_cpu_percent, 1),
            "worker_rss_mb": round(self.worker_rss_mb, 1),
            "driver_cpu_percent": round(self.driver_cpu_percent, 1),
            "degraded": self.degraded,
        }


_BENCH_SECRETS: dict[str, str] = {}


def bench_secret_env(config_path: str | None = None) -> dict[str, str]:
    """``PLAINSIGHT_SURROGATE__SECRET_FILE`` / ``__KEYS_FILE`` for benchmark workers when neither the
    configuration nor the environment provides a secret and key: ``serve`` against a broker
    refuses to start without them, and every worker of a benchmark must share them. Made once per
    driver process, in a private temporary directory (mode 0600 files) removed at exit."""
    import atexit
    import shutil

    from plainsight.middleware.config import load_settings
    from plainsight.middleware.keys import load_configured, new_key_b64, new_key_id, new_secret, write_secret_file

    s = load_settings(config_path)
    secret, _origin, keys, _active = load_configured(s)
    if secret is not None and (keys or not s.session.persist):
        return {}
    if not _BENCH_SECRETS:
        d = tempfile.mkdtemp(prefix="plainsight-bench-secrets-")
        atexit.register(shutil.rmtree, d, True)
        kid = new_key_id()
        write_secret_file(os.path.join(d, "secret"), new_secret() + "\n")
        write_secret_file(os.path.join(d, "keys.json"),
                          json.dumps({"keys": {kid: new_key_b64()}, "active_key_id": kid}))
        _BENCH_SECRETS.update(PLAINSIGHT_SURROGATE__SECRET_FILE=os.path.join(d, "secret"),
                              PLAINSIGHT_SURROGATE__KEYS_FILE=os.path.join(d, "keys.json"))
    env = {}
    if secret is None:
        env["PLAINSIGHT_SURROGATE__SECRET_FILE"] = _BENCH_SECRETS["PLAINSIGHT_SURROGATE__SECRET_FILE"]
    if not keys and s.session.persist:
        env["PLAINSIGHT_SURROGATE__KEYS_FILE"] = _BENCH_SECRETS["PLAINSIGHT_SURROGATE__KEYS_FILE"]
    return env


def bench_secret_values() -> list[str]:
    """The secret and key material :func:`bench_secret_env` made (for the leak scan)."""
    out = []
    for var, path in _BENCH_SECRETS.items():
        text = Path(path).read_text(encoding="utf-8")
        if var.endswith("KEYS_FILE"):
            out += list(json.loads(text)["keys"].values())
        else:
            out.append(text.strip())
    return out


class WorkerProcs:
    """K ``plainsight serve`` processes sharing one consumer group."""

    def __init__(self, n: int, bootstrap: str, config_path: str, extra_args: list[str] | None = None,
                 env: dict | None = None, log_dir: str | None = None, metrics: bool = False) -> None:
        self.n = n
        self.bootstrap = bootstrap
        self.config_path = config_path
        self.extra_args = extra_args or []
        self.env = env
        self.log_dir = log_dir
        self.procs: list[subprocess.Popen] = []
        self._logs = []
        #: with ``metrics``, each worker serves /metrics on its own free port (listed here)
        self.metrics = metrics
        self.metrics_ports: list[int] = []
        self._secret_env = bench_secret_env(config_path)
        #: indices of workers stopped on purpose (kill_one): their exit is not a failure
        self.killed: set[int] = set()
        #: values that must never be shown (raw input values): masked in log tails
        self.mask_values: list[str] = []

    def start_one(self) -> subprocess.Popen:
        if self.metrics:
            from plainsight.consumers.broker import free_port

            port = free_port()
            self.metrics_ports.append(port)
            mflags = ["--metrics-port", str(port), "--metrics-host", "127.0.0.1"]
        else:
            mflags = ["--no-metrics"]
        cmd = [sys.executable, "-m", "plainsight.middleware.cli", "serve", "--config", self.config_path,
               "--bootstrap-servers", self.bootstrap, *mflags, "--log-level", "INFO", *self.extra_args]
        env = dict(os.environ)
        env.update(self._secret_env)
        env.update(self.env or {})
        if self.log_dir:
            fh = open(Path(self.log_dir) / f"worker-{len(self.procs)}.log", "ab")
            self._logs.append(fh)
            out = fh
        else:
            out = subprocess.DEVNULL
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        self.procs.append(p)
        return p

    def start(self) -> None:
        for _ in range(self.n):
            self.start_one()

    def scrape_metrics(self) -> list[str]:
        import urllib.request

        out = []
        for port in self.metrics_ports:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    out.append(r.read().decode("utf-8", "replace"))
            except OSError:
                pass
        return out

    def kill_one(self, i: int = 0) -> None:
        """SIGKILL worker ``i`` (fault injection) and wait for it to die."""
        p = self.procs[i]
        self.killed.add(i)
        if p.poll() is None:
            p.kill()
            p.wait(10)

    def log_tail(self, i: int, lines: int = 15) -> list[str]:
        """The last lines of worker ``i``'s log, with any known input value masked (logs carry no
        PII by design; this is a second line of defence, since a failure report is printed)."""
        if not self.log_dir:
            return []
        try:
            text = (Path(self.log_dir) / f"worker-{i}.log").read_text(errors="replace")
        except OSError:
            return []
        tail = [ln for ln in text.splitlines() if ln.strip()][-lines:]
        for v in sorted(self.mask_values, key=len, reverse=True):
            if len(v) >= 3:
                tail = [ln.replace(v, "[masked]") for ln in tail]
        return tail

    def check_alive(self) -> None:
        """Raise :class:`WorkerFailed` if a worker exited that was not stopped on purpose."""
        for i, p in enumerate(self.procs):
            if i not in self.killed and p.poll() is not None:
                raise WorkerFailed(f"worker {i} exited with status {p.returncode}", self.log_tail(i))

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until every running worker answers /readyz (metrics on) or, without metrics, has stayed up
        for a few seconds. Raises :class:`WorkerFailed` with the worker's last log lines when one
        exits or is not ready within ``timeout`` (a dead worker must not read as "0 outputs")."""
        import urllib.error
        import urllib.request

        deadline = time.monotonic() + timeout
        pending = {i for i in range(len(self.procs)) if i not in self.killed}
        settle = time.monotonic() + 3.0
        while pending:
            self.check_alive()
            for i in sorted(pending):
                if not self.metrics:
                    if time.monotonic() >= settle:
                        pending.discard(i)
                    continue
                port = self.metrics_ports[i] if i < len(self.metrics_ports) else None
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
                        if r.status == 200:
                            pending.discard(i)
                except (OSError, urllib.error.URLError):
                    pass
            if pending and time.monotonic() > deadline:
                i = min(pending)
                raise WorkerFailed(f"worker {i} not ready after {timeout:.0f} s", self.log_tail(i))
            if pending:
                time.sleep(0.25)

    def stop(self, timeout: float = 30.0) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        for fh in self._logs:
            fh.close()
        self._logs = []

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.poll() is None]


class WorkerFailed(RuntimeError):
    """A benchmark worker exited or never became ready: the run has no result to report."""

    def __init__(self, message: str, log_tail: list[str]) -> None:
        super().__init__(message)
        self.log_tail = log_tail

    def report(self) -> dict:
        return {"failed": str(self), "worker_log_tail": self.log_tail}


def write_bench_config(settings_overrides: dict, topics_prefix: str, partitions: int, group: str) -> str:
    cfg = {
        "kafka": {**embedded_tuning()["kafka"], "group_id": group, "partitions": partitions},
        "topics": {
            "input": f"{topics_prefix}.turns",
            "output": f"{topics_prefix}.deid",
            "logs": f"{topics_prefix}.logs",
            "dlq": f"{topics_prefix}.dlq",
            "replies_in": f"{topics_prefix}.replies.in",
            "replies_out": f"{topics_prefix}.replies.out",
            "state": f"{topics_prefix}.state",
        },
    }
    for k, v in settings_overrides.items():
        cfg.setdefault(k, {}).update(v)
    fd, path = tempfile.mkstemp(prefix="plainsight-bench-", suffix=".yaml")
    with os.fdopen(fd, "w") as fh:
        yaml.safe_dump(cfg, fh)
    return path


async def run_stream(
    bootstrap: str,
    config_path: str,
    n_turns: int,
    n_sessions: int,
    rate: float,
    workers: int,
    dialogues,
    warmup_s: float = 60.0,
    timeout_s: float = 300.0,
    worker_args: list[str] | None = None,
    log_dir: str | None = None,
    llm_latency_ms: float | None = None,
    broker_pid: int | None = None,
) -> StreamResult:
    import psutil

    from plainsight.consumers.kafka import ensure_topics, make_consumer, make_producer
    from plainsight.middleware.config import load_settings

    settings = load_settings(config_path, kafka={"bootstrap_servers": bootstrap})
    await ensure_topics(settings, bootstrap)
    run_id = uuid.uuid4().hex[:6]
    res = StreamResult(workers=workers, sessions=n_sessions, target_rate=rate, llm_latency_ms=llm_latency_ms)
    procs = WorkerProcs(workers, bootstrap, config_path, worker_args, log_dir=log_dir)
    producer = make_producer(settings, bootstrap, linger_ms=2)
    reader = make_consumer(settings, bootstrap, settings.topics.output, group_id=f"bench-reader-{run_id}",
                           max_poll_records=5000)
    procs.start()
    try:
        await producer.start()
        await reader.start()
        sent_at: dict[tuple[str, int], float] = {}
        received: dict[tuple[str, int], float] = {}
        stamps: dict[tuple[str, int], tuple[float, float]] = {}  # (worker received-at, processed-at)
        got_degraded = 0

        async def read_until(pred, deadline):
            nonlocal got_degraded
            while time.monotonic() < deadline and not pred():
                batch = await reader.getmany(timeout_ms=50, max_records=5000)
                now = time.time()
                for _tp, msgs in batch.items():
                    for m in msgs:
                        o = json.loads(m.value)
                        key = (o["session_id"], o["turn_id"])
                        if key not in received:
                            received[key] = now
                            h = dict(m.headers or ())
                            if "plainsight-received-at" in h and "plainsight-processed-at" in h:
                                stamps[key] = (float(h["plainsight-received-at"]), float(h["plainsight-processed-at"]))
                            if o.get("degraded"):
                                got_degraded += 1

        # warm-up: every worker loaded its models and the group is stable when warm-up turns
        # of every partition come back
        warm = [(f"warm-{run_id}-{i}", 0) for i in range(max(8, settings.kafka.partitions * 4))]
        for sid, tid in warm:
            await producer.send(settings.topics.input, key=sid.encode(), value=json.dumps(
                {"session_id": sid, "turn_id": tid, "role": "student", "text": "hello, warm up", "sent_at": time.time()}
            ).encode())
        await producer.flush()
        await read_until(lambda: all(k in received for k in warm), time.monotonic() + warmup_s)
        if not all(k in received for k in warm):
            procs.check_alive()  # a worker that died says why (its last log lines)
            raise WorkerFailed("workers did not come up within the warm-up time", procs.log_tail(0))
        await asyncio.sleep(1.0)
        received.clear()
        stamps.clear()
        got_degraded = 0

        plan = plan_turns(dialogues, n_turns, n_sessions, f"b{run_id}")
        from plainsight.middleware.runtime import freeze_heap

        freeze_heap()  # the driver's own GC pauses would show up as end-to-end latency
        wprocs = [psutil.Process(pid) for pid in procs.pids]
        for p in wprocs:
            p.cpu_percent(None)
        me = psutil.Process()
        me.cpu_percent(None)
        broker_proc = None
        if broker_pid:
            with contextlib.suppress(psutil.Error):
                broker_proc = psutil.Process(broker_pid)
                broker_proc.cpu_percent(None)
        rss_peak = 0.0

        async def send_all():
            tick = 0.005
            t0 = time.monotonic()
            i = 0
            while i < len(plan):
                due = len(plan) if rate <= 0 else min(len(plan), int((time.monotonic() - t0) * rate) + 1)
                while i < due:
                    sid, tid, role, text = plan[i]
                    now = time.time()
                    sent_at[(sid, tid)] = now
                    await producer.send(settings.topics.input, key=sid.encode(), value=json.dumps(
                        {"session_id": sid, "turn_id": tid, "role": role, "text": text, "sent_at": now}).encode())
                    i += 1
                await asyncio.sleep(tick)
            await producer.flush()

        t_start = time.time()
        sender = asyncio.create_task(send_all())
        deadline = time.monotonic() + timeout_s

        async def sample_rss():
            nonlocal rss_peak
            while True:
                tot = 0.0
                for p in wprocs:
                    try:
                        tot += p.memory_info().rss
                    except psutil.Error:
                        pass
                rss_peak = max(rss_peak, tot / 1e6)
                await asyncio.sleep(0.5)

        sampler = asyncio.create_task(sample_rss())
        await read_until(lambda: sender.done() and len(received) >= len(plan), deadline)
        t_end = max(received.values()) if received else time.time()
        sampler.cancel()
        if not sender.done():
            sender.cancel()
        cpu = 0.0
        for p in wprocs:
            try:
                cpu += p.cpu_percent(None)
            except psutil.Error:
                pass
        res.driver_cpu_percent = me.cpu_percent(None)
        if broker_proc is not None:
            with contextlib.suppress(psutil.Error):
                res.broker_cpu_percent = broker_proc.cpu_percent(None)
        res.worker_cpu_percent = cpu
        res.worker_rss_mb = rss_peak
        res.turns_sent = len(sent_at)
        res.turns_received = sum(1 for k in sent_at if k in received)
        res.missing = res.turns_sent - res.turns_received
        res.elapsed_s = t_end - t_start
        res.turns_per_s = res.turns_received / res.elapsed_s if res.elapsed_s > 0 else 0.0
        res.e2e_ms = [(received[k] - sent_at[k]) * 1e3 for k in sent_at if k in received]
        for k in sent_at:  # send order
            if k in stamps:
                w_in, w_out = stamps[k]
                res.inbound_ms.append((w_in - sent_at[k]) * 1e3)
                res.in_worker_ms.append((w_out - w_in) * 1e3)
                res.outbound_ms.append((received[k] - w_out) * 1e3)
        res.degraded = got_degraded
    finally:
        for closer in (reader.stop, producer.stop):
            try:
                await asyncio.wait_for(closer(), 10)
            except Exception:
                pass
        procs.stop()
    return res


def idle_session_memory(n_sessions: int = 10_000) -> dict:
    """Memory held by ``n_sessions`` sessions that each saw one short turn (then went idle)."""
    import gc
    import tracemalloc

    from plainsight.middleware.config import load_settings
    from plainsight.middleware.schemas import InputTurn
    from plainsight.surrogate.pipeline import build_pipeline

    pipe = build_pipeline(load_settings())
    pipe.process_sync(InputTurn(session_id="warm", turn_id=0, role="student", text="hi I'm Ana", sent_at=0.0))
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for i in range(n_sessions):
        pipe.process_sync(InputTurn(session_id=f"idle-{i}", turn_id=0, role="student",
                                    text="hi, I'm Maria and my friend is Tom", sent_at=0.0))
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {"idle_sessions": n_sessions, "idle_sessions_mb": round(used / 1e6, 2),
            "bytes_per_idle_session": int(used / n_sessions)}
