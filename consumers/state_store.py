"""Session state in a compacted Kafka topic, keyed by ``session_id``, values sealed (AES-GCM).

- The state topic is co-partitioned with the input topic (same count, same key), so the
  sessions of input partition *p* have their state in state partition *p*.
- On assignment, the worker reads its state partitions from the beginning to the high-water
  mark before it processes any turn of them (the rebalance callback awaits the load). Sealed
  blobs are indexed per session; a blob is opened only when its session becomes active.
- The worker writes a session's sealed state together with the outputs of a turn that changed
  it; the input offset is committed only after all of them are acknowledged.
- Sessions pushed out of the in-memory cache by its size bound keep their sealed state in the
  index and are reopened on their next turn.
- A reader task keeps tailing the assigned state partitions, so a tombstone written by
  ``plainsight forget`` erases the session from a running worker's memory too.
- Sessions idle for longer than ``session.ttl_s`` are dropped from memory; with
  ``session.erase_expired`` they are also tombstoned in the topic (data minimisation).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
import uuid
from typing import Protocol

from aiokafka import TopicPartition
from aiokafka.errors import KafkaError

from plainsight.middleware.logs import session_ref
from plainsight.middleware.sessions import SessionState, SessionStore
from plainsight.middleware.state_codec import SessionCodec, StateDecodeError

from .kafka import make_consumer

log = logging.getLogger(__name__)

WRITER_HEADER = "plainsight-writer"
#: on a tombstone that ``forget`` asked for (not an expiry): the session joins the erased set
ERASURE_HEADER = "plainsight-erasure"
FORGET = b"forget"

#: erased sessions remembered (most recent first out), so that their state is never written again
MAX_ERASED_REMEMBERED = 200_000


class StateStore(Protocol):
    """What the worker needs from a session state store (a null one when state is not persisted)."""

    #: states are persisted (the worker keeps a replay journal in them)
    persists: bool

    def attach(self, sessions: SessionStore) -> None: ...
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    def note_partition(self, session_id: str, partition: int) -> None: ...
    def state_record(self, state: SessionState) -> tuple[str, bytes, list[tuple[str, bytes]]] | None: ...
    def mark_persisted(self, session_id: str) -> None: ...
    async def on_assigned(self, tps: list[TopicPartition]) -> None: ...
    async def on_revoked(self, tps: list[TopicPartition]) -> None: ...
    def expired_sessions(self, expired_ids: list[str]) -> list[str]: ...
    def was_erased(self, session_id: str) -> bool: ...
    def tombstone_headers(self, forget: bool) -> list[tuple[str, bytes]]:
        return [(WRITER_HEADER, self.writer_id)] + ([(ERASURE_HEADER, FORGET)] if forget else [])

    def erase(self, session_id: str) -> None: ...
    def clear_erased(self, session_id: str) -> None: ...


class NoStateStore:
    """``session.persist: false``: sessions live in the worker's memory only."""

    persists = False

    def attach(self, sessions: SessionStore) -> None:
        return None

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    def note_partition(self, session_id: str, partition: int) -> None:
        return None

    def state_record(self, state: SessionState) -> None:
        return None

    def mark_persisted(self, session_id: str) -> None:
        return None

    async def on_assigned(self, tps: list[TopicPartition]) -> None:
        return None

    async def on_revoked(self, tps: list[TopicPartition]) -> None:
        return None

    def expired_sessions(self, expired_ids: list[str]) -> list[str]:
        return []

    def was_erased(self, session_id: str) -> bool:
        return False

    def tombstone_headers(self, forget: bool) -> list[tuple[str, bytes]]:
        return [(WRITER_HEADER, self.writer_id)] + ([(ERASURE_HEADER, FORGET)] if forget else [])

    def erase(self, session_id: str) -> None:
        return None

    def clear_erased(self, session_id: str) -> None:
        return None


