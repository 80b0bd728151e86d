"""`plainsight demo`: bundled sample chats → Kafka (embedded broker) → worker → de-identified turns.

Needs no network and no API key. Prints each turn raw → de-identified with its end-to-end
latency (from the turn's ``sent_at`` to the de-identified turn read back from the output topic),
then a summary. The sample chats were written for the project; every name in them is fake.
"""

from __future__ import annotations

import argparse

from ._common import add_config_arguments


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ._common import add_secret_arguments

    add_config_arguments(p)
    add_secret_arguments(p, keys=True)
    p.set_defaults(log_level="WARNING")
    p.add_argument("--file", metavar="JSONL", help="chats to stream (default: the bundled sample)")
    p.add_argument("--rate", type=float, default=25.0, help="turns per second to send (default 25)")
    p.add_argument("--repeat", type=int, default=1, help="send the sample N times (new session ids each time)")
    p.add_argument("--quiet", action="store_true", help="print only the summary")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--timeout", type=float, default=120.0, help="give up waiting for outputs after this many seconds")
    for hook in _ARG_HOOKS:
        hook(p)


_ARG_HOOKS: list = []


def load_chats(path: str | None) -> list[dict]:
    """Chats as ``[{"session_id", "turns": [{"role", "text"}]}]`` from either input format that
    ``redact`` reads: dialogue lines (``{"id" or "session_id", "turns": [{"speaker" or "role",
    "text"}]}``) or input-turn lines (the ``chat.turns`` contract: ``{"session_id", "role",
    "text", ...}``, grouped by session in file order). Lines that are neither are skipped with a
    message naming the line and the field (never its content)."""
    import json
    import sys
    from importlib import resources

    from plainsight.middleware.config import UsageError

    if path:
        with open(path, "rb") as fh:
            data = fh.read()
        nul = data.find(b"\x00")
        if nul >= 0:
            raise UsageError(f"{path} is not a text file (NUL byte at byte {nul}); --file reads JSON Lines in UTF-8")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{path} is not UTF-8 text (invalid byte at {exc.start}: binary or another encoding); "
                             "--file reads JSON Lines in UTF-8") from None
        if not text.strip():
            raise UsageError(f"{path} is empty; --file reads dialogues or chat.turns records, one per line")
    else:
        text = resources.files("plainsight.middleware.samples").joinpath("demo_chats.jsonl").read_text(encoding="utf-8")
    chats: list[dict] = []
    by_session: dict[str, dict] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            print(f"demo: line {lineno}: not JSON, skipped", file=sys.stderr)
            continue
        if not isinstance(obj, dict):
            print(f"demo: line {lineno}: not a JSON object, skipped", file=sys.stderr)
            continue
        if isinstance(obj.get("turns"), list):  # dialogue format
            sid = str(obj.get("session_id") or obj.get("id") or f"chat-{len(chats)}")
            turns = []
            for i, t in enumerate(obj["turns"]):
                if not isinstance(t, dict) or not isinstance(t.get("text"), str) or not t["text"].strip():
                    print(f"demo: line {lineno}: turns[{i}].text: expected a non-empty string, turn skipped",
                          file=sys.stderr)
                    continue
                turns.append({"role": str(t.get("role") or t.get("speaker") or "student"), "text": t["text"]})
            chats.append({"session_id": sid, "turns": turns})
        elif "text" in obj:  # one input turn
            if not isinstance(obj.get("text"), str) or not obj["text"].strip():
                print(f"demo: line {lineno}: text: expected a non-empty string, skipped", file=sys.stderr)
                continue
            sid = str(obj.get("session_id") or f"line-{lineno}")
            chat = by_session.get(sid)
            if chat is None:
                chat = by_session[sid] = {"session_id": sid, "turns": []}
                chats.append(chat)
            chat["turns"].append({"role": str(obj.get("role") or "student"), "text": obj["text"]})
        else:
            print(f"demo: line {lineno}: neither a dialogue ('turns') nor a turn ('text'), skipped", file=sys.stderr)
    if path and not any(c["turns"] for c in chats):
        raise UsageError(f"no chat turn could be read from {path} (see the messages above); --file reads dialogues "
                         "{\"id\", \"turns\": [{\"speaker\", \"text\"}]} or chat.turns records, one per line")
    return chats


def run(args: argparse.Namespace) -> int:
    from ._common import run_async

    return run_async(_demo(args))


