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
import collections
import contextlib
import logging
import sys
import time
from dataclasses import dataclass, field

from aiokafka import ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import KafkaError

from plainsight.middleware.config import Settings
from plainsight.middleware.logs import session_ref
from plainsight.middleware.metrics import MetricsSink, NoMetrics
from plainsight.middleware.parsing import ParseFailure, parse_turn
from plainsight.middleware.pipeline import Pipeline
from plainsight.middleware.runtime import freeze_heap
from plainsight.middleware.schemas import InputTurn
from plainsight.surrogate.pipeline import build_pipeline

from .dead_letters import DeadLetters
from .journal import NoJournal, ReplayJournal
from .kafka import ensure_topics, make_consumer
from .offsets import OffsetTracker, PartitionOffsets, SessionOrder
from .producer import (
    AckedProducer,
    PermanentProduceError,
    payload as _payload,
    timing_headers as _timing_headers,
    with_reply_token,
)
from .state_store import NoStateStore, StateStore

log = logging.getLogger(__name__)

#: (kept importable under its old name)
_PartitionOffsets = PartitionOffsets

#: Turns dispatched before the consumer loop yields to let them run (and their outputs be sent).
#: Keeping up: 1, each turn is detected and its outputs handed to the producer before the next one
#: starts (at 1,000 turns/s in-worker p99 3 ms against 7.5 ms with 8). Behind (a fetched batch, or
#: the sessions waiting for an answer, above DISPATCH_BATCH_SMALL): 8, so outputs go out in fewer,
#: larger produce requests (with 1 throughout, saturation fell from ~2,100 to ~1,500 turns/s).
DISPATCH_SLICE = 1
DISPATCH_SLICE_BACKLOG = 8
DISPATCH_BATCH_SMALL = 64

#: Turns (and replies) longer than this run off the event loop, in one worker thread, under
#: ``reverse.turn_deadline_s``: a session sending maximum-size turns cannot stall the others.
#: Shorter ones (almost all) run inline: a thread hop would cost more than their detection.
HEAVY_TURN_CHARS = 4000
#: the interpreter's thread switch interval while a heavy turn runs (default 5 ms)
HEAVY_SWITCH_S = 0.0005

#: header of a control record on the input topic (``plainsight forget``), and of its MAC
CONTROL_HEADER = "plainsight-control"
CONTROL_MAC_HEADER = "plainsight-control-mac"


