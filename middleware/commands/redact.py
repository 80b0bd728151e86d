"""`plainsight redact IN.jsonl -o OUT.jsonl`: batch de-identification without Kafka.

Reads either the labelled dialogue format (``{"id", "turns": [{"speaker", "text"}], ...}``,
see ../shared/data/README.md) or plain JSONL of input turns (the ``chat.turns`` contract), line
by line, and writes the same shape de-identified. Dialogue lines keep their shape with each
turn's text replaced and an ``entities`` list per turn; gold ``spans`` are dropped (they hold raw
values). Turn lines become output turns. Lines that can't be processed are reported by line
number and reason (never content) and, with ``--dlq FILE``, written there as dead letters.
"""

from __future__ import annotations

import argparse

from ._common import add_config_arguments

_ARG_HOOKS: list = []


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN.jsonl", help="input file ('-' for stdin)")
    p.add_argument("-o", "--output", metavar="OUT.jsonl", required=True, help="output file ('-' for stdout)")
    p.add_argument("--dlq", metavar="FILE", help="write dead letters (reason + hash, no content) here")
    p.add_argument("--strict", action="store_true", help="exit 1 if any line could not be processed")
    add_config_arguments(p, kafka=False)
    for hook in _ARG_HOOKS:
        hook(p)


def run(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(redact(args))


def _open(path: str, mode: str):
    import sys

    if path == "-":
        return sys.stdin.buffer if "r" in mode else sys.stdout
    return open(path, mode) if "b" in mode else open(path, mode, encoding="utf-8")


async def redact(args: argparse.Namespace) -> int:
    import json
    import sys
    import time

    from middleware.parsing import ParseFailure, parse_turn
    from surrogate.pipeline import build_pipeline
    from middleware.schemas import DeadLetter, InputTurn, sha256_hex

    from ._common import settings_from_args

    settings = settings_from_args(args)
    pipeline = build_pipeline(settings)
    n_lines = n_turns = n_errors = n_entities = 0
    t0 = time.perf_counter()
    src = _open(args.input, "rb")
    dst = _open(args.output, "w")
    dlq = _open(args.dlq, "w") if args.dlq else None

    def fail(lineno: int, raw: bytes, reason: str, detail: str) -> None:
        nonlocal n_errors
        n_errors += 1
        print(f"line {lineno}: {reason}: {detail}", file=sys.stderr)
        if dlq is not None:
            dl = DeadLetter(reason=reason, detail=detail, topic=args.input, partition=0, offset=lineno,
                            payload_sha256=sha256_hex(raw), payload_bytes=len(raw))
            dlq.write(dl.model_dump_json() + "\n")

    try:
        for lineno, raw in enumerate(src, 1):
            raw = raw.rstrip(b"\r\n")
            if not raw.strip():
                continue
            n_lines += 1
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict) and isinstance(obj.get("turns"), list):
                try:
                    out, k, e = await _redact_dialogue(pipeline, obj, lineno)
                except (KeyError, TypeError, ValueError) as exc:
                    fail(lineno, raw, "schema", f"dialogue: {type(exc).__name__}")
                    continue
                n_turns += k
                n_entities += e
                dst.write(json.dumps(out, ensure_ascii=False) + "\n")
                continue
            parsed = parse_turn(raw, settings.worker.max_payload_bytes)
            if isinstance(parsed, ParseFailure):
                fail(lineno, raw, parsed.reason, parsed.detail)
                continue
            res = await pipeline.process(parsed)
            n_turns += 1
            n_entities += len(res.logs.entities)
            dst.write(res.logs.model_dump_json() + "\n")
    finally:
        if dst is not sys.stdout:
            dst.close()
        if dlq is not None:
            dlq.close()
    dt = time.perf_counter() - t0
    print(f"redacted {n_turns} turns from {n_lines} lines ({n_entities} entities, {n_errors} errors) "
          f"in {dt:.1f}s", file=sys.stderr)
    return 1 if (args.strict and n_errors) else 0


async def _redact_dialogue(pipeline, obj: dict, lineno: int) -> tuple[dict, int, int]:
    from middleware.schemas import InputTurn

    sid = str(obj.get("id") or f"line-{lineno}")
    meta = obj.get("meta") if isinstance(obj.get("meta"), dict) else {}
    turns_out = []
    n_ent = 0
    for i, t in enumerate(obj["turns"]):
        text = t["text"]
        if not isinstance(text, str):
            raise TypeError("turn text")
        role = str(t.get("speaker") or t.get("role") or "student")
        if not text.strip():
            turns_out.append({"speaker": role, "text": text, "entities": []})
            continue
        turn = InputTurn(session_id=sid, turn_id=i, role=role, text=text, sent_at=0.0, metadata=meta)
        res = await pipeline.process(turn)
        n_ent += len(res.logs.entities)
        turns_out.append({"speaker": res.logs.role, "text": res.logs.text,
                          "entities": [e.model_dump() for e in res.logs.entities]})
    out = {k: v for k, v in obj.items() if k not in ("turns", "spans", "meta")}
    out["turns"] = turns_out
    return out, len(turns_out), n_ent