async def _demo(args: argparse.Namespace) -> int:
    import asyncio
    import json
    import sys
    import time

    from plainsight.consumers.broker import EmbeddedBroker
    from plainsight.consumers.kafka import make_consumer, make_producer
    from plainsight.consumers.worker import Worker
    from plainsight.middleware.keys import SecretsError, resolve_secrets
    from plainsight.middleware.schemas import InputTurn, OutputTurn

    from ._common import embedded_tuning, percentile, settings_from_args

    settings = settings_from_args(args)
    chats = load_chats(args.file)  # a file that cannot be read: one line, before anything starts
    broker = None
    if not settings.kafka.bootstrap_servers:
        settings = settings_from_args(args, **embedded_tuning())
    try:
        # a throwaway run: a secret and a state key not configured are random for this process
        settings, secrets_status = resolve_secrets(settings, allow_ephemeral=True)
    except SecretsError as exc:
        print(f"plainsight demo: {exc}", file=sys.stderr)
        return 2
    if secrets_status.ephemeral:
        print("demo: random surrogate secret and state key for this run (surrogates differ from run to run; "
              "nothing sealed with them outlives it)", file=sys.stderr)
    if not settings.kafka.bootstrap_servers:
        broker = EmbeddedBroker.from_settings(settings.embedded)
        bootstrap = await broker.start()
        if not args.quiet:
            print(f"embedded Kafka-protocol broker (Tansu) on {bootstrap}", file=sys.stderr)
    else:
        from plainsight.consumers.kafka import probe_broker

        bootstrap = settings.kafka.bootstrap_servers
        await probe_broker(settings.kafka, bootstrap)  # unreachable: one line, exit 2, within connect_timeout_s

    turns: list[InputTurn] = []
    run_tag = f"{int(time.time())}"
    for rep in range(args.repeat):
        for chat in chats:
            sid = chat["session_id"] if args.repeat == 1 else f"{chat['session_id']}-{rep}"
            for i, t in enumerate(chat["turns"]):
                turns.append(InputTurn(session_id=sid, turn_id=i, role=t["role"], text=t["text"], sent_at=0.0))
    # interleave sessions round-robin, as concurrent chats would arrive
    by_session: dict[str, list[InputTurn]] = {}
    for t in turns:
        by_session.setdefault(t.session_id, []).append(t)
    order: list[InputTurn] = []
    while any(by_session.values()):
        for sid in list(by_session):
            if by_session[sid]:
                order.append(by_session[sid].pop(0))

    worker = Worker(settings, bootstrap)
    producer = make_producer(settings, bootstrap)
    reader = make_consumer(settings, bootstrap, settings.topics.output, group_id=f"plainsight-demo-reader-{run_tag}")
    results: dict[tuple[str, str], tuple[OutputTurn, float]] = {}
    raw = {(t.session_id, str(t.turn_id)): t for t in order}
    rc = 0
    try:
        await worker.start()
        worker_task = asyncio.create_task(worker.run())
        await worker.wait_ready(60)
        await producer.start()
        await reader.start()
        done = asyncio.Event()
        t_start = time.time()

        async def read() -> None:
            while len(results) < len(order):
                batch = await reader.getmany(timeout_ms=200)
                now = time.time()
                for _tp, msgs in batch.items():
                    for m in msgs:
                        out = OutputTurn.model_validate_json(m.value)
                        key = (out.session_id, str(out.turn_id))
                        if key in raw and key not in results:
                            lat = (now - out.sent_at) * 1e3
                            results[key] = (out, lat)
                            if not args.quiet and not args.json:
                                src = raw[key]
                                print(f"[{out.session_id}] {src.role}: {src.text}")
                                print(f"    → {out.text}    ({lat:.1f} ms)")
            done.set()

        reader_task = asyncio.create_task(read())
        interval = 1.0 / args.rate if args.rate > 0 else 0.0
        for t in order:
            t = t.model_copy(update={"sent_at": time.time()})
            await producer.send_and_wait(settings.topics.input, key=t.session_id.encode(), value=t.model_dump_json().encode())
            if interval:
                await asyncio.sleep(interval)
        try:
            await asyncio.wait_for(done.wait(), args.timeout)
        except asyncio.TimeoutError:
            rc = 1
        reader_task.cancel()
        elapsed = time.time() - t_start
        replies = await _reply_round_trip(args, settings, bootstrap, producer, order, results)
        worker.request_stop()
        await worker_task
    finally:
        for closer in (reader.stop, producer.stop, worker.stop):
            try:
                await asyncio.wait_for(closer(), 10)
            except Exception:
                pass
        if broker is not None:
            await broker.stop()

    lats = [lat for _o, lat in results.values()]
    labels: dict[str, int] = {}
    for out, _ in results.values():
        for e in out.entities:
            labels[e.label] = labels.get(e.label, 0) + 1
    summary = {
        "replies_sent": replies[0],
        "replies_restored": replies[1],
        "turns_sent": len(order),
        "turns_received": len(results),
        "sessions": len({t.session_id for t in order}),
        "entities": dict(sorted(labels.items())),
        "e2e_p50_ms": round(percentile(lats, 50), 2) if lats else None,
        "e2e_p95_ms": round(percentile(lats, 95), 2) if lats else None,
        "e2e_p99_ms": round(percentile(lats, 99), 2) if lats else None,
        "e2e_max_ms": round(max(lats), 2) if lats else None,
        "elapsed_s": round(elapsed, 2),
        "dead_letters": worker.stats.dead_letters,
        "broker": "embedded" if broker is not None else bootstrap,
    }
    if args.json:
        print(json.dumps(summary))
    else:
        print()
        print(f"turns: {summary['turns_received']}/{summary['turns_sent']} in {summary['sessions']} sessions, "
              f"{elapsed:.1f}s; entities replaced: {summary['entities']}")
        print(f"tutor replies written with surrogates, restored for the student: {replies[1]}/{replies[0]}")
        print(f"end-to-end latency: p50 {summary['e2e_p50_ms']} ms, p95 {summary['e2e_p95_ms']} ms, "
              f"p99 {summary['e2e_p99_ms']} ms, max {summary['e2e_max_ms']} ms")
    if len(results) < len(order):
        print(f"error: {len(order) - len(results)} turns got no output within {args.timeout}s", file=sys.stderr)
        rc = 1
    return rc


