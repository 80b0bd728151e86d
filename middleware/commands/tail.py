"""`plainsight tail`: print the records of one of plainsight's topics, one JSON line each.

``--topic`` is ``deid`` (the tutor topic, default), ``logs``, ``replies`` (re-identified tutor
replies for the student), ``dlq``, ``input``, ``replies-in``, or any topic name. Reads from the
beginning; stops after ``--max`` records or ``--timeout`` seconds without a new one (without
either it follows until Ctrl-C). The state topic is sealed binary and not printed.
"""

from __future__ import annotations

import argparse

from ._common import NO_BROKER, add_broker_arguments, command_error


ALIASES = {"deid": "output", "logs": "logs", "replies": "replies_out", "dlq": "dlq", "input": "input",
           "replies-in": "replies_in"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--topic", default="deid",
                   help="deid (default) | logs | replies | dlq | input | replies-in | a topic name")
    p.add_argument("--max", type=int, default=None, metavar="N", help="stop after N records")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="stop after S seconds without a new record")
    p.add_argument("--session", default=None, help="only records of this session (the record key)")
    add_broker_arguments(p)


def run(args: argparse.Namespace) -> int:
    from ._common import run_async

    return run_async(tail(args))


def _err(msg: str) -> int:
    return command_error("tail", msg)


async def tail(args: argparse.Namespace) -> int:
    import asyncio
    import sys
    import time

    from plainsight.consumers.kafka import make_consumer, probe_broker

    from ._common import settings_from_args

    settings = settings_from_args(args)
    bootstrap = settings.kafka.bootstrap_servers
    if not bootstrap:
        return _err(NO_BROKER)
    if args.max is not None and args.max < 1:
        return _err("--max must be >= 1")
    topics = settings.topics
    topic = getattr(topics, ALIASES[args.topic]) if args.topic in ALIASES else args.topic
    if topic == topics.state:
        return _err(f"{topic} is the sealed state topic: nothing readable to print")
    await probe_broker(settings.kafka, bootstrap)
    consumer = make_consumer(settings, bootstrap, topic, group_id=None, enable_auto_commit=False)
    await consumer.start()
    n = 0
    last = time.monotonic()
    try:
        while args.max is None or n < args.max:
            if args.timeout is not None and time.monotonic() - last > args.timeout:
                break
            batch = await consumer.getmany(timeout_ms=200)
            for _tp, msgs in sorted(batch.items(), key=lambda kv: kv[0].partition):
                for m in msgs:
                    if args.session is not None and (m.key or b"").decode("utf-8", "replace") != args.session:
                        continue
                    value = m.value.decode("utf-8", "replace") if m.value is not None else "null"
                    print(value, flush=True)
                    n += 1
                    last = time.monotonic()
                    if args.max is not None and n >= args.max:
                        break
                if args.max is not None and n >= args.max:
                    break
    except asyncio.CancelledError:  # pragma: no cover
        pass
    finally:
        await consumer.stop()
    print(f"{n} record{'s' if n != 1 else ''} from {topic}", file=sys.stderr)
    return 0
