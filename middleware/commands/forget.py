"""`plainsight forget SESSION_ID ...`: erase sessions' stored mapping state (right to erasure).

Writes a tombstone (null value) for each session to the compacted state topic. Running workers
tail their state partitions and drop the session from memory too; compaction then removes the
sealed state from the broker. Outputs already written contain surrogates only; without the
mapping nothing links them back to the real values.
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

    from consumers.kafka import ensure_topics, make_producer

    from ._common import settings_from_args

    settings = settings_from_args(args)
    bootstrap = settings.kafka.bootstrap_servers
    if not bootstrap:
        print("forget: no Kafka configured (--bootstrap-servers or PLAINSIGHT_KAFKA__BOOTSTRAP_SERVERS); "
              "the embedded broker keeps nothing after it stops", file=sys.stderr)
        return 2
    if settings.kafka.create_topics:
        await ensure_topics(settings, bootstrap)
    producer = make_producer(settings, bootstrap)
    await producer.start()
    try:
        for sid in args.session_ids:
            await producer.send_and_wait(settings.topics.state, key=sid.encode("utf-8"), value=None,
                                         headers=[("producer", b"plainsight-forget")])
    finally:
        await producer.stop()
    print(f"erased {len(args.session_ids)} session(s) from {settings.topics.state}", file=sys.stderr)
    return 0
