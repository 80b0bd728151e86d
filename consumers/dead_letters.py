"""Dead letters: one per input record that cannot be processed — the reason, the payload's
SHA-256 and size, never the payload; the log line names fields and error types, never values."""

from __future__ import annotations

import logging

from aiokafka import TopicPartition

from plainsight.middleware.metrics import MetricsSink
from plainsight.middleware.schemas import DeadLetter, sha256_hex

from .producer import AckedProducer

log = logging.getLogger(__name__)


class DeadLetters:
    def __init__(self, topic: str, producer: AckedProducer, stats, metrics: MetricsSink) -> None:
        self.topic = topic
        self.producer = producer
        #: counts ``dead_letters`` and ``dlq_by_reason`` (the worker's WorkerStats)
        self.stats = stats
        self.metrics = metrics

    async def send(self, tp: TopicPartition, rec, reason: str, detail: str) -> bool:
        dl = DeadLetter(
            reason=reason,
            detail=detail,
            topic=tp.topic,
            partition=tp.partition,
            offset=rec.offset,
            payload_sha256=sha256_hex(rec.value or b""),
            payload_bytes=len(rec.value or b""),
            key_sha256=sha256_hex(rec.key),
        )
        log.warning("dead letter %s[%d]@%d reason=%s detail=%s", tp.topic, tp.partition, rec.offset, reason, detail)
        ok = await self.producer.send_acked([(self.topic, dl.model_dump_json().encode("utf-8"), None)], None)
        if ok:
            self.stats.dead_letters += 1
            self.stats.dlq_by_reason[reason] += 1
            self.metrics.dlq(reason)
            self.metrics.turn("dlq")
        return ok