@dataclass
class WorkerStats:
    consumed: int = 0
    processed: int = 0
    replies: int = 0
    replayed: int = 0
    dead_letters: int = 0
    produce_errors: int = 0
    forgotten: int = 0
    deadline_exceeded: int = 0
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
    """``start()`` → ``run()`` (until ``request_stop()``) → ``stop()``. Or ``async with`` + ``run()``.

    The jobs are split: :class:`~consumers.offsets.OffsetTracker` (order of offsets, commits,
    in-flight bound, lag, a broker that lost its log), :class:`~consumers.offsets.SessionOrder`
    (a session's turns one after another), :class:`~consumers.producer.AckedProducer` (acknowledged sends with
    retries, topics recreated), :class:`~consumers.dead_letters.DeadLetters`, the replay journal
    (:mod:`consumers.journal`), the session state store (:mod:`consumers.state_store`) and the
    metrics; the ones that are off are null objects (``NoStateStore``, ``NoJournal``,
    ``NoMetrics``). The worker dispatches, keeps a session's turns in order, and wires the rest.
    """

    def __init__(
        self,
        settings: Settings,
        bootstrap_servers: str,
        pipeline: Pipeline | None = None,
        metrics: MetricsSink | None = None,
        state_store: StateStore | None | str = "auto",
    ) -> None:
        from plainsight.middleware.keys import require_worker_secrets

        # no public or per-process secret in a worker: replays and other workers must agree
        require_worker_secrets(settings)
        from plainsight.middleware.keys import load_configured
        from plainsight.middleware.logs import set_digest_key
        from plainsight.middleware.reply_token import derive_key

        secret = load_configured(settings)[0]
        secret_b = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret or b"")
        #: sub-keys of the surrogate secret: reply tokens, forget records, log/DLQ digests
        self._reply_key = derive_key(secret_b, b"reply-token")
        self._control_key = derive_key(secret_b, b"control")
        set_digest_key(derive_key(secret_b, b"digest"))
        self.settings = settings
        self.bootstrap_servers = bootstrap_servers
        self.pipeline = pipeline or build_pipeline(settings)
        self.metrics: MetricsSink = metrics if metrics is not None else NoMetrics()
        if state_store == "auto":
            state_store = self._default_state_store() if settings.session.persist else None
        self.state_store: StateStore = state_store if state_store is not None else NoStateStore()
        if (self.state_store.persists and settings.surrogate.session_keys == "auto"
                and hasattr(self.pipeline.replacer, "session_keys")):
            # crypto-shredding: each session's surrogates derive from its own random key, kept
            # only in its sealed state (written before any output that depends on it leaves)
            self.pipeline.replacer.session_keys = True
        self._heavy = None  # the one thread that runs heavy turns (made on first use)
        self._heavy_running = 0
        self._switch = sys.getswitchinterval()
        self.journal = ReplayJournal(self.pipeline.sessions) if self.state_store.persists else NoJournal()
        self.stats = WorkerStats()
        t = settings.topics
        self._input_topics = [t.input] + ([t.replies_in] if settings.worker.process_replies else [])
        self._stop = asyncio.Event()
        self.offsets = OffsetTracker(settings.worker.max_in_flight, self.stats)
        self.producer = AckedProducer(settings, bootstrap_servers, self.stats, self._stop.is_set)
        self.dead_letters = DeadLetters(t.dlq, self.producer, self.stats, self.metrics)
        self._consumer = None
        self.order = SessionOrder()
        self._started = False
        self._ready = asyncio.Event()
        self._bg: set[asyncio.Task] = set()

    def _default_state_store(self) -> StateStore:
        from plainsight.middleware.state_codec import SessionCodec
        from plainsight.surrogate.crypto import StateCipher

        from .state_store import KafkaStateStore

        return KafkaStateStore(self.settings, self.bootstrap_servers, SessionCodec(self.pipeline, StateCipher.from_settings(self.settings)))

    @property
    def _offsets(self) -> dict[TopicPartition, PartitionOffsets]:
        """The assigned input partitions (and their offsets)."""
        return self.offsets.partitions

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
        await self.producer.start()
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
        return self.offsets.in_flight

    async def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until the worker has been assigned partitions at least once."""
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def run(self) -> None:
        """Consume until ``request_stop()``; then drain and commit (``stop()`` closes the clients)."""
        if not self._started:
            await self.start()
        committer = asyncio.create_task(self._commit_loop(), name="plainsight-committer")
        slots = self.offsets.slots
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
                behind = size > DISPATCH_BATCH_SMALL or len(self.order) > DISPATCH_BATCH_SMALL
                slice_n = DISPATCH_SLICE_BACKLOG if behind else DISPATCH_SLICE
                for tp, records in batch.items():
                    for rec in records:
                        await slots.acquire()
                        if tp not in self.offsets:  # revoked while we waited
                            slots.release()
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
            await self.offsets.drain(list(self.offsets.tasks), self.settings.worker.drain_timeout_s)
            await self._commit()

    async def stop(self) -> None:
        self._stop.set()
        if self._consumer is not None:
            await self.offsets.drain(list(self.offsets.tasks), self.settings.worker.drain_timeout_s)
            with contextlib.suppress(Exception):
                await self._commit()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._consumer.stop(), 10)
            self._consumer = None
        with contextlib.suppress(Exception):
            await self.pipeline.aclose()
        with contextlib.suppress(Exception):
            await self.state_store.stop()
        if self._heavy is not None:
            self._heavy.shutdown(wait=False, cancel_futures=True)
            self._heavy = None
        with contextlib.suppress(Exception):
            await self.producer.stop()
        self._started = False
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
        self.offsets.add(tp, rec.offset)
        control = _header(rec, CONTROL_HEADER)
        if control is not None and tp.topic == self.settings.topics.input:
            self._dispatch_control(tp, rec, control)
            return
        t0 = time.perf_counter()
        parsed = parse_turn(rec.value, self.settings.worker.max_payload_bytes)
        self.metrics.observe_stage("parse", time.perf_counter() - t0)
        if isinstance(parsed, ParseFailure):
            task = asyncio.create_task(self.dead_letters.send(tp, rec, parsed.reason, parsed.detail))
            self.offsets.track(tp, rec.offset, task)
            return
        sid = parsed.session_id
        self.state_store.note_partition(sid, tp.partition)
        prev, step = self.order.next_step(sid)
        task = asyncio.create_task(self._handle(tp, rec, parsed, prev, step, received_at))
        task.add_done_callback(lambda _t, step=step: step.done() or step.set_result(None))
        self.offsets.track(tp, rec.offset, task)

    def _dispatch_control(self, tp: TopicPartition, rec, action: bytes) -> None:
        """A control record (``plainsight forget``): handled in the session's turn order."""
        sid = rec.key.decode("utf-8", "replace") if rec.key is not None else ""
        mac = _header(rec, CONTROL_MAC_HEADER)
        from plainsight.middleware.reply_token import control_mac
        import hmac as _hmac

        act = action.decode("ascii", "replace")
        if not sid or act != "forget" or mac is None or not _hmac.compare_digest(
                mac, control_mac(self._control_key, act, sid).encode()):
            task = asyncio.create_task(self.dead_letters.send(tp, rec, "forged_control",
                                                              "control record without a valid MAC"))
            self.offsets.track(tp, rec.offset, task)
            return
        self.state_store.note_partition(sid, tp.partition)
        prev, step = self.order.next_step(sid)
        task = asyncio.create_task(self._forget(tp, sid, prev))
        task.add_done_callback(lambda _t, step=step: step.done() or step.set_result(None))
        self.offsets.track(tp, rec.offset, task)

    async def _forget(self, tp: TopicPartition, sid: str, prev: asyncio.Future | None) -> bool:
        """After every earlier turn of the session (their state writes included): drop it here,
        remember it was erased, and tombstone its state once more, so that the last record of
        the session in the state topic is a tombstone whatever raced the ``forget``."""
        if prev is not None and not prev.done():
            await asyncio.wait({prev})
        self.state_store.erase(sid)  # drops it from the cache too (and counts the erasure)
        self.pipeline.sessions.drop(sid)  # (without persisted state)
        if self.state_store.persists:
            headers = self.state_store.tombstone_headers(forget=True)
            if not await self.producer.send_acked([(self.settings.topics.state, None, headers, tp.partition)],
                                                  sid.encode("utf-8")):
                return False
        self.stats.forgotten += 1
        log.info("session %s forgotten (control record)", session_ref(sid))
        return True

    async def _off_loop(self, fn, *args):
        """Run ``fn(*args)`` in the heavy-turn thread under the turn deadline; raises TimeoutError
        past it (the work goes on in its thread; the caller waits for it before the session's
        next turn)."""
        import concurrent.futures

        if self._heavy is None:
            self._heavy = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="plainsight-heavy")
        # while heavy work holds the GIL, the event loop gets it back within HEAVY_SWITCH_S instead
        # of the default 5 ms at each await (a convoy that multiplied other sessions' latency)
        self._heavy_running += 1
        if self._heavy_running == 1:
            self._switch = sys.getswitchinterval()
            sys.setswitchinterval(HEAVY_SWITCH_S)
        loop = asyncio.get_running_loop()
        started = loop.create_future()

        def run():
            # the deadline counts from here: time queued behind another heavy turn is not this turn's
            loop.call_soon_threadsafe(lambda: started.done() or started.set_result(None))
            return fn(*args)

        fut = loop.run_in_executor(self._heavy, run)
        fut.add_done_callback(self._heavy_done)
        try:
            await asyncio.wait({started, fut}, return_when=asyncio.FIRST_COMPLETED)
            return await asyncio.wait_for(asyncio.shield(fut), self.settings.reverse.turn_deadline_s)
        except asyncio.TimeoutError:
            self.stats.deadline_exceeded += 1
            raise _PastDeadline(fut) from None

    def _heavy_done(self, _fut) -> None:
        self._heavy_running -= 1
        if self._heavy_running == 0:
            sys.setswitchinterval(self._switch)

    async def _reidentify(self, tp: TopicPartition, rec, turn: InputTurn):
        """A tutor reply → the real values, or None when it was dead-lettered (no valid token)."""
        from plainsight.middleware import reply_token

        if self.settings.reverse.require_reply_token and not reply_token.verify(
                self._reply_key, turn.session_id, turn.reply_token):
            await self.dead_letters.send(tp, rec, "reply_token",
                                         "tutor reply without a valid reply_token of its session")
            return None
        if len(turn.text) > HEAVY_TURN_CHARS:
            state = self.pipeline.sessions.get(turn.session_id)
            t0 = time.perf_counter()
            text, ents = await self._off_loop(self.pipeline.replacer.reidentify, turn.text, state.replace_state)
            from plainsight.middleware.schemas import OutputTurn

            return OutputTurn(session_id=turn.session_id, turn_id=turn.turn_id, role=turn.role, text=text,
                              entities=ents, mode="reidentified", sent_at=float(turn.sent_at),
                              metadata=self.pipeline._metadata_out(turn),
                              timings_ms={"reidentify": (time.perf_counter() - t0) * 1e3})
        return await self.pipeline.reidentify(turn)

    async def _process(self, turn: InputTurn):
        llm = self.pipeline.llm
        if len(turn.text) > HEAVY_TURN_CHARS and (llm is None or not llm.enabled):
            return await self._off_loop(self.pipeline.process_sync, turn)
        return await self.pipeline.process(turn)

    async def _handle(self, tp: TopicPartition, rec, turn: InputTurn, prev: asyncio.Future | None,
                      step: asyncio.Future, received_at: float = 0.0) -> bool:
        if prev is not None and not prev.done():
            await asyncio.wait({prev})
        is_reply = tp.topic == self.settings.topics.replies_in
        t = self.settings.topics
        sid = turn.session_id
        if self.state_store.was_erased(sid):
            if self.settings.session.after_forget == "refuse":
                return await self.dead_letters.send(tp, rec, "erased_session", "turn of a forgotten session")
            if not is_reply:  # a new session under the same id: fresh key, none of the erased values
                self.state_store.clear_erased(sid)
        state_out: list = []
        try:
            if is_reply:
                result = None
                if self.state_store.was_erased(sid):  # nothing to restore; no state is made for it
                    return await self.dead_letters.send(tp, rec, "erased_session", "reply to a forgotten session")
                reply = await self._reidentify(tp, rec, turn)
                if reply is None:
                    return True
                now_out = [(t.replies_out, reply, _timing_headers(reply, received_at))]
                later = None
            else:
                replay = self.journal.hit(turn.session_id, tp, rec.offset)
                if replay is not None:  # processed before a crash/rebalance: re-emit the same bytes
                    self.stats.replayed += 1
                    try:
                        if not await self.producer.produce_all(turn.session_id, replay):
                            return False
                    except PermanentProduceError as exc:
                        return await self.dead_letters.send(tp, rec, "produce_rejected",
                                                            f"broker refused an output ({exc.kind})")
                    step.done() or step.set_result(None)
                    return True
                result = await self._process(turn)
                from plainsight.middleware import reply_token

                deid_bytes, deid_headers = _payload(result.deid), _timing_headers(result.deid, received_at)
                # the tutor topic's copy carries the reply_token the tutor's answer must bring back
                tutor_bytes = with_reply_token(deid_bytes, reply_token.make(self._reply_key, sid, deid_bytes))
                now_out = [(t.output, tutor_bytes, deid_headers)]
                if result.refined is None:
                    same = result.logs == result.deid  # same mode on both topics: same bytes
                    now_out.append((t.logs, deid_bytes if same else _payload(result.logs),
                                    deid_headers if same else _timing_headers(result.logs, received_at)))
                    later = None
                else:
                    later = result  # logs wait for the refinement (policy async-refine)
                if later is None:  # (async-refine turns are reprocessed on replay: logs come later)
                    self.journal.add(turn.session_id, tp, rec.offset, now_out, self.offsets.committed_floor(tp))
                state_out = self._state_payloads(turn.session_id)
        except _PastDeadline as late_exc:
            log.warning("turn %s[%d]@%d session=%s past its deadline (%.1fs): dead-lettered", tp.topic,
                        tp.partition, rec.offset, session_ref(sid), self.settings.reverse.turn_deadline_s)
            ok = await self.dead_letters.send(tp, rec, "deadline", "detection or re-identification past the turn deadline")
            # the session's next turn waits for the late work (others do not)
            with contextlib.suppress(Exception):
                await late_exc.future
            return ok
        except Exception as exc:  # a bug or a pathological input: never crash, never lose
            log.error(
                "processing failed for %s[%d]@%d session=%s: %s",
                tp.topic,
                tp.partition,
                rec.offset,
                session_ref(turn.session_id),
                type(exc).__name__,
            )
            return await self.dead_letters.send(tp, rec, "processing_error", f"{type(exc).__name__} in pipeline")
        t0 = time.perf_counter()
        try:
            # the state (the session's key, the journal of these outputs) is durable before any
            # output that depends on it leaves: a replay after a crash gives the same bytes
            if state_out and not await self.producer.produce_all(turn.session_id, state_out):
                return False
            ok = await self.producer.produce_all(turn.session_id, now_out)
        except PermanentProduceError as exc:
            # too large / invalid / not authorised: never retried; the partition moves on
            self.journal.drop(sid, tp, rec.offset)  # a replay must not send what was refused
            st = self.pipeline.sessions.peek(sid) if state_out else None
            if st is not None:  # the state was not stored: write it again with the next turn
                st.stored_fingerprint = None
            return await self.dead_letters.send(tp, rec, "produce_rejected", f"broker refused an output ({exc.kind})")
        produce_s = time.perf_counter() - t0
        if not ok:
            return False
        self.state_store.mark_persisted(turn.session_id)
        step.done() or step.set_result(None)
        if later is not None:
            logs = await later.final_logs()
            try:
                if not await self.producer.produce_all(turn.session_id, [(t.logs, logs, _timing_headers(logs, received_at))]):
                    return False
            except PermanentProduceError:
                log.warning("refined logs output refused by the broker; not retried")
        self._record(turn, is_reply, result, produce_s)
        return True

    def _state_payloads(self, session_id: str) -> list:
        """The session's sealed state, to be produced with the turn's outputs, if it changed."""
        state = self.pipeline.sessions.peek(session_id)
        rec = self.state_store.state_record(state) if state is not None else None
        return [] if rec is None else [rec]

    def _record(self, turn: InputTurn, is_reply: bool, result, produce_s: float) -> None:
        if is_reply:
            self.stats.replies += 1
        else:
            self.stats.processed += 1
        m = self.metrics
        if not m.enabled:
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

    # ------------------------------------------------------------------ offsets, housekeeping, rebalances
    async def _commit(self, partitions: list[TopicPartition] | None = None) -> None:
        await self.offsets.commit(self._consumer, partitions)

    async def _commit_loop(self) -> None:
        interval = self.settings.worker.commit_interval_ms / 1e3
        while True:
            await asyncio.sleep(interval)
            try:
                await self._commit()
                self._housekeeping()
                await self.offsets.rewind_lost(self._consumer)
            except Exception as exc:  # keep committing whatever happens
                log.warning("commit loop error: %s", type(exc).__name__)

    def _housekeeping(self) -> None:
        """Expire idle sessions (tombstoning their stored state with ``session.erase_expired``),
        then update the gauges: active sessions, LLM counters, lag per partition."""
        expired = self.pipeline.sessions.expire_idle()
        if expired:
            part_of = getattr(self.state_store, "partition_of", lambda _sid: None)
            parts = {sid: part_of(sid) for sid in expired}
            mine = self.state_store.expired_sessions(expired)
            if mine and self.settings.session.erase_expired:
                t = asyncio.create_task(self._erase(mine, {s: p for s, p in parts.items() if p is not None}))
                self._bg.add(t)
                t.add_done_callback(self._bg.discard)
        if not self.metrics.enabled or self._consumer is None:
            return
        self._sync_state_events()
        self.metrics.set_active_sessions(len(self.pipeline.sessions))
        if self.pipeline.llm is not None:
            self.metrics.sync_llm_stats(self.pipeline.llm.stats)
        for tp, lag in self.offsets.lag(self._consumer):
            self.metrics.set_lag(tp.topic, tp.partition, lag)

    def _sync_state_events(self) -> None:
        now = {
            "capped_value": getattr(self.pipeline.replacer, "capped", 0),
            "bad_state_key": getattr(self.state_store, "bad_keys", 0),
            "forgotten": self.stats.forgotten,
            "deadline": self.stats.deadline_exceeded,
            "rollback_refused": getattr(self.state_store, "rollbacks", 0),
        }
        seen = getattr(self, "_events_seen", {})
        for k, v in now.items():
            self.metrics.state_event(k, v - seen.get(k, 0))
        self._events_seen = now

    async def _erase(self, session_ids: list[str], partitions: dict[str, int] | None = None) -> None:
        """Tombstone the stored state of sessions that expired (idle longer than the TTL)."""
        for sid in session_ids:
            p = (partitions or {}).get(sid)
            with contextlib.suppress(PermanentProduceError):
                headers = getattr(self.state_store, "tombstone_headers", lambda forget: None)(False)
                await self.producer.send_acked([(self.settings.topics.state, None, headers, p)], sid.encode("utf-8"))
        log.info("erased stored state of %d expired sessions", len(session_ids))

    async def _on_revoked(self, revoked: list[TopicPartition]) -> None:
        self.stats.rebalances += 1
        mine = self.offsets.owned(revoked)
        await self.offsets.drain(mine, self.settings.worker.drain_timeout_s)
        with contextlib.suppress(Exception):
            await self._commit(mine)
        self.offsets.forget(mine)
        for tp in mine:
            self.metrics.reset_lag(tp.topic, [tp.partition])
        await self.state_store.on_revoked(mine)
        log.info("partitions revoked: %s", _fmt_tps(mine))

    async def _on_assigned(self, assigned: list[TopicPartition]) -> None:
        self.offsets.assign(assigned)
        await self.state_store.on_assigned(assigned)
        log.info("partitions assigned: %s", _fmt_tps(assigned))
        self._ready.set()
        self.metrics.set_ready(True)


class _PastDeadline(Exception):
    """Detection or re-identification ran past ``reverse.turn_deadline_s`` (``future``: the work)."""

    def __init__(self, future) -> None:
        super().__init__("past the turn deadline")
        self.future = future


def _header(rec, name: str) -> bytes | None:
    for k, v in rec.headers or ():
        if k == name:
            return v
    return None


def _fmt_tps(tps: list[TopicPartition]) -> str:
    return ",".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(tps)) or "-"
