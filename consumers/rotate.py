"""``plainsight keys rotate``: re-seal every stored session state under the active key.

Reads the compacted state topic from the beginning to its end (every partition), keeps the
latest record of each session, and rewrites the sessions whose latest state is sealed with a key
other than the active one: decrypt with the old key, encrypt with the active one, produce to
the same partition under the same key. After that, the old keys can be dropped from the
configuration.

* **Safe to re-run**: states already sealed under the active key are left alone.
* **Safe while workers run** (they run with the new key active and the old ones still
  configured): a session a worker wrote, or ``plainsight forget`` erased, between the snapshot
  and the rewrite would otherwise be set back by the rewritten copy, so after the rewrites the
  topic is read again and, for such a session, the newer record is published once more after
  the rewritten one (the newest state wins, an erased session stays erased).
* States sealed with the public development key (key id ``dev``) are not re-sealed: anyone could
  have read them. They are counted as refused (``plainsight forget`` erases them).
* States that no configured key opens are counted as unreadable and left as they are.

Nothing here logs or prints a session id, a key or a value: counts only.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass

from aiokafka import TopicPartition

from plainsight.surrogate.crypto import DEV_KEY_ID, StateCipher, StateCryptoError

from .kafka import make_consumer, make_producer
from .state_store import WRITER_HEADER

ROTATE_WRITER = b"plainsight-rotate"


@dataclass
class RotationReport:
    topic: str
    active_key_id: str
    partitions: int = 0
    records_read: int = 0
    sessions: int = 0  # sessions with a stored state (latest record not a tombstone)
    erased: int = 0  # sessions whose latest record is a tombstone
    current: int = 0  # already sealed under the active key
    resealed: int = 0  # rewritten under the active key
    refused_dev: int = 0  # sealed with the public development key: not re-sealed
    unreadable: int = 0  # no configured key opens them (or not an envelope)
    republished: int = 0  # newer records written during the rotation, published again after ours
    dry_run: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        verb = "would re-seal" if self.dry_run else "re-sealed"
        return (
            f"{self.topic}: {self.records_read} records, {self.sessions} stored session states "
            f"({self.erased} erased); {verb} {self.resealed} under key {self.active_key_id!r}, "
            f"{self.current} already under it, {self.refused_dev} refused (public development key), "
            f"{self.unreadable} unreadable; {self.republished} newer states re-published after a concurrent "
            f"write; {self.seconds:.1f}s"
        )


async def _read(consumer, tps: list[TopicPartition], ends: dict[TopicPartition, int], timeout: float):
    """Records of ``tps`` from their current positions to their ends: at least ``ends`` and at
    least the high watermark the fetch responses report. (ListOffsets alone is not enough: the
    embedded Tansu broker answers it with the last batch's base offset + 1.)"""
    out = []
    pending = set(tps)
    deadline = time.monotonic() + timeout
    while pending:
        if time.monotonic() > deadline:
            raise TimeoutError(f"state topic not read to its end within {timeout:.0f}s")
        batch = await consumer.getmany(*pending, timeout_ms=200, max_records=5000)
        for tp, recs in batch.items():
            out.extend((tp.partition, r) for r in recs)
        for tp in list(pending):
            hw = consumer.highwater(tp)
            pos = await consumer.position(tp)
            if hw is not None and pos >= max(hw, ends.get(tp, 0)):
                pending.discard(tp)
    return out


async def rotate_state(settings, bootstrap: str, cipher: StateCipher, *, dry_run: bool = False,
                       timeout: float = 300.0, on_snapshot=None) -> RotationReport:
    """Re-seal the state topic under ``cipher.active_key_id``; see the module docstring.
    ``on_snapshot`` (tests): an async callable awaited between the snapshot and the rewrites."""
    t0 = time.perf_counter()
    topic = settings.topics.state
    rep = RotationReport(topic=topic, active_key_id=cipher.active_key_id, dry_run=dry_run)
    consumer = make_consumer(settings, bootstrap, group_id=None, enable_auto_commit=False, max_poll_records=5000)
    producer = None
    await consumer.start()
    try:
        await consumer.topics()  # metadata of every topic
        parts = consumer.partitions_for_topic(topic)
        if not parts:
            raise LookupError(f"state topic {topic!r} not found")
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        rep.partitions = len(tps)
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        latest: dict[tuple[int, bytes], object] = {}
        for p, r in await _read(consumer, tps, ends, timeout):
            rep.records_read += 1
            if r.key is not None:
                latest[(p, r.key)] = r
        snapshot = {tp: await consumer.position(tp) for tp in tps}  # everything before was read

        rewrites = []  # (partition, key, new value)
        for (p, key), r in latest.items():
            if r.value is None:
                rep.erased += 1
                continue
            rep.sessions += 1
            sid = key.decode("utf-8", "surrogatepass")
            try:
                kid = cipher.key_id_of(r.value)
            except StateCryptoError:
                rep.unreadable += 1
                continue
            if kid == cipher.active_key_id:
                rep.current += 1
                continue
            if kid == DEV_KEY_ID and kid not in cipher.key_ids:
                rep.refused_dev += 1
                continue
            try:
                plain = cipher.decrypt(r.value, sid)
            except StateCryptoError:
                rep.unreadable += 1
                continue
            rewrites.append((p, key, cipher.encrypt(plain, sid, version=_version(cipher, r.value))))
        rep.resealed = len(rewrites)
        if dry_run or not rewrites:
            return rep

        if on_snapshot is not None:
            await on_snapshot()
        producer = make_producer(settings, bootstrap)
        await producer.start()
        headers = [(WRITER_HEADER, ROTATE_WRITER)]
        futs = [await producer.send(topic, key=key, value=val, partition=p, headers=headers) for p, key, val in rewrites]
        metas = await asyncio.gather(*futs)
        ours = {(p, key): m.offset for (p, key, _v), m in zip(rewrites, metas)}

        # Concurrent writers: a record another writer put between the snapshot and our rewrite is
        # newer than what we rewrote; publish it again after ours (re-sealed if need be).
        new_ends = {tp: 0 for tp in tps}
        for (p, _key), off in ours.items():
            tp = TopicPartition(topic, p)
            new_ends[tp] = max(new_ends[tp], off + 1)
        for tp in tps:
            consumer.seek(tp, snapshot[tp])
        newer: dict[tuple[int, bytes], object] = {}
        after_ours: set[tuple[int, bytes]] = set()
        for p, r in await _read(consumer, tps, new_ends, timeout):
            k = (p, r.key)
            if k not in ours or dict(r.headers or ()).get(WRITER_HEADER) == ROTATE_WRITER:
                continue
            if r.offset < ours[k]:
                newer[k] = r
            else:
                after_ours.add(k)
        again = []
        for k, r in newer.items():
            if k in after_ours:
                continue  # a still newer write follows ours: the topic is right already
            val = r.value
            if val is not None:
                sid = k[1].decode("utf-8", "surrogatepass")
                try:
                    if cipher.key_id_of(val) != cipher.active_key_id:
                        val = cipher.encrypt(cipher.decrypt(val, sid), sid, version=_version(cipher, val))
                except StateCryptoError:
                    pass  # publish it as it was: never leave our older copy on top
            again.append((k[0], k[1], val))
        if again:
            futs = [await producer.send(topic, key=key, value=val, partition=p, headers=headers) for p, key, val in again]
            await asyncio.gather(*futs)
        rep.republished = len(again)
        return rep
    finally:
        rep.seconds = time.perf_counter() - t0
        if producer is not None:
            await asyncio.wait_for(producer.stop(), 30)
        await asyncio.wait_for(consumer.stop(), 30)


def _version(cipher, blob: bytes) -> int | None:
    """The state version of ``blob`` kept through re-sealing (None: a version 1 envelope)."""
    v = getattr(cipher, "version_of", None)
    if v is None or blob[3:4] != b"\x02":
        return None
    return v(blob)
