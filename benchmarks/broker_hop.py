"""The transport floor: one producer → broker → consumer hop with no plainsight in between.

``plainsight bench stream`` measures end to end through two such hops (driver → worker, worker →
driver). This measures one hop alone, at the same rate and payload size, on a fresh embedded
broker (or ``--bootstrap-servers``), and reports latency per window of messages, so the share of
the end-to-end latency that is the broker and the client library — and how it changes as the
broker's log grows — can be read next to the stream figures.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field

from plainsight.middleware.commands._common import percentile


@dataclass
class HopResult:
    messages: int
    rate: float
    partitions: int
    latencies_ms: list[float] = field(default_factory=list)
    window: int = 5000
    broker_cpu_percent: float | None = None

    def summary(self) -> dict:
        lat = self.latencies_ms
        windows = [lat[i : i + self.window] for i in range(0, len(lat), self.window)]
        return {
            "messages": self.messages,
            "received": len(lat),
            "rate": self.rate,
            "partitions": self.partitions,
            "hop_p50_ms": round(percentile(lat, 50), 2) if lat else None,
            "hop_p99_ms": round(percentile(lat, 99), 2) if lat else None,
            "hop_p99_ms_per_window": [round(percentile(w, 99), 2) for w in windows if w],
            "window": self.window,
            "broker_cpu_percent": None if self.broker_cpu_percent is None else round(self.broker_cpu_percent, 1),
        }


async def run_hop(bootstrap: str, messages: int = 10_000, rate: float = 1000.0, partitions: int = 6,
                  payload_bytes: int = 400, sessions: int = 200, window: int = 5000, fetch_max_wait_ms: int = 10,
                  linger_ms: int = 1, broker_pid: int | None = None, timeout_s: float = 120.0) -> HopResult:
    import psutil
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    topic = f"hop-{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()
    res = HopResult(messages=messages, rate=rate, partitions=partitions, window=window)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=linger_ms, acks="all", enable_idempotence=False)
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"{topic}-g", auto_offset_reset="earliest",
                                enable_auto_commit=False, fetch_max_wait_ms=fetch_max_wait_ms,
                                session_timeout_ms=2000, heartbeat_interval_ms=400)
    await producer.start()
    await consumer.start()
    try:
        # warm-up: the group is joined and every partition answers
        for i in range(partitions * 4):
            await producer.send(topic, key=b"warm-%d" % i, value=b"warm")
        await producer.flush()
        seen, deadline = 0, time.monotonic() + 30
        while seen < partitions * 4 and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=100)
            seen += sum(len(v) for v in batch.values())
        sent: list[float] = [0.0] * messages
        pad = b"x" * max(0, payload_bytes - 12)
        proc = None
        if broker_pid:
            try:
                proc = psutil.Process(broker_pid)
                proc.cpu_percent(None)
            except psutil.Error:
                proc = None

        async def send_all() -> None:
            t0 = time.monotonic()
            for i in range(messages):
                delay = t0 + i / rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
                sent[i] = time.time()
                await producer.send(topic, key=b"s%d" % (i % sessions), value=b"%011d|" % i + pad)
            await producer.flush()

        sender = asyncio.create_task(send_all())
        got: dict[int, float] = {}
        deadline = time.monotonic() + messages / max(rate, 1.0) + timeout_s
        while len(got) < messages and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=100)
            now = time.time()
            for recs in batch.values():
                for m in recs:
                    if m.value != b"warm":
                        got.setdefault(int(m.value[:11]), now)
        await sender
        res.latencies_ms = [(got[i] - sent[i]) * 1e3 for i in sorted(got)]
        if proc is not None:
            try:
                res.broker_cpu_percent = proc.cpu_percent(None)
            except psutil.Error:
                pass
    finally:
        for closer in (consumer.stop, producer.stop):
            try:
                await asyncio.wait_for(closer(), 10)
            except Exception:
                pass
    return res
