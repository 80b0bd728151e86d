"""Producing a record's outputs with acknowledgement (``acks=all``), retrying until they are
acknowledged or the worker stops; a broker that lost its topics gets them created again."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Callable

from aiokafka.errors import (
    ClusterAuthorizationFailedError,
    CorruptRecordException,
    InvalidTimestampError,
    KafkaError,
    MessageSizeTooLargeError,
    RecordListTooLargeError,
    RecordTooLargeError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)

from plainsight.middleware.config import Settings
from plainsight.middleware.schemas import OutputTurn

from .kafka import ensure_topics, make_producer

log = logging.getLogger(__name__)

_BASE_HEADERS = [("content-type", b"application/json"), ("producer", b"plainsight")]


#: Errors a retry cannot cure: the record is too large, invalid, or the worker may not write the
#: topic. The turn goes to the DLQ with the reason and its partition moves on.
_PERMANENT = (MessageSizeTooLargeError, RecordTooLargeError, RecordListTooLargeError, CorruptRecordException,
              InvalidTimestampError, TopicAuthorizationFailedError, ClusterAuthorizationFailedError)
#: the same by Kafka error code (87 INVALID_RECORD has no aiokafka class)
_PERMANENT_CODES = frozenset({2, 10, 18, 29, 31, 32, 87})


class PermanentProduceError(Exception):
    """A record the broker will never take (``kind``: the error's class name, no payload)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def is_permanent(exc: BaseException) -> bool:
    return isinstance(exc, _PERMANENT) or getattr(exc, "errno", None) in _PERMANENT_CODES


def payload(out: OutputTurn | bytes | None) -> bytes | None:
    """The bytes of an output (``None``: a tombstone). An output to the tutor topic carries its
    ``reply_token`` as a last JSON field (not part of the model's dump, so every other output,
    offline ones included, keeps its bytes)."""
    if not isinstance(out, OutputTurn):
        return out
    body = out.model_dump_json().encode("utf-8")
    return with_reply_token(body, out.reply_token) if out.reply_token else body


def with_reply_token(body: bytes, token: str) -> bytes:
    """An output's JSON bytes with ``"reply_token"`` as the last field."""
    return body[:-1] + b',"reply_token":' + json.dumps(token).encode("ascii") + b"}"


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
        """outputs: (topic, OutputTurn | bytes | None, extra headers | None[, partition]); None =
        tombstone. Raises :class:`PermanentProduceError` for a record the broker will never take."""
        key = session_id.encode("utf-8")
        return await self.send_acked([(o[0], payload(o[1]), *o[2:]) for o in outputs], key)

    async def send_acked(self, payloads: list, key: bytes | None) -> bool:
        """Send and wait for acknowledgement, retrying until it succeeds or the worker stops.
        ``payloads``: (topic, value, headers[, partition]). A permanent error (too large, invalid
        record, not authorised) raises :class:`PermanentProduceError` at once, never retried."""
        delay = 0.1
        while True:
            try:
                futs = []
                for topic, value, headers, *part in payloads:
                    h = _BASE_HEADERS + list(headers or ())
                    p = part[0] if part else None
                    futs.append(await self._producer.send(topic, value=value, key=key, headers=h, partition=p))
                await asyncio.gather(*futs)
                return True
            except KafkaError as exc:
                self.stats.produce_errors += 1
                if is_permanent(exc):
                    log.warning("produce rejected (%s): not retried", type(exc).__name__)
                    raise PermanentProduceError(type(exc).__name__) from None
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
