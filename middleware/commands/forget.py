"""`plainsight forget SESSION_ID ...`: erase sessions' stored mapping state (right to erasure).

Erases the sessions from ``plainsight proxy``'s store too (``proxy.store``: the SQLite file when it
exists, or Redis), for every client. Reads the state topic first and reports, per session, whether stored state was found; then
writes a tombstone (null value) for each session to the compacted state topic. Running workers
tail their state partitions and drop the session from memory too; compaction then removes the
sealed state from the broker (within the bound the state topic's settings give: see
docs/security.md). The session's surrogates derived from its own random key, kept only in that
state: once it is gone no one, the holder of ``surrogate.secret`` included, can link them back.

A tombstone alone can lose a race: a turn processed with the old mapping just before it can
write the state again just after it. So ``forget`` also writes a *forget record* (MAC'd with a
sub-key of the surrogate secret) to the session's input partition: the worker handles it in the
session's turn order, after every earlier turn and its state write, drops the session, remembers
that it was erased, and writes the tombstone again. What it cannot erase: the input topics
(``chat.turns``, ``tutor.replies``) hold the raw turns until the operator's retention removes them.
"""

from __future__ import annotations

import argparse

from ._common import add_config_arguments


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("session_ids", nargs="+", metavar="SESSION_ID")
    add_config_arguments(p, llm=False)


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(forget(args))


async def forget(args: argparse.Namespace) -> int:
    import sys

    from plainsight.consumers.kafka import ensure_topics, make_producer

    from ._common import settings_from_args

    settings = settings_from_args(args)
    bootstrap = settings.kafka.bootstrap_servers
    proxy_done = await forget_proxy(settings, args.session_ids)
    if not bootstrap and proxy_done:
        return 0
    if not bootstrap:
        print("forget: no Kafka configured (--bootstrap-servers or PLAINSIGHT_KAFKA__BOOTSTRAP_SERVERS); "
              "the embedded broker keeps nothing after it stops", file=sys.stderr)
        return 2
    from plainsight.consumers.kafka import probe_broker

    await probe_broker(settings.kafka, bootstrap)  # unreachable: one line, exit 2, within connect_timeout_s
    if settings.kafka.create_topics:
        await ensure_topics(settings, bootstrap)
    # what is stored now, so the report says what was found (a tombstone is written for every id
    # anyway: a worker may be writing a session's state at this very moment)
    found, complete = await stored_sessions(settings, bootstrap, set(args.session_ids))
    from plainsight.middleware.keys import load_configured
    from plainsight.middleware.reply_token import control_mac, derive_key

    secret = load_configured(settings)[0]
    control_key = None
    if secret is not None:
        control_key = derive_key(secret.encode("utf-8") if isinstance(secret, str) else bytes(secret), b"control")
    producer = make_producer(settings, bootstrap)
    await producer.start()
    marked = 0
    try:
        for sid in args.session_ids:
            await producer.send_and_wait(settings.topics.state, key=sid.encode("utf-8"), value=None,
                                         headers=[("producer", b"plainsight-forget"), ("plainsight-erasure", b"forget")])
            if control_key is not None:
                # in the session's turn order: after any turn racing this forget
                await producer.send_and_wait(
                    settings.topics.input, key=sid.encode("utf-8"), value=b"{}",
                    headers=[("producer", b"plainsight-forget"), ("plainsight-control", b"forget"),
                             ("plainsight-control-mac", control_mac(control_key, "forget", sid).encode())])
                marked += 1
    finally:
        await producer.stop()
    topic = settings.topics.state
    n_found = 0
    for sid in args.session_ids:
        # the id is the user's own argument; printed as given
        if found.get(sid):
            n_found += 1
            print(f"{sid}: stored state found in {topic}: erased (tombstone written)", file=sys.stderr)
        elif sid in found:
            print(f"{sid}: already erased (the latest record was a tombstone)", file=sys.stderr)
        else:
            print(f"{sid}: no stored state found in {topic}: nothing to erase (tombstone written anyway)",
                  file=sys.stderr)
    note = "" if complete else " (the state topic could not be read to its end; counts may be low)"
    print(f"erased {n_found} of {len(args.session_ids)} session(s) from {topic}: {n_found} had stored state, "
          f"{len(args.session_ids) - n_found} had none{note}", file=sys.stderr)
    print("erased: each session's mapping (real values and their surrogates) and its own surrogate key; "
          "its in-memory state in running workers", file=sys.stderr)
    if marked:
        print(f"forget records written to {settings.topics.input} for {marked} session(s): workers erase them "
              "again after any turn that raced this command", file=sys.stderr)
    else:
        print("no surrogate.secret configured: no forget record written; a turn racing this command could "
              "write the state again (run forget with the workers' secret)", file=sys.stderr)
    print(f"not erased: the raw turns in {settings.topics.input} and {settings.topics.replies_in} (the operator's "
          "retention.ms decides), outputs already consumed downstream (surrogates only, now unlinkable); "
          f"compaction removes the sealed state from the brokers within the state topic's "
          "max.compaction.lag.ms + segment.ms (docs/security.md)", file=sys.stderr)
    return 0


async def forget_proxy(settings, session_ids: list[str]) -> bool:
    """Erase the sessions from the proxy's store (every client's); False when no store is there."""
    import os
    import sys

    ps = settings.proxy
    if ps.store == "memory" or (ps.store == "sqlite" and not os.path.exists(ps.sqlite_path)) or (
            ps.store == "redis" and not ps.redis_url):
        return False
    from plainsight.proxy.store import open_store

    store = open_store(ps)
    try:
        for sid in session_ids:
            n = await store.forget(sid)
            print(f"{sid}: {n} proxy session(s) erased from the proxy store ({ps.store})", file=sys.stderr)
    finally:
        await store.close()
    return True


async def stored_sessions(settings, bootstrap: str, wanted: set[str], timeout: float = 60.0) -> tuple[dict[str, bool], bool]:
    """Read the state topic to its end: ``{session id: True if its latest record holds state,
    False if it is a tombstone}`` for the ``wanted`` ids that appear, and whether the read
    completed within ``timeout``."""
    import time

    from aiokafka import TopicPartition

    from plainsight.consumers.kafka import make_consumer

    topic = settings.topics.state
    latest: dict[str, bool] = {}
    consumer = make_consumer(settings, bootstrap, group_id=None, enable_auto_commit=False, max_poll_records=5000)
    await consumer.start()
    try:
        await consumer.topics()
        parts = consumer.partitions_for_topic(topic)
        if not parts:
            return latest, True
        tps = [TopicPartition(topic, p) for p in sorted(parts)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        pending = set()
        for tp in tps:
            if await consumer.position(tp) < ends[tp]:
                pending.add(tp)
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            batch = await consumer.getmany(*pending, timeout_ms=500)
            for _tp, recs in batch.items():
                for r in recs:
                    if r.key is not None:
                        sid = r.key.decode("utf-8", "surrogatepass")
                        if sid in wanted:
                            latest[sid] = r.value is not None
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
        return latest, not pending
    finally:
        await consumer.stop()
