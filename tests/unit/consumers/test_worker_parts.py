"""The worker's parts without a broker: session ordering, offsets, and the null objects standing
in for what is off (no metrics, no persisted state) keep the interface of the real ones."""

from __future__ import annotations

import asyncio
import inspect

from plainsight.consumers.journal import NoJournal, ReplayJournal
from plainsight.consumers.offsets import OffsetTracker, SessionOrder
from plainsight.consumers.state_store import KafkaStateStore, NoStateStore, StateStore
from plainsight.middleware.metrics import Metrics, NoMetrics


def _public(cls) -> set[str]:
    return {n for n, v in vars(cls).items() if callable(v) and not n.startswith("_")}


def test_null_objects_have_the_interface_of_the_real_ones():
    assert _public(NoMetrics) <= _public(Metrics), "NoMetrics records only what Metrics records"
    assert NoMetrics.enabled is False and Metrics.enabled is True
    protocol = {n for n in vars(StateStore) if not n.startswith("_") and n != "persists"}
    assert protocol <= _public(NoStateStore) and protocol <= _public(KafkaStateStore)
    assert NoStateStore.persists is False and KafkaStateStore.persists is True
    assert _public(NoJournal) == _public(ReplayJournal)
    for name in _public(NoStateStore):
        real, null = getattr(KafkaStateStore, name), getattr(NoStateStore, name)
        assert inspect.iscoroutinefunction(real) == inspect.iscoroutinefunction(null), name


async def test_session_order_chains_a_sessions_turns_only():
    order = SessionOrder()
    prev_a1, a1 = order.next_step("a")
    prev_b1, b1 = order.next_step("b")
    prev_a2, a2 = order.next_step("a")
    assert prev_a1 is None and prev_b1 is None and prev_a2 is a1
    assert len(order) == 2
    a1.set_result(None)
    b1.set_result(None)
    a2.set_result(None)
    await asyncio.sleep(0)
    assert len(order) == 0  # answered sessions are forgotten


async def test_offsets_commit_only_acknowledged_prefix():
    class Stats:
        commits = 0

    class Consumer:
        def __init__(self):
            self.committed = []

        async def commit(self, offsets):
            self.committed.append(dict(offsets))

    tp = ("t", 0)
    tr = OffsetTracker(10, Stats())
    tr.assign([tp])
    results = {}
    for off in (5, 6, 7):
        await tr.slots.acquire()
        tr.add(tp, off)
        fut = asyncio.get_running_loop().create_future()
        results[off] = fut
        tr.track(tp, off, asyncio.ensure_future(fut))
    results[6].set_result(True)
    results[7].set_result(False)  # not acknowledged: stays uncommitted
    await asyncio.sleep(0.01)
    c = Consumer()
    await tr.commit(c)
    assert c.committed == []  # 5 is not finished yet
    results[5].set_result(True)
    await asyncio.sleep(0.01)
    await tr.commit(c)
    assert c.committed == [{tp: 7}] and tr.committed_floor(tp) == 7 and tr.in_flight == 0


def test_the_null_state_store_does_nothing_on_every_hook():
    """``session.persist: false``: every StateStore hook of the null store is a no-op (a merge had
    left it a second ``mark_persisted`` that reached for a ``sessions`` attribute it doesn't have)."""
    from plainsight.consumers.state_store import NoStateStore

    store = NoStateStore()
    assert store.persists is False
    store.note_partition("s", 0)
    assert store.state_record(object()) is None
    store.mark_persisted("s")
