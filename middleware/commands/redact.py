"""`plainsight redact IN.jsonl -o OUT.jsonl`: batch de-identification without Kafka.

Reads either the labelled dialogue format (``{"id", "turns": [{"speaker", "text"}], ...}``,
see ../shared/data/README.md) or plain JSONL of input turns (the ``chat.turns`` contract), line
by line, and writes the same shape de-identified. Dialogue lines keep their shape with each
turn's text replaced and an ``entities`` list per turn; gold ``spans`` are dropped (they hold raw
values). Turn lines become output turns. Lines that can't be processed are reported by line
number and reason (never content) and, with ``--dlq FILE``, written there as dead letters; in a
dialogue, a bad turn alone is dead-lettered ("turns[1].text: expected a string") and the others
are processed. ``--mode`` defaults to ``output.logs_mode`` (redact writes the storage copy).
Outputs go through a temporary file renamed into place at the end (never half-written), and an
output path that is the input file is refused.
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
    from ._common import add_secret_arguments

    add_config_arguments(p, kafka=False)
    add_secret_arguments(p, keys=False)
    for action in p._actions:
        if "--mode" in action.option_strings:  # redact writes the storage copy: the logs topic's setting
            action.help = ("surrogate | tag | redact (default: output.logs_mode of the configuration, "
                           "'surrogate' unless set; output.deid_mode is the tutor topic's and does not apply)")
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


def _same_file(a: str, b: str) -> bool:
    """Do two paths name one file (after resolving links, '..', case on case-insensitive systems)?"""
    import os

    if a == "-" or b == "-":
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class _AtomicOut:
    """An output file written through a temporary file in the same directory and renamed over
    the target only once complete: an interrupted or failed run never leaves a half-written (or
    truncated) output behind. '-' writes to stdout directly."""

    def __init__(self, path: str) -> None:
        import os
        import sys
        import tempfile

        self.path = path
        if path == "-":
            self.fh, self.tmp = sys.stdout, None
            return
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):  # name the output the user gave, not our temporary file
            raise FileNotFoundError(2, "No such file or directory", path)
        fd, self.tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".part", dir=d)
        self.fh = os.fdopen(fd, "w", encoding="utf-8")

    def write(self, s: str) -> None:
        self.fh.write(s)

    def commit(self) -> None:
        import os

        if self.tmp is None:
            self.fh.flush()
            return
        self.fh.flush()
        os.fsync(self.fh.fileno())
        self.fh.close()
        if os.path.exists(self.path):  # keep the permissions of the file it replaces
            os.chmod(self.tmp, os.stat(self.path).st_mode & 0o7777)
        else:  # those of a file opened the usual way (mkstemp creates 0600)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(self.tmp, 0o666 & ~umask)
        os.replace(self.tmp, self.path)
        self.tmp = None

    def abort(self) -> None:
        import os

        if self.tmp is not None:
            self.fh.close()
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


async def redact(args: argparse.Namespace) -> int:
    import json
    import sys
    import time

    from plainsight.middleware.parsing import ParseFailure, parse_turn
    from plainsight.surrogate.pipeline import build_pipeline
    from plainsight.middleware.schemas import DeadLetter, InputTurn, sha256_hex

    from ._common import settings_from_args

    from plainsight.middleware.keys import SecretsError, resolve_secrets

    try:
        # unlinkable by default: without a configured secret, a fresh random one for this run
        settings, secrets_status = resolve_secrets(settings_from_args(args), allow_ephemeral=True, need_keys=False)
    except SecretsError as exc:
        print(f"plainsight redact: {exc}", file=sys.stderr)
        return 2
    if secrets_status.ephemeral:
        print("redact: no surrogate secret configured: a fresh random secret for this run (surrogates are "
              "consistent within the run and cannot be linked to other runs; --secret-file FILE makes runs "
              "reproducible)", file=sys.stderr)
    for flag, path in (("-o", args.output), ("--dlq", args.dlq)):
        if path and _same_file(args.input, path):
            print(f"plainsight redact: {flag} {path} is the input file; refusing to overwrite it "
                  "(write to another file, then move it)", file=sys.stderr)
            return 2
    if args.dlq and _same_file(args.output, args.dlq):
        print("plainsight redact: --dlq and -o name the same file", file=sys.stderr)
        return 2
    pipeline = build_pipeline(settings)
    n_lines = n_turns = n_errors = n_entities = 0
    t0 = time.perf_counter()
    try:
        src = _open(args.input, "rb")
    except OSError as exc:
        print(f"plainsight redact: cannot read {args.input}: {exc.strerror}", file=sys.stderr)
        return 2
    dst = _AtomicOut(args.output)
    dlq = _AtomicOut(args.dlq) if args.dlq else None
    ok = False

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
                # one bad turn is dead-lettered alone; the dialogue's valid turns are processed
                out, k, e, bad = await _redact_dialogue(pipeline, obj, lineno)
                for turn_raw, reason, detail in bad:
                    fail(lineno, turn_raw, reason, detail)
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
        ok = True
    finally:
        if src is not sys.stdin.buffer:
            src.close()
        for f in (dst, dlq):
            if f is not None:
                f.commit() if ok else f.abort()
    dt = time.perf_counter() - t0
    print(f"redacted {n_turns} turns from {n_lines} lines ({n_entities} entities, {n_errors} errors) "
          f"in {dt:.1f}s", file=sys.stderr)
    return 1 if (args.strict and n_errors) else 0


def _turn_problem(i: int, t: object) -> tuple[str, str] | None:
    """(reason, detail) when dialogue turn ``i`` can't be processed; the detail names the field,
    never its value ("turns[1].text: expected a string")."""
    if not isinstance(t, dict):
        return "schema", f"turns[{i}]: expected an object"
    if "text" not in t:
        return "schema", f"turns[{i}].text: missing"
    if not isinstance(t["text"], str):
        return "schema", f"turns[{i}].text: expected a string"
    for key in ("speaker", "role"):
        if t.get(key) is not None and not isinstance(t[key], str):
            return "schema", f"turns[{i}].{key}: expected a string"
    try:
        t["text"].encode("utf-8")
    except UnicodeEncodeError:
        return "invalid_utf8", f"turns[{i}].text: lone UTF-16 surrogate"
    return None


async def _redact_dialogue(pipeline, obj: dict, lineno: int) -> tuple[dict, int, int, list[tuple[bytes, str, str]]]:
    """The dialogue de-identified turn by turn; turns that can't be processed are left out of it
    and returned as ``(turn bytes, reason, detail)`` for the dead-letter file."""
    import json

    from plainsight.middleware.schemas import InputTurn

    sid = str(obj.get("id") or obj.get("session_id") or f"line-{lineno}")
    meta = obj.get("meta") if isinstance(obj.get("meta"), dict) else {}
    turns_out = []
    bad: list[tuple[bytes, str, str]] = []
    n_ent = 0
    for i, t in enumerate(obj["turns"]):
        problem = _turn_problem(i, t)
        if problem is not None:
            bad.append((json.dumps(t, ensure_ascii=True).encode(), *problem))
            continue
        text = t["text"]
        role = str(t.get("speaker") or t.get("role") or "student")
        if not text.strip():
            turns_out.append({"speaker": role, "text": text, "entities": []})
            continue
        try:
            turn = InputTurn(session_id=sid, turn_id=i, role=role, text=text, sent_at=0.0, metadata=meta)
        except ValueError:
            bad.append((json.dumps(t, ensure_ascii=True).encode(), "schema", f"turns[{i}]: invalid turn"))
            continue
        res = await pipeline.process(turn)
        n_ent += len(res.logs.entities)
        turns_out.append({"speaker": res.logs.role, "text": res.logs.text,
                          "entities": [e.model_dump() for e in res.logs.entities]})
    out = {k: v for k, v in obj.items() if k not in ("turns", "spans", "meta")}
    out["turns"] = turns_out
    return out, len(turns_out), n_ent, bad
