"""The streaming worker: chat turns in from Kafka, de-identified turns out.

Guarantees
- **Per-session order**: turns of one session (same key → same partition) are processed one
  after another; different sessions proceed concurrently.
- **At-least-once**: an input offset is committed only after every output of that record (or
  its dead letter) has been acknowledged by the broker, and only as part of a contiguous run of
  finished offsets of its partition. A crash replays unfinished records; outputs are
  deterministic, so replays produce byte-identical duplicates.
- **Backpressure**: at most ``worker.max_in_flight`` records are consumed but unfinished.
- **Rebalances**: on revocation, in-flight work of the revoked partitions is drained and
  committed before the partitions are released.
- **Shutdown** (``request_stop()``, wired to SIGINT/SIGTERM by ``plainsight serve``): stop
  fetching, drain in-flight turns, commit, close clients.
- **Bad input** never crashes the worker: one dead letter each (reason + payload hash, never
  the payload), offset committed, a log line without the payload.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from aiokafka import ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import KafkaError, UnknownTopicOrPartitionError

from middleware.config import Settings
from middleware.logs import session_ref
from middleware.parsing import ParseFailure, parse_turn
from middleware.pipeline import Pipeline
from surrogate.pipeline import build_pipeline
from middleware.runtime import freeze_heap
from middleware.schemas import DeadLetter, InputTurn, OutputTurn, sha256_hex

from .kafka import ensure_topics, make_consumer, make_producer

log = logging.getLogger(__name__)


#: Turns dispatched before the consumer loop yields to let them run (and their outputs be sent).
#: Keeping up: 1, each turn is detected and its outputs handed to the producer before the next one
#: starts (at 1,000 turns/s in-worker p99 3 ms against 7.5 ms with 8). Behind (a fetched batch, or
#: the sessions waiting for an answer, above DISPATCH_BATCH_SMALL): 8, so outputs go out in fewer,
#: larger produce requests (with 1 throughout, saturation fell from ~2,100 to ~1,500 turns/s).
DISPATCH_SLICE = 1
DISPATCH_SLICE_BACKLOG = 8
DISPATCH_BATCH_SMALL = 64


class _PartitionOffsets:
    """Offsets of one partition in consumption order; tells the next committable offset."""

    __slots__ = ("pending", "done", "committed")

    def __init__(self) -> None:
        self.pending: collections.deque[int] = collections.deque()
        self.done: set[int] = set()
        self.committed: int | None = None

    def add(self, offset: int) -> None:
        self.pending.append(offset)

    def finish(self, offset: int) -> None:
        self.done.add(offset)

    def committable(self) -> int | None:
        """Last offset of the finished prefix + 1 (what to commit), or None if nothing new."""
        last = None
        for off in self.pending:
            if off not in self.done:
                break
            last = off
        return None if last is None else last + 1

    def mark_committed(self, offset: int) -> None:
        while self.pending and self.pending[0] < offset:
            self.done.discard(self.pending.popleft())
        self.committed = offset


@dataclass
class WorkerStats:
    consumed: int = 0
    processed: int = 0
    replies: int = 0
    replayed: int = 0
    dead_letters: int = 0
    produce_errors: int = 0
    commits: int = 0
    rebalances: int = 0
    dlq_by_reason: collections.Counter = field(default_factory=collections.Counter)


class _Rebalance(ConsumerRebalanceListener):
    def __init__(self, worker: "Worker") -> None:
        self.worker = worker

    async def on_partitions_revoked(self, revoked):
        await self.worker._on_revoked(list(revoked))

    async def on_partitions_assigned(self, assigned):
        await self.worker._on_assigned(list(assigned))


class Worker:
    """``start()`` → ``run()`` (until ``request_stop()``) → ``stop()``. Or ``async with`` + ``run()``."""

    def __init__(
        self,
        settings: Settings,
        bootstrap_servers: str,
        pipeline: Pipeline | None = None,
        metrics: Any = None,
        state_store: Any = "auto",
    ) -> None:
        from middleware.keys import require_worker_secrets

        # no public or per-process secret in a worker: replays and other workers must agree
        require_worker_secrets(settings)
        self.settings = settings
        self.bootstrap_servers = bootstrap_servers
        self.pipeline = pipeline or build_pipeline(settings)
        self.metrics = metrics
        if state_store == "auto":
            state_store = self._default_state_store() if settings.session.persist else None
        self.state_store = state_store
        self.stats = WorkerStats()
        t = settings.topics
        self._input_topics = [t.input] + ([t.replies_in] if settings.worker.process_replies else [])
        self._producer = None
        self._consumer = None
        self._offsets: dict[TopicPartition, _PartitionOffsets] = {}
        self._tasks: dict[TopicPartition, set[asyncio.Task]] = collections.defaultdict(set)
        self._session_tail: dict[str, asyncio.Task] = {}
        self._slots = asyncio.Semaphore(settings.worker.max_in_flight)
        self._stop = asyncio.Event()
        self._started = False
        self._ready = asyncio.Event()
        self._commit_lock = asyncio.Lock()
        self._bg: set[asyncio.Task] = set()
        self._last_topic_check = 0.0

    def _default_state_store(self):
        from middleware.state_codec import SessionCodec
        from surrogate.crypto import StateCipher

        from .state_store import KafkaStateStore

        return KafkaStateStore(self.settings, self.bootstrap_servers, SessionCodec(self.pipeline, StateCipher.from_settings(self.settings)))

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        if self._started:
            return
        if self.settings.kafka.create_topics:
            await ensure_topics(self.settings, self.bootstrap_servers)
        # first turns must not pay for lazy initialisation (models, lexicons, regex caches)
        await asyncio.to_thread(self.pipeline.warm_up)
        if self.settings.worker.gc_freeze:
            freeze_heap()
        self._producer = make_producer(self.settings, self.bootstrap_servers)
        await self._producer.start()
        if self.state_store is not None:
            self.state_store.attach(self.pipeline.sessions)
            await self.state_store.start()
        self._consumer = make_consumer(self.settings, self.bootstrap_servers)
        self._consumer.subscribe(self._input_topics, listener=_Rebalance(self))
        await self._consumer.start()
        self._started = True
        log.info(
            "worker started: group=%s topics=%s max_in_flight=%d",
            self.settings.kafka.group_id,
            ",".join(self._input_topics),
            self.settings.worker.max_in_flight,
        )

    def request_stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def in_flight(self) -> int:
        return sum(len(ts) for ts in self._tasks.values())

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until the worker has been assigned partitions at least once."""
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def run(self) -> None:
        """Consume until ``request_stop()``; then drain and commit (``stop()`` closes the clients)."""
        if not self._started:
            await self.start()
        committer = asyncio.create_task(self._commit_loop(), name="plainsight-committer")
        try:
            while not self._stop.is_set():
                try:
                    batch = await self._consumer.getmany(timeout_ms=100, max_records=self.settings.kafka.max_poll_records)
                except KafkaError as exc:
                    log.warning("fetch failed (%s); retrying", type(exc).__name__)
                    await asyncio.sleep(0.5)
                    continue
                n = 0
                size = sum(len(r) for r in batch.values())
                # behind: a big batch, or many sessions with a turn not yet answered (in flight
                # would also count turns only waiting for a background LLM refinement)
                behind = size > DISPATCH_BATCH_SMALL or len(self._session_tail) > DISPATCH_BATCH_SMALL
                slice_n = DISPATCH_SLICE_BACKLOG if behind else DISPATCH_SLICE
                for tp, records in batch.items():
                    for rec in records:
                        await self._slots.acquire()
                        if tp not in self._offsets:  # revoked while we waited
                            self._slots.release()
                            break
                        self._dispatch(tp, rec)
                        n += 1
                        if n % slice_n == 0:
                            # let the turns just dispatched run and their outputs go out before
                            # more of the batch is detected (latency under load)
                            await asyncio.sleep(0)
        finally:
            committer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await committer
            await self._drain(list(self._tasks), self.settings.worker.drain_timeout_s)
            await self._commit()

    async def stop(self) -> None:
        self._stop.set()
        if self._consumer is not None:
            await self._drain(list(self._tasks), self.settings.worker.drain_timeout_s)
            with contextlib.suppress(Exception):
                await self._commit()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._consumer.stop(), 10)
            self._consumer = None
        with contextlib.suppress(Exception):
            await self.pipeline.aclose()
        if self.state_store is not None:
            with contextlib.suppress(Exception):
                await self.state_store.stop()
        if self._producer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._producer.stop(), 10)
            self._producer = None
        self._started = False
        if self.metrics is not None:
            self.metrics.set_ready(False)
        log.info(
            "worker stopped: consumed=%d processed=%d replies=%d dead_letters=%d commits=%d",
            self.stats.consumed,
            self.stats.processed,
            self.stats.replies,
            self.stats.dead_letters,
            self.stats.commits,
        )

    async def __aenter__(self) -> "Worker":
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    # ------------------------------------------------------------------ dispatch
    def _dispatch(self, tp: TopicPartition, rec) -> None:
        self.stats.consumed += 1
        received_at = time.time()
        self._offsets[tp].add(rec.offset)
        t0 = time.perf_counter()
        parsed = parse_turn(rec.value, self.settings.worker.max_payload_bytes)
        parse_s = time.perf_counter() - t0
        if self.metrics is not None:
            self.metrics.observe_stage("parse", parse_s)
        if isinstance(parsed, ParseFailure):
            task = asyncio.create_task(self._dead_letter(tp, rec, parsed.reason, parsed.detail))
            self._track(tp, rec.offset, task)
            return
        sid = parsed.session_id
        if self.state_store is not None:
            self.state_store.note_partition(sid, tp.partition)
        # A session's turns run one after another: each waits for the previous turn's *step*
        # (its tutor-facing output acknowledged), not for a slow background refinement.
        prev = self._session_tail.get(sid)
        step: asyncio.Future = asyncio.get_running_loop().create_future()
        self._session_tail[sid] = step

        def _release(_f, sid=sid, step=step) -> None:
            if self._session_tail.get(sid) is step:
                del self._session_tail[sid]

        step.add_done_callback(_release)
        task = asyncio.create_task(self._handle(tp, rec, parsed, prev, step, received_at))
        task.add_done_callback(lambda _t, step=step: step.done() or step.set_result(None))
        self._track(tp, rec.offset, task)

    def _track(self, tp: TopicPartition, offset: int, task: asyncio.Task) -> None:
        tasks = self._tasks[tp]
        tasks.add(task)

        def _done(t: asyncio.Task, tp=tp, offset=offset) -> None:
            tasks.discard(t)
            self._slots.release()
            if t.cancelled():
                return  # not acknowledged: the offset stays uncommitted and will be replayed
            if t.exception() is not None:
                log.error(
                    "unexpected %s for %s[%d]@%d; offset left uncommitted",
                    type(t.exception()).__name__, tp.topic, tp.partition, offset,
                )
                return
            if not t.result():
                return
            po = self._offsets.get(tp)
            if po is not None:
                po.finish(offset)

        task.add_done_callback(_done)

    async def _handle(self, tp: TopicPartition, rec, turn: InputTurn, prev: asyncio.Future | None,
                      step: asyncio.Future, received_at: float = 0.0) -> bool:
        if prev is not None and not prev.done():
            await asyncio.wait({prev})
        is_reply = tp.topic == self.settings.topics.replies_in
        t = self.settings.topics
        try:
            if is_reply:
                result = None
                now_out = [(t.replies_out, await self.pipeline.reidentify(turn), None)]
                later = None
            else:
                replay = self._journal_hit(turn.session_id, tp, rec.offset)
                if replay is not None:  # processed before a crash/rebalance: re-emit the same bytes
                    self.stats.replayed += 1
                    if not await self._produce_all(turn.session_id, replay):
                        return False
                    step.done() or step.set_result(None)
                    return True
                result = await self.pipeline.process(turn)
                deid_bytes, deid_headers = _payload(result.deid), _timing_headers(result.deid, received_at)
                now_out = [(t.output, deid_bytes, deid_headers)]
                if result.refined is None:
                    same = result.logs == result.deid  # same mode on both topics: same bytes
                    now_out.append((t.logs, deid_bytes if same else _payload(result.logs),
                                    deid_headers if same else _timing_headers(result.logs, received_at)))
                    later = None
                else:
                    later = result  # logs wait for the refinement (policy async-refine)
                if later is None:  # (async-refine turns are reprocessed on replay: logs come later)
                    self._journal_add(turn.session_id, tp, rec.offset, now_out)
                now_out.extend(self._state_payloads(turn.session_id))
        except Exception as exc:  # a bug or a pathological input: never crash, never lose
            log.error(
                "processing failed for %s[%d]@%d session=%s: %s",
                tp.topic,
                tp.partition,
                rec.offset,
                session_ref(turn.session_id),
                type(exc).__name__,
            )
            return await self._dead_letter(tp, rec, "processing_error", f"{type(exc).__name__} in pipeline")
        t0 = time.perf_counter()
        ok = await self._produce_all(turn.session_id, now_out)
        produce_s = time.perf_counter() - t0
        if not ok:
            return False
        self._mark_persisted(turn.session_id)
        step.done() or step.set_result(None)
        if later is not None:
            logs = await later.final_logs()
            if not await self._produce_all(turn.session_id, [(t.logs, logs, _timing_headers(logs, received_at))]):
                return False
        self._record(turn, is_reply, result, produce_s)
        return True

    # ------------------------------------------------------------------ replay journal
    # Outputs of a session's not-yet-committed turns travel inside its sealed state. A turn
    # replayed after a crash or a rebalance is answered from the journal with the very same
    # bytes, instead of being reprocessed with a session memory that has moved on since.
    def _journal_hit(self, session_id: str, tp: TopicPartition, offset: int) -> list | None:
        if self.state_store is None:
            return None
        state = self.pipeline.sessions.get(session_id)
        journal = state.journal
        if not journal:
            return None
        entry = journal.get(f"{tp.topic}:{tp.partition}:{offset}")
        if entry is None:
            return None
        return [(topic, base64.b64decode(value), None) for topic, value in entry]

    def _journal_add(self, session_id: str, tp: TopicPartition, offset: int, outputs: list) -> None:
        if self.state_store is None:
            return
        state = self.pipeline.sessions.peek(session_id)
        if state is None:
            return
        journal = state.journal
        po = self._offsets.get(tp)
        floor = po.committed if po is not None and po.committed is not None else None
        if floor is not None:  # committed turns are never replayed: prune them
            for key in [k for k in journal if k.startswith(f"{tp.topic}:{tp.partition}:") and int(k.rsplit(":", 1)[1]) < floor]:
                del journal[key]
        journal[f"{tp.topic}:{tp.partition}:{offset}"] = [
            (topic, base64.b64encode(_payload(out)).decode("ascii")) for topic, out, _h in outputs
        ]

    def _state_payloads(self, session_id: str) -> list:
        if self.state_store is None:
            return []
        state = self.pipeline.sessions.peek(session_id)
        rec = self.state_store.state_record(state) if state is not None else None
        if rec is None:
            return []
        topic, value, headers = rec
        return [(topic, value, headers)]

    def _mark_persisted(self, session_id: str) -> None:
        if self.state_store is not None:
            state = self.pipeline.sessions.peek(session_id)
            if state is not None:
                state.dirty = False

    def _record(self, turn: InputTurn, is_reply: bool, result, produce_s: float) -> None:
        m = self.metrics
        if is_reply:
            self.stats.replies += 1
        else:
            self.stats.processed += 1
        if m is None:
            return
        m.observe_stage("produce", produce_s)
        m.observe_e2e(max(0.0, time.time() - float(turn.sent_at)))
        if is_reply:
            m.turn("reply")
            return
        deid = result.deid
        m.observe_stages_ms(deid.timings_ms)
        for ent in deid.entities:
            m.entity(ent.label, ent.source)
        if deid.degraded:
            m.degraded()
        m.turn("degraded" if deid.degraded else "ok")

    async def _produce_all(self, session_id: str, outputs: list) -> bool:
        """outputs: (topic, OutputTurn | bytes | None, extra headers | None); None = tombstone."""
        key = session_id.encode("utf-8")
        payloads = [(topic, _payload(out), headers) for topic, out, headers in outputs]
        return await self._send_acked(payloads, key)

    async def _send_acked(self, payloads: list, key: bytes | None) -> bool:
        """Send and wait for acknowledgement, retrying until it succeeds or the worker stops."""
        delay = 0.1
        base_headers = [("content-type", b"application/json"), ("producer", b"plainsight")]
        while True:
            try:
                futs = []
                for topic, value, headers in payloads:
                    h = base_headers + list(headers or ())
                    futs.append(await self._producer.send(topic, value=value, key=key, headers=h))
                await asyncio.gather(*futs)
                return True
            except KafkaError as exc:
                self.stats.produce_errors += 1
                if isinstance(exc, UnknownTopicOrPartitionError) and self.settings.kafka.create_topics:
                    await self._recreate_topics()
                if self._stop.is_set():
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

    async def _dead_letter(self, tp: TopicPartition, rec, reason: str, detail: str) -> bool:
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
        ok = await self._send_acked([(self.settings.topics.dlq, dl.model_dump_json().encode("utf-8"), None)], None)
        if ok:
            self.stats.dead_letters += 1
            self.stats.dlq_by_reason[reason] += 1
            if self.metrics is not None:
                self.metrics.dlq(reason)
                self.metrics.turn("dlq")
        return ok

    # ------------------------------------------------------------------ offsets & rebalances
    async def _commit(self, partitions: list[TopicPartition] | None = None) -> None:
        """Commit the finished prefix of each partition (a failed commit is retried next time)."""
        if self._consumer is None:
            return
        async with self._commit_lock:
            offsets = {}
            for tp in partitions if partitions is not None else list(self._offsets):
                po = self._offsets.get(tp)
                nxt = po.committable() if po is not None else None
                if nxt is not None and nxt != po.committed:
                    offsets[tp] = nxt
            if not offsets:
                return
            try:
                await self._consumer.commit(offsets)
            except KafkaError as exc:
                log.warning("commit failed (%s); will retry", type(exc).__name__)
                return
            self.stats.commits += 1
            for tp, off in offsets.items():
                po = self._offsets.get(tp)
                if po is not None:
                    po.mark_committed(off)

    async def _commit_loop(self) -> None:
        interval = self.settings.worker.commit_interval_ms / 1e3
        while True:
            await asyncio.sleep(interval)
            try:
                await self._commit()
                self._update_gauges()
                await self._check_regression()
            except Exception as exc:  # keep committing whatever happens
                log.warning("commit loop error: %s", type(exc).__name__)

    def _update_gauges(self) -> None:
        expired = self.pipeline.sessions.expire_idle()
        if expired and self.state_store is not None:
            mine = self.state_store.expired_sessions(expired)
            if mine and self.settings.session.erase_expired:
                t = asyncio.create_task(self._erase(mine))
                self._bg.add(t)
                t.add_done_callback(self._bg.discard)
        if self.metrics is None or self._consumer is None:
            return
        self.metrics.set_active_sessions(len(self.pipeline.sessions))
        llm = getattr(self.pipeline, "llm", None)
        if llm is not None and getattr(llm, "stats", None) is not None:
            self.metrics.sync_llm_stats(llm.stats)
        for tp, po in list(self._offsets.items()):
            hw = self._consumer.highwater(tp)
            if hw is None:
                continue
            # lag = records on the broker not yet finished by us (committed or not)
            base = po.committed if po.committed is not None else (po.pending[0] if po.pending else hw)
            self.metrics.set_lag(tp.topic, tp.partition, max(0, hw - base))

    async def _check_regression(self) -> None:
        """A consumer position beyond the broker's log end means the broker lost its log (e.g. an
        in-memory broker restarted): read those partitions again from their beginning."""
        for tp, po in list(self._offsets.items()):
            hw = self._consumer.highwater(tp)
            if hw is None or po.pending:
                continue
            try:
                pos = await self._consumer.position(tp)
            except Exception:
                continue
            if pos > hw:
                log.warning("%s[%d]: position %d is beyond the broker's log end %d; re-reading from the start",
                            tp.topic, tp.partition, pos, hw)
                po.committed = None
                self._consumer.seek(tp, 0)

    async def _erase(self, session_ids: list[str]) -> None:
        """Tombstone the stored state of sessions that expired (idle longer than the TTL)."""
        for sid in session_ids:
            await self._send_acked([(self.settings.topics.state, None, None)], sid.encode("utf-8"))
        log.info("erased stored state of %d expired sessions", len(session_ids))

    async def _drain(self, partitions: list[TopicPartition], timeout: float) -> None:
        tasks = [t for tp in partitions for t in self._tasks.get(tp, ())]
        if not tasks:
            return
        done, pending = await asyncio.wait(tasks, timeout=timeout or None)
        if pending:
            log.warning("drain timed out with %d turns in flight; they stay uncommitted", len(pending))
            for t in pending:
                t.cancel()
            await asyncio.wait(pending, timeout=5)

    async def _on_revoked(self, revoked: list[TopicPartition]) -> None:
        self.stats.rebalances += 1
        mine = [tp for tp in revoked if tp in self._offsets]
        await self._drain(mine, self.settings.worker.drain_timeout_s)
        with contextlib.suppress(Exception):
            await self._commit(mine)
        for tp in mine:
            self._offsets.pop(tp, None)
            self._tasks.pop(tp, None)
            if self.metrics is not None:
                self.metrics.reset_lag(tp.topic, [tp.partition])
        if self.state_store is not None:
            await self.state_store.on_revoked(mine)
        log.info("partitions revoked: %s", _fmt_tps(mine))

    async def _on_assigned(self, assigned: list[TopicPartition]) -> None:
        for tp in assigned:
            self._offsets.setdefault(tp, _PartitionOffsets())
        if self.state_store is not None:
            await self.state_store.on_assigned(assigned)
        log.info("partitions assigned: %s", _fmt_tps(assigned))
        self._ready.set()
        if self.metrics is not None:
            self.metrics.set_ready(True)



def _payload(out: OutputTurn | bytes | None) -> bytes | None:
    return out.model_dump_json().encode("utf-8") if isinstance(out, OutputTurn) else out


def _timing_headers(out: OutputTurn, received_at: float = 0.0) -> list[tuple[str, bytes]]:
    """Per-stage timings, and when the worker took the input from its fetch (``received-at``) and
    built this output (``processed-at``), both epoch seconds: where end-to-end latency goes."""
    h = [
        ("plainsight-timings-ms", json.dumps({k: round(v, 3) for k, v in out.timings_ms.items()}).encode()),
        ("plainsight-processed-at", repr(out.processed_at).encode()),
    ]
    if received_at:
        h.append(("plainsight-received-at", repr(received_at).encode()))
    return h


def _fmt_tps(tps: list[TopicPartition]) -> str:
    return ",".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(tps)) or "-"