async def _reply_round_trip(args, settings, bootstrap, producer, order, results, n: int = 6) -> tuple[int, int]:
    """The tutor LLM only ever saw surrogates, so its replies use them. Send a few de-identified
    tutor turns back as tutor replies and check the student gets the real text again."""
    import asyncio
    import time

    from plainsight.consumers.kafka import make_consumer
    from plainsight.middleware.schemas import InputTurn, OutputTurn

    picks = [t for t in order if t.role == "tutor" and (t.session_id, str(t.turn_id)) in results
             and results[(t.session_id, str(t.turn_id))][0].entities][:n]
    if not picks:
        return 0, 0
    reader = make_consumer(settings, bootstrap, settings.topics.replies_out, group_id=f"plainsight-demo-replies-{time.time()}")
    await reader.start()
    restored = 0
    try:
        for t in picks:
            deid = results[(t.session_id, str(t.turn_id))][0]
            # the tutor copies the reply_token of the output it answers (reverse.require_reply_token)
            reply = InputTurn(session_id=t.session_id, turn_id=f"reply-{t.turn_id}", role="tutor", text=deid.text,
                              sent_at=time.time(), reply_token=deid.reply_token)
            await producer.send_and_wait(settings.topics.replies_in, key=t.session_id.encode(),
                                         value=reply.model_dump_json().encode())
        got: dict[tuple[str, str], OutputTurn] = {}
        deadline = time.monotonic() + 30
        while len(got) < len(picks) and time.monotonic() < deadline:
            batch = await reader.getmany(timeout_ms=200)
            for _tp, msgs in batch.items():
                for m in msgs:
                    o = OutputTurn.model_validate_json(m.value)
                    got[(o.session_id, str(o.turn_id))] = o
        if not args.quiet and not args.json:
            print()
            print("tutor replies (the tutor LLM only saw surrogates) → what the student sees:")
        for t in picks:
            o = got.get((t.session_id, f"reply-{t.turn_id}"))
            if o is None:
                continue
            ok = o.text == t.text
            restored += ok
            if not args.quiet and not args.json:
                print(f"[{t.session_id}] tutor: {results[(t.session_id, str(t.turn_id))][0].text}")
                print(f"    → {o.text}{'' if ok else '   (differs from the original)'}")
    finally:
        await asyncio.wait_for(reader.stop(), 10)
    return len(picks), restored
