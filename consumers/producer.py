"""Producing a record's outputs with acknowledgement (``acks=all``), retrying until they are
acknowledged or the worker stops; a broker that lost its topics gets them created again."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Callable

from aiokafka.errors import KafkaError, UnknownTopicOrPartitionError

from plainsight.middleware.config import Settings
from plainsight.middleware.schemas import OutputTurn

from .kafka import ensure_topics, make_producer

log = logging.getLogger(__name__)

_BASE_HEADERS = [("content-type", b"application/json"), ("producer", b"plainsight")]


def payload(out: OutputTurn | bytes | None) -> bytes | None:
    """The bytes of an output (``None``: a tombstone)."""
    return out.model_dump_json().encode("utf-8") if isinstance(out, OutputTurn) else out


def timing_headers(out: OutputTurn, received_at: float = 0.0) -> list[tuple[str, bytes]]:
    """Per-stage timings, and when the worker took the input from its fetch (``received-at``) and
    built this output (``processed-at``), both epoch seconds: where end-to-end latency goes."""
    h = [
        ("plainsight-timings-ms", json.dumps({k: round(v, 3) for k, v in out.timings_ms.items()}).encode()),
        ("plainsight-processed-at", repr(out.processed_at).encode()),
    ]
    if received_at:
        h.append(("plainsight-received-at", repr(received_at).encode()))
    return h


class AckedProducer:
    """``send_acked`` returns True once every record is acknowledged; False only when the worker
    is stopping (``stopping()``) and the send failed (the input stays uncommitted)."""

    def __init__(self, settings: Settings, bootstrap_servers: str, stats, stopping: Callable[[], bool]) -> None:
        self.settings = settings
        self.bootstrap_servers = bootstrap_servers
        #: counts ``produce_errors`` (the worker's WorkerStats)
        self.stats = stats
        self._stopping = stopping
        self._producer = None
        self._last_topic_check = 0.0

    async def start(self) -> None:
        self._producer = make_producer(self.settings, self.bootstrap_servers)
        await self._producer.start()

    @property
    def started(self) -> bool:
        return self._producer is not None

    async def stop(self) -> None:
        if self._producer is not None:
            try:
                await asyncio.wait_for(self._producer.stop(), 10)
            finally:
                self._producer = None

    async def produce_all(self, session_id: str, outputs: list) -> bool:
        """outputs: (topic, OutputTurn | bytes | None, extra headers | None); None = tombstone."""
        key = session_id.encode("utf-8")
        return await self.send_acked([(topic, payload(out), headers) for topic, out, headers in outputs], key)

    async def send_acked(self, payloads: list, key: bytes | None) -> bool:
        """Send and wait for acknowledgement, retrying until it succeeds or the worker stops."""
        delay = 0.1
        while True:
            try:
                futs = []
                for topic, value, headers in payloads:
                    h = _BASE_HEADERS + list(headers or ())
                    futs.append(await self._producer.send(topic, value=value, key=key, headers=h))
                await asyncio.gather(*futs)
                return True
            except KafkaError as exc:
                self.stats.produce_errors += 1
                if isinstance(exc, UnknownTopicOrPartitionError) and self.settings.kafka.create_topics:
                    await self._recreate_topics()
                if self._stopping():
                    log.warning("produce failed during shutdown (%s); record left uncommitted", type(exc).__name__)
                    return False
                log.warning("produce failed (%s); retrying in %.1fs", type(exc).__name__, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    async def _recreate_topics(self) -> None:
        """A broker that lost its topics (e.g. an in-memory broker restarted): create them again."""
        now = time.monotonic()
        if now - self._last_topic_check < 2.0:
            return
        self._last_topic_check = now
        try:
            created = await ensure_topics(self.settings, self.bootstrap_servers, retries=3)
            if created:
                log.warning("recreated %d missing topics", len(created))
        except Exception as exc:
            log.warning("could not recreate topics (%s)", type(exc).__name__)