class KafkaStateStore:
    """The :class:`~middleware.sessions.SessionRepository` of the worker: sealed session states in
    the compacted state topic."""

    persists = True

    def __init__(self, settings, bootstrap_servers: str, codec: SessionCodec) -> None:
        self.settings = settings
        self.bootstrap = bootstrap_servers
        self.codec = codec
        self.topic = settings.topics.state
        self.writer_id = uuid.uuid4().hex[:12].encode()
        self._consumer = None
        self._owned: set[int] = set()
        #: session id → (partition, sealed blob) for sessions of owned partitions not yet decoded
        self._blobs: dict[str, tuple[int, bytes]] = {}
        #: session id → partition, for every session this worker holds (decoded or not)
        self._partition_of: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self._tail_task: asyncio.Task | None = None
        self.loaded = 0
        self.erased = 0
        self.undecodable = 0
        #: state records skipped because their key is not UTF-8 (a metric; the load goes on)
        self.bad_keys = 0
        #: sealed states refused because they are older than one already seen for the session
        self.rollbacks = 0
        #: session id → the newest state version seen (a rollback is refused)
        self._versions: dict[str, int] = {}
        #: sessions erased (tombstone seen or ``forget`` record processed): never written again
        #: by this worker; a later turn starts a fresh session (or is refused: session.after_forget)
        self._erased: collections.OrderedDict[str, None] = collections.OrderedDict()
        #: the session cache this store backs (``attach``)
        self.sessions: SessionStore | None = None

    # -------------------------------------------------------------- lifecycle
    async def start(self) -> None:
        self._consumer = make_consumer(
            self.settings, self.bootstrap, group_id=None, enable_auto_commit=False, max_poll_records=5000
        )
        await self._consumer.start()
        self._tail_task = asyncio.create_task(self._tail(), name="plainsight-state-tail")

    async def stop(self) -> None:
        if self._tail_task is not None:
            self._tail_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._tail_task
        if self._consumer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._consumer.stop(), 10)
        self._consumer = None

    def attach(self, sessions: SessionStore) -> None:
        """Back the session cache: stored state is consulted on a miss, and the sealed state of
        sessions the cache bound pushes out is kept."""
        self.sessions = sessions
        sessions.use(self)

    # -------------------------------------------------------------- worker hooks
    def note_partition(self, session_id: str, partition: int) -> None:
        self._partition_of[session_id] = partition

    def state_record(self, state) -> tuple | None:
        """(topic, sealed value, headers, partition) to produce before a turn's outputs, if the
        state changed. The partition is set explicitly: the session's input partition (the state
        topic is co-partitioned), whatever the producer's partitioner would pick."""
        if not state.dirty or state.session_id in self._erased:
            return None
        # write only when something a replay depends on changed (most turns change nothing)
        fp = self.codec.fingerprint(state)
        if state.stored_fingerprint == fp:
            state.dirty = False
            return None
        state.stored_fingerprint = fp
        # never write a version below one this store has seen (a session restarted after expiry)
        state.version = max(state.version, self._versions.get(state.session_id, 0))
        bound_journal(state, self.settings.worker.max_payload_bytes * 4)
        return self.topic, self.codec.encode(state), [(WRITER_HEADER, self.writer_id)], \
            self._partition_of.get(state.session_id)

    def mark_persisted(self, session_id: str) -> None:
        """The turn's outputs and state record are acknowledged: the state is stored."""
        state = self.sessions.peek(session_id) if self.sessions is not None else None
        if state is not None:
            state.dirty = False

    async def on_assigned(self, tps: list[TopicPartition]) -> None:
        parts = {tp.partition for tp in tps if tp.topic == self.settings.topics.input}
        new = parts - self._owned
        if not new:
            return
        async with self._lock:
            self._owned |= new
            assignment = [TopicPartition(self.topic, p) for p in sorted(self._owned)]
            self._consumer.assign(assignment)
            fresh = [TopicPartition(self.topic, p) for p in sorted(new)]
            await self._consumer.seek_to_beginning(*fresh)
            t0 = time.perf_counter()
            n = await self._read_to_end(fresh)
            log.info(
                "loaded %d stored session states from %d partitions in %.0f ms",
                n, len(fresh), (time.perf_counter() - t0) * 1e3,
            )

    async def on_revoked(self, tps: list[TopicPartition]) -> None:
        parts = {tp.partition for tp in tps if tp.topic == self.settings.topics.input}
        gone = parts & self._owned
        if not gone:
            return
        async with self._lock:
            self._owned -= gone
            self._consumer.assign([TopicPartition(self.topic, p) for p in sorted(self._owned)])
            for sid, p in list(self._partition_of.items()):
                if p in gone:
                    del self._partition_of[sid]
                    self._blobs.pop(sid, None)
                    self._versions.pop(sid, None)
                    if self.sessions is not None:
                        self.sessions.drop(sid)

    # -------------------------------------------------------------- reading
    async def _read_to_end(self, tps: list[TopicPartition], timeout: float = 120.0) -> int:
        """Read ``tps`` until each position reaches its high-water mark (bounded)."""
        n = 0
        deadline = time.monotonic() + timeout
        pending = set(tps)
        while pending and time.monotonic() < deadline:
            batch = await self._consumer.getmany(*pending, timeout_ms=100)
            for tp, recs in batch.items():
                for r in recs:
                    self._apply(tp.partition, r, loading=True)
                    n += 1
            for tp in list(pending):
                hw = self._consumer.highwater(tp)
                if hw is None:
                    continue
                if await self._consumer.position(tp) >= hw:
                    pending.discard(tp)
        if pending:
            raise RuntimeError(f"state partitions not loaded within {timeout}s")
        self.loaded += n
        return n

    def _apply(self, partition: int, rec, loading: bool = False) -> None:
        if rec.key is None:
            return
        try:
            sid = rec.key.decode("utf-8")
        except UnicodeDecodeError:  # not a session of ours: skip it, count it, go on loading
            self.bad_keys += 1
            log.warning("state record %d@%d skipped: key is not UTF-8", partition, rec.offset)
            return
        headers = dict(rec.headers or ())
        if not loading and headers.get(WRITER_HEADER) == self.writer_id:
            # our own write read back by the tail (a state, or a tombstone we already applied):
            # memory (or the stash) is already ahead of it. (While loading a newly assigned
            # partition every record counts, ours included: we may have owned the partition
            # before, and dropped its sessions when it was revoked.)
            return
        if rec.value is None:  # tombstone: the session was erased
            self._erase_local(sid)
            if headers.get(ERASURE_HEADER) == FORGET:  # forgotten, not expired
                self._remember_erased(sid)
            self._versions.pop(sid, None)  # a session started after the erasure counts from 1 again
            return
        version = self._version_of(rec.value)
        if version is not None:
            if version < self._versions.get(sid, -1):
                self.rollbacks += 1
                log.warning("state record of session %s refused: older (version %d) than one already seen",
                            session_ref(sid), version)
                return
            self._versions[sid] = version
        if sid in self._erased and loading:
            # a record after the tombstone while loading: a fresh session started after the
            # erasure (a new key, none of the erased values): it is the session now
            self._erased.pop(sid, None)
        self._partition_of[sid] = partition
        self._blobs[sid] = (partition, rec.value)
        if self.sessions is not None:
            self.sessions.drop(sid)  # a newer stored state wins over a cached one

    def _version_of(self, blob: bytes) -> int | None:
        version_of = getattr(self.codec.cipher, "version_of", None)
        if version_of is None:
            return None
        try:
            return version_of(blob)
        except Exception:  # not an envelope: decoding will say so when the session is opened
            return None

    def _remember_erased(self, sid: str) -> None:
        self._erased[sid] = None
        self._erased.move_to_end(sid)
        while len(self._erased) > MAX_ERASED_REMEMBERED:
            self._erased.popitem(last=False)

    def was_erased(self, session_id: str) -> bool:
        return session_id in self._erased

    def tombstone_headers(self, forget: bool) -> list[tuple[str, bytes]]:
        return [(WRITER_HEADER, self.writer_id)] + ([(ERASURE_HEADER, FORGET)] if forget else [])

    def erase(self, session_id: str) -> None:
        """Drop the session everywhere in this worker and remember it was erased."""
        self._erase_local(session_id)
        self._versions.pop(session_id, None)
        self._remember_erased(session_id)

    def clear_erased(self, session_id: str) -> None:
        """A new session under an erased id starts (session.after_forget: fresh)."""
        self._erased.pop(session_id, None)

    def partition_of(self, session_id: str) -> int | None:
        return self._partition_of.get(session_id)

    def _erase_local(self, sid: str) -> None:
        self._blobs.pop(sid, None)
        self._partition_of.pop(sid, None)
        if self.sessions is not None and self.sessions.drop(sid):
            self.erased += 1
            log.info("session %s erased (tombstone)", session_ref(sid))

    # -------------------------------------------------------------- SessionRepository
    def evicted(self, state: SessionState) -> None:
        if state.session_id in self._erased:
            return
        p = self._partition_of.get(state.session_id)
        if p is not None and p in self._owned:
            self._blobs[state.session_id] = (p, self.codec.encode(state))

    def load(self, sid: str) -> SessionState | None:
        entry = self._blobs.pop(sid, None)
        if entry is None:
            return None
        try:
            return self.codec.decode(sid, entry[1])
        except StateDecodeError as exc:
            self.undecodable += 1
            log.error("stored state of session %s unreadable (%s); starting it fresh", session_ref(sid), exc)
            return None

    async def _tail(self) -> None:
        while True:
            try:
                async with self._lock:
                    if self._owned:
                        batch = await self._consumer.getmany(timeout_ms=50, max_records=5000)
                    else:
                        batch = {}
                for tp, recs in batch.items():
                    if tp.partition in self._owned:
                        for r in recs:
                            self._apply(tp.partition, r)
                await asyncio.sleep(0.05 if not batch else 0)
            except asyncio.CancelledError:
                raise
            except KafkaError as exc:
                log.warning("state tail fetch failed (%s)", type(exc).__name__)
                await asyncio.sleep(0.5)
            except Exception as exc:  # never let the tail die silently
                log.error("state tail error: %s", type(exc).__name__)
                await asyncio.sleep(0.5)

    # -------------------------------------------------------------- expiry
    def expired_sessions(self, expired_ids: list[str]) -> list[str]:
        """Forget bookkeeping of sessions that expired from memory; returns those we own."""
        mine = []
        for sid in expired_ids:
            if self._partition_of.pop(sid, None) is not None:
                mine.append(sid)
            self._blobs.pop(sid, None)
        return mine


def bound_journal(state: SessionState, budget: int) -> None:
    """Keep the replay journal within ``budget`` bytes of base64 (oldest entries out first), so
    that a session's sealed state always fits in one record: a dropped entry's turn is processed
    again on a replay (the mapping is stored, so its surrogates are the same)."""
    j = state.journal
    if not j:
        return
    size = sum(len(v) for outs in j.values() for _t, v in outs)
    if size <= budget:
        return
    for key in list(j):
        if size <= budget:
            break
        size -= sum(len(v) for _t, v in j.pop(key))
