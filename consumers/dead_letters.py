"""Dead letters: one per input record that cannot be processed — the reason, the payload's
keyed digest (HMAC-SHA256 in a worker) and size, never the payload; the log line names fields and error types, never values."""

from __future__ import annotations

import logging

from aiokafka import TopicPartition

from plainsight.middleware.logs import keyed_digest
from plainsight.middleware.metrics import MetricsSink
from plainsight.middleware.schemas import DeadLetter

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
            # keyed (HMAC-SHA256 under a sub-key of the surrogate secret, in a worker): a guessable
            # payload or session id cannot be confirmed from the DLQ by hashing guesses
            payload_sha256=keyed_digest(rec.value or b""),
            payload_bytes=len(rec.value or b""),
            key_sha256=keyed_digest(rec.key) if rec.key is not None else None,
        )
        log.warning("dead letter %s[%d]@%d reason=%s detail=%s", tp.topic, tp.partition, rec.offset, reason, detail)
        ok = await self.producer.send_acked([(self.topic, dl.model_dump_json().encode("utf-8"), None)], None)
        if ok:
            self.stats.dead_letters += 1
            self.stats.dlq_by_reason[reason] += 1
            self.metrics.dlq(reason)
            self.metrics.turn("dlq")
        return ok
