"""`plainsight send TEXT`: put one chat turn on the input topic of a running ``serve``.

For trying the worker by hand: ``plainsight serve`` in one terminal (it prints the embedded
broker's address), ``plainsight send --bootstrap-servers 127.0.0.1:PORT "hi I'm Maria"`` in a
second, ``plainsight tail --bootstrap-servers 127.0.0.1:PORT`` in a third to read the
de-identified turn. ``--file F`` sends every line of a JSONL file of ``chat.turns`` records
(see *Message contract* in the README); ``--reply`` sends a tutor reply to ``topics.replies_in``.
"""

from __future__ import annotations

import argparse

from ._common import NO_BROKER, add_broker_arguments, command_error



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="*", metavar="TEXT", help="the turn's text (words are joined by spaces)")
    p.add_argument("--file", metavar="TURNS.jsonl", help="send every line of this file (chat.turns records) instead")
    p.add_argument("--session", default="cli-session", help="session_id (default: cli-session)")
    p.add_argument("--role", default=None, help="role (default: student; tutor with --reply)")
    p.add_argument("--turn-id", default=None, help="turn_id (default: the current time in ms)")
    p.add_argument("--reply", action="store_true",
                   help="send a tutor reply (to topics.replies_in: plainsight restores the real values for the student)")
    p.add_argument("--reply-token", metavar="TOKEN", default=None,
                   help="with --reply: the reply_token of the tutor-topic record the reply answers (copied into the "
                        "record's reply_token field, for a worker that requires one)")
    add_broker_arguments(p)


def run(args: argparse.Namespace) -> int:
    from ._common import run_async

    return run_async(send(args))


def _err(msg: str) -> int:
    return command_error("send", msg)


async def send(args: argparse.Namespace) -> int:
    import json
    import sys
    import time

    from plainsight.consumers.kafka import make_producer, probe_broker
    from plainsight.middleware.parsing import ParseFailure, parse_turn

    from ._common import settings_from_args

    settings = settings_from_args(args)
    bootstrap = settings.kafka.bootstrap_servers
    if not bootstrap:
        return _err(NO_BROKER)
    if bool(args.text) == bool(args.file):
        return _err("give either TEXT or --file TURNS.jsonl")
    topic = settings.topics.replies_in if args.reply else settings.topics.input
    records: list[tuple[str, bytes]] = []
    if args.file:
        with open(args.file, "rb") as fh:  # a missing file: one line from the CLI (FileNotFoundError)
            for lineno, raw in enumerate(fh, 1):
                raw = raw.rstrip(b"\r\n")
                if not raw.strip():
                    continue
                parsed = parse_turn(raw, settings.worker.max_payload_bytes)
                if isinstance(parsed, ParseFailure):
                    return _err(f"{args.file}:{lineno}: {parsed.reason}: {parsed.detail} (nothing was sent)")
                records.append((parsed.session_id, raw))
    else:
        turn_id: int | str = args.turn_id if args.turn_id is not None else int(time.time() * 1000)
        if isinstance(turn_id, str) and turn_id.isdigit():
            turn_id = int(turn_id)
        obj = {"session_id": args.session, "turn_id": turn_id, "role": args.role or ("tutor" if args.reply else "student"),
               "text": " ".join(args.text), "sent_at": time.time()}
        if args.reply_token is not None:
            obj["reply_token"] = args.reply_token
        raw = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        parsed = parse_turn(raw, settings.worker.max_payload_bytes)
        if isinstance(parsed, ParseFailure):
            return _err(f"{parsed.reason}: {parsed.detail}")
        records.append((args.session, raw))
    await probe_broker(settings.kafka, bootstrap)
    producer = make_producer(settings, bootstrap)
    await producer.start()
    try:
        for key, value in records:
            await producer.send_and_wait(topic, key=key.encode("utf-8"), value=value)
    finally:
        await producer.stop()
    print(f"sent {len(records)} turn{'s' if len(records) != 1 else ''} to {topic} on {bootstrap}", file=sys.stderr)
    return 0
