"""Order and offsets: a session's turns one after another (:class:`SessionOrder`); the assigned
partitions' offsets and in-flight turns, what may be committed, lag, and re-reading a partition
whose log the broker lost (:class:`OffsetTracker`).

An input offset is committed only after every output of its record is acknowledged, and only
as part of a contiguous run of finished offsets of its partition (at-least-once, in order).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Iterator

from aiokafka import TopicPartition
from aiokafka.errors import KafkaError

log = logging.getLogger(__name__)


class PartitionOffsets:
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


class SessionOrder:
    """A session's turns run one after another: each waits for the previous turn's *step* (its
    tutor-facing output acknowledged), not for a slow background refinement."""

    def __init__(self) -> None:
        self._tail: dict[str, asyncio.Future] = {}

    def __len__(self) -> int:
        """Sessions with a turn not yet answered."""
        return len(self._tail)

    def next_step(self, session_id: str) -> tuple[asyncio.Future | None, asyncio.Future]:
        """(the previous turn's step to wait for, or None; this turn's step, to resolve once its
        tutor-facing output is acknowledged)."""
        prev = self._tail.get(session_id)
        step: asyncio.Future = asyncio.get_running_loop().create_future()
        self._tail[session_id] = step

        def _release(_f, sid=session_id, step=step) -> None:
            if self._tail.get(sid) is step:
                del self._tail[sid]

        step.add_done_callback(_release)
        return prev, step


class OffsetTracker:
    """The assigned partitions' offsets, the turn tasks in flight on each, and the bound on
    consumed-but-unfinished records (``worker.max_in_flight``, backpressure)."""

    def __init__(self, max_in_flight: int, stats) -> None:
        self.partitions: dict[TopicPartition, PartitionOffsets] = {}
        self.tasks: dict[TopicPartition, set[asyncio.Task]] = collections.defaultdict(set)
        self.slots = asyncio.Semaphore(max_in_flight)
        self._commit_lock = asyncio.Lock()
        #: counts ``commits`` (the worker's WorkerStats)
        self.stats = stats

    # -------------------------------------------------------------- assignment
    def assign(self, tps: list[TopicPartition]) -> None:
        for tp in tps:
            self.partitions.setdefault(tp, PartitionOffsets())

    def owned(self, tps: list[TopicPartition]) -> list[TopicPartition]:
        return [tp for tp in tps if tp in self.partitions]

    def forget(self, tps: list[TopicPartition]) -> None:
        for tp in tps:
            self.partitions.pop(tp, None)
            self.tasks.pop(tp, None)

    def __contains__(self, tp: TopicPartition) -> bool:
        return tp in self.partitions

    # -------------------------------------------------------------- in flight
    @property
    def in_flight(self) -> int:
        return sum(len(ts) for ts in self.tasks.values())

    def add(self, tp: TopicPartition, offset: int) -> None:
        self.partitions[tp].add(offset)

    def track(self, tp: TopicPartition, offset: int, task: asyncio.Task) -> None:
        """The offset is finished when ``task`` returns True (its outputs acknowledged)."""
        tasks = self.tasks[tp]
        tasks.add(task)

        def _done(t: asyncio.Task, tp=tp, offset=offset) -> None:
            tasks.discard(t)
            self.slots.release()
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
            po = self.partitions.get(tp)
            if po is not None:
                po.finish(offset)

        task.add_done_callback(_done)

    async def drain(self, partitions: list[TopicPartition], timeout: float) -> None:
        """Wait for the turns in flight on ``partitions``; cancel what is left after ``timeout``."""
        tasks = [t for tp in partitions for t in self.tasks.get(tp, ())]
        if not tasks:
            return
        done, pending = await asyncio.wait(tasks, timeout=timeout or None)
        if pending:
            log.warning("drain timed out with %d turns in flight; they stay uncommitted", len(pending))
            for t in pending:
                t.cancel()
            await asyncio.wait(pending, timeout=5)

    # -------------------------------------------------------------- commits
    def committed_floor(self, tp: TopicPartition) -> int | None:
        po = self.partitions.get(tp)
        return po.committed if po is not None else None

    async def commit(self, consumer, partitions: list[TopicPartition] | None = None) -> None:
        """Commit the finished prefix of each partition (a failed commit is retried next time)."""
        if consumer is None:
            return
        async with self._commit_lock:
            offsets = {}
            for tp in partitions if partitions is not None else list(self.partitions):
                po = self.partitions.get(tp)
                nxt = po.committable() if po is not None else None
                if nxt is not None and nxt != po.committed:
                    offsets[tp] = nxt
            if not offsets:
                return
            try:
                await consumer.commit(offsets)
            except KafkaError as exc:
                log.warning("commit failed (%s); will retry", type(exc).__name__)
                return
            self.stats.commits += 1
            for tp, off in offsets.items():
                po = self.partitions.get(tp)
                if po is not None:
                    po.mark_committed(off)

    # -------------------------------------------------------------- recovery
    async def rewind_lost(self, consumer) -> None:
        """A consumer position beyond the broker's log end means the broker lost its log (e.g. an
        in-memory broker restarted): read those partitions again from their beginning."""
        for tp, po in list(self.partitions.items()):
            hw = consumer.highwater(tp)
            if hw is None or po.pending:
                continue
            try:
                pos = await consumer.position(tp)
            except Exception:
                continue
            if pos > hw:
                log.warning("%s[%d]: position %d is beyond the broker's log end %d; re-reading from the start",
                            tp.topic, tp.partition, pos, hw)
                po.committed = None
                consumer.seek(tp, 0)

    # -------------------------------------------------------------- lag
    def lag(self, consumer) -> Iterator[tuple[TopicPartition, int]]:
        """(partition, records on the broker not yet finished by us, committed or not)."""
        for tp, po in list(self.partitions.items()):
            hw = consumer.highwater(tp)
            if hw is None:
                continue
            base = po.committed if po.committed is not None else (po.pending[0] if po.pending else hw)
            yield tp, max(0, hw - base)
