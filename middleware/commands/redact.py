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
    p.add_argument("--unknown-fields", choices=["drop", "deidentify"], default="drop",
                   help="dialogue fields other than id, source and turns: drop them with a warning (default), or "
                        "de-identify their strings as turns of the dialogue's session")
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


#: a dialogue line may hold many turns, each within ``worker.max_payload_bytes``; the line as a
#: whole is refused past this many times that limit (6.4 MB by default), before it is parsed
DIALOGUE_LINE_FACTOR = 100
#: per-line problems printed on stderr before the rest are only counted (all go to --dlq)
MAX_LINE_MESSAGES = 20
#: top-level dialogue fields that are written out (``id`` and ``source`` as digests when they
#: hold a private value); ``turns`` is rebuilt, ``spans`` (gold values) and ``meta`` are dropped
KNOWN_DIALOGUE_FIELDS = ("id", "session_id", "source")
_DROPPED_SILENTLY = frozenset({"turns", "spans", "meta"})


def _err(msg: str) -> int:
    import sys

    print(f"plainsight redact: error: {msg}", file=sys.stderr)
    return 2


def _sniff_text(src, name: str) -> str | None:
    """Why the input is not UTF-8 text (binary, another encoding), from its first 64 KB; None if it is."""
    import codecs

    try:
        head = src.peek(65536)[:65536]
    except (AttributeError, OSError):
        return None
    nul = head.find(b"\x00")
    if not head.strip() and len(head) < 65536:
        return f"{name} is empty (no JSON lines); redact reads one dialogue or one turn per line (see 'De-identify your own file' in the README)"
    if nul >= 0:
        return f"{name} is not a text file (NUL byte at byte {nul}); redact reads JSON Lines in UTF-8"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as exc:
        return (f"{name} is not UTF-8 text (invalid byte at {exc.start}: binary or another encoding); "
                "redact reads JSON Lines in UTF-8")
    return None


def _lines(src, cap: int):
    """``(lineno, line bytes or None when longer than cap, length)``; an over-long line is read
    through in chunks and never held whole."""
    lineno = 0
    while True:
        chunk = src.readline(cap + 1)
        if not chunk:
            return
        lineno += 1
        if len(chunk) <= cap or chunk.endswith(b"\n"):
            yield lineno, chunk, len(chunk)
            continue
        n = len(chunk)
        while not chunk.endswith(b"\n"):
            chunk = src.readline(1 << 20)
            if not chunk:
                break
            n += len(chunk)
        yield lineno, None, n


class IdDigester:
    """#28: a record's ``id`` / ``session_id`` / ``source`` that holds a private value (an email,
    a name the detector finds) is written as a keyed digest of the whole value (HMAC-SHA256 under
    the run's surrogate secret: stable across runs with ``--secret-file``, unlinkable without)."""

    def __init__(self, pipeline, secret: bytes) -> None:
        self.pipeline = pipeline
        self.secret = secret
        self.n_digested = 0

    def holds_pii(self, value: str) -> bool:
        from plainsight.middleware.detection.base import TurnContext

        det = self.pipeline.detector
        # ids are written without spaces: "dlg-maria.lopez@gmail.com", "maria_lopez_2024"
        probes = {value, value.replace("_", " ").replace("-", " ")}
        try:
            for text in probes:
                ctx = TurnContext(role="student", session_id="\x00redact-id", turn_index=0, metadata={})
                spans = det.detect(text, ctx, det.new_memory())
                if any(s.label in self.pipeline.labels for s in spans):
                    return True
        except Exception:  # noqa: BLE001  (when unsure, digest)
            return True
        return False

    def digest(self, value: str) -> str:
        import hashlib
        import hmac

        self.n_digested += 1
        return "id-" + hmac.new(self.secret, b"plainsight-redact-id\x00" + value.encode("utf-8", "surrogatepass"),
                                hashlib.sha256).hexdigest()[:24]

    def clean(self, value):
        if not isinstance(value, str):
            return value if isinstance(value, (int, float, bool)) or value is None else self.digest(str(value))
        return self.digest(value) if self.holds_pii(value) else value


async def redact(args: argparse.Namespace) -> int:
    import json
    import sys
    import time

    from plainsight.middleware.parsing import ParseFailure, parse_turn
    from plainsight.surrogate.pipeline import build_pipeline
    from plainsight.middleware.schemas import DeadLetter, sha256_hex

    from ._common import settings_from_args

    from plainsight.middleware.keys import SecretsError, resolve_secrets

    try:
        # unlinkable by default: without a configured secret, a fresh random one for this run
        settings, secrets_status = resolve_secrets(settings_from_args(args), allow_ephemeral=True, need_keys=False)
    except SecretsError as exc:
        return _err(str(exc))
    for flag, path in (("-o", args.output), ("--dlq", args.dlq)):
        if path and _same_file(args.input, path):
            return _err(f"{flag} {path} is the input file; refusing to overwrite it (write to another file, then move it)")
    if args.dlq and _same_file(args.output, args.dlq):
        return _err("--dlq and -o name the same file")
    try:
        src = _open(args.input, "rb")
    except OSError as exc:
        return _err(f"cannot read {args.input}: {exc.strerror}")
    name = "stdin" if args.input == "-" else args.input
    why = _sniff_text(src, name)
    if why is not None:
        if src is not sys.stdin.buffer:
            src.close()
        return _err(why)
    pipeline = build_pipeline(settings)
    secret = settings.surrogate.secret.get_secret_value().encode() if settings.surrogate.secret else b""
    ids = IdDigester(pipeline, secret)
    unknown = getattr(args, "unknown_fields", "drop") or "drop"
    warned_fields: set[str] = set()
    max_bytes = settings.worker.max_payload_bytes
    counts = {"lines": 0, "turns": 0, "errors": 0, "entities": 0, "dead_lettered": 0, "degraded": 0}
    llm_warned = False
    held: list[str] = []  # per-line problems not yet printed (see fail)
    t0 = time.perf_counter()
    dst = _AtomicOut(args.output)
    dlq = _AtomicOut(args.dlq) if args.dlq else None
    ok = False

    def fail(lineno: int, raw: bytes, reason: str, detail: str, n_bytes: int | None = None) -> None:
        counts["errors"] += 1
        msg = None
        if counts["errors"] <= MAX_LINE_MESSAGES:
            msg = f"line {lineno}: {reason}: {detail}"
        elif counts["errors"] == MAX_LINE_MESSAGES + 1:
            msg = f"(further problems are only counted{'; all are in ' + args.dlq if args.dlq else ''})"
        if msg is not None:
            # held until a turn succeeds: a file of which nothing can be read ends in one line
            if counts["turns"] == 0:
                held.append(msg)
            else:
                for m in held:
                    print(m, file=sys.stderr)
                held.clear()
                print(msg, file=sys.stderr)
        if dlq is not None:
            dl = DeadLetter(reason=reason, detail=detail, topic=args.input, partition=0, offset=lineno,
                            payload_sha256=sha256_hex(raw), payload_bytes=len(raw) if n_bytes is None else n_bytes)
            dlq.write(dl.model_dump_json() + "\n")

    async def one(turn):
        """(logs output, degraded) for one turn, or an exception's type name: a failing turn is
        dead-lettered and the batch goes on (never the exception's message: it may quote the text)."""
        nonlocal llm_warned
        try:
            res = await pipeline.process(turn)
            logs = await res.final_logs()
        except Exception as exc:  # noqa: BLE001
            return None, type(exc).__name__
        degraded = bool(res.degraded or logs.degraded)
        if degraded:
            counts["degraded"] += 1
            if not llm_warned:
                llm_warned = True
                if res.llm is not None and res.llm.degraded:
                    why = f" ({res.llm.reason})" if getattr(res.llm, "reason", None) else ""
                    print(f"plainsight redact: warning: the LLM stage failed{why}; such turns are masked fail-closed "
                          "(every doubtful span) and counted as degraded in the summary", file=sys.stderr)
                else:
                    print("plainsight redact: warning: a stage failed on a turn; such turns are masked fail-closed "
                          "(every span written as [LABEL]) and counted as degraded in the summary", file=sys.stderr)
        counts["turns"] += 1
        counts["entities"] += len(logs.entities)
        return logs, degraded

    try:
        for lineno, raw, n_bytes in _lines(src, max_bytes * DIALOGUE_LINE_FACTOR):
            if raw is None:
                counts["lines"] += 1
                fail(lineno, b"", "too_large", f"line is {n_bytes} bytes, limit {max_bytes * DIALOGUE_LINE_FACTOR} "
                     f"({DIALOGUE_LINE_FACTOR} x worker.max_payload_bytes)", n_bytes)
                counts["dead_lettered"] += 1
                continue
            raw = raw.rstrip(b"\r\n")
            if not raw.strip():
                continue
            counts["lines"] += 1
            obj = None
            try:
                obj = json.loads(raw)
            except (ValueError, RecursionError):
                obj = None
            if isinstance(obj, dict) and isinstance(obj.get("turns"), list):
                # one bad turn is dead-lettered alone; the dialogue's valid turns are processed
                out, bad = await _redact_dialogue(pipeline, obj, lineno, one, max_bytes)
                for turn_raw, reason, detail in bad:
                    fail(lineno, turn_raw, reason, detail)
                    counts["dead_lettered"] += 1
                for k in list(out):
                    if k == "turns":
                        continue
                    if k in KNOWN_DIALOGUE_FIELDS:
                        out[k] = ids.clean(out[k])
                    elif unknown == "deidentify":
                        out[k] = await _deidentify_value(out[k], str(obj.get("id") or f"line-{lineno}"), k, one)
                    else:
                        del out[k]
                        if k not in warned_fields:
                            warned_fields.add(k)
                            print(f"plainsight redact: warning: dropped unknown field {k!r} (it may hold private "
                                  "values; --unknown-fields deidentify de-identifies such fields instead)",
                                  file=sys.stderr)
                dst.write(json.dumps(out, ensure_ascii=False) + "\n")
                continue
            parsed = parse_turn(raw, max_bytes)
            if isinstance(parsed, ParseFailure):
                fail(lineno, raw, parsed.reason, parsed.detail)
                counts["dead_lettered"] += 1
                continue
            logs, degraded = await one(parsed)
            if logs is None:
                fail(lineno, raw, "processing_error", f"the pipeline failed on this turn ({degraded})")
                counts["dead_lettered"] += 1
                continue
            if ids.holds_pii(logs.session_id):
                logs = logs.model_copy(update={"session_id": ids.digest(logs.session_id)})
            dst.write(logs.model_dump_json() + "\n")
        ok = True
    finally:
        if src is not sys.stdin.buffer:
            src.close()
        if counts["lines"] == 0 or (counts["turns"] == 0 and counts["errors"]):
            ok = False  # nothing to write: the previous output, if any, stays
        for f in (dst, dlq):
            if f is not None:
                f.commit() if ok else f.abort()
    dt = time.perf_counter() - t0
    if counts["lines"] == 0:
        return _err(f"{name} is empty (no JSON lines); redact reads one dialogue or one turn per line "
                    "(see 'De-identify your own file' in the README)")
    if counts["turns"] == 0 and counts["errors"]:
        return _err(f"no line of {name} could be processed ({counts['errors']} problems; first: {held[0]}); "
                    "redact reads JSON Lines: dialogues {\"id\", \"turns\": [{\"speaker\", \"text\"}]} or "
                    "chat.turns records")
    for msg in held:
        print(msg, file=sys.stderr)
    if secrets_status.ephemeral:
        print("redact: no surrogate secret configured: a fresh random secret for this run (surrogates are "
              "consistent within the run and cannot be linked to other runs; --secret-file FILE makes runs "
              "reproducible)", file=sys.stderr)
    print(f"redacted {counts['turns']} turns from {counts['lines']} lines ({counts['entities']} entities, "
          f"{counts['errors']} errors, {counts['dead_lettered']} dead-lettered, {counts['degraded']} degraded"
          f"{', ' + str(ids.n_digested) + ' ids digested' if ids.n_digested else ''}) in {dt:.1f}s", file=sys.stderr)
    return 1 if (args.strict and counts["errors"]) else 0


async def _deidentify_value(value, sid: str, field: str, one):
    """``--unknown-fields deidentify``: strings in an unknown field (nested too) go through the
    pipeline as turns of the dialogue's session; numbers and booleans are kept."""
    from plainsight.middleware.schemas import InputTurn

    if isinstance(value, str):
        if not value.strip():
            return value
        logs, _ = await one(InputTurn(session_id=sid, turn_id=f"field:{field}", role="student", text=value,
                                      sent_at=0.0))
        return logs.text if logs is not None else "[REDACTED]"
    if isinstance(value, list):
        return [await _deidentify_value(v, sid, field, one) for v in value]
    if isinstance(value, dict):
        return {k: await _deidentify_value(v, sid, field, one) for k, v in value.items()}
    return value


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


async def _redact_dialogue(pipeline, obj: dict, lineno: int, one, max_bytes: int) -> tuple[dict, list[tuple[bytes, str, str]]]:
    """The dialogue de-identified turn by turn; turns that can't be processed (a bad field, over
    ``worker.max_payload_bytes``, a pipeline failure) are left out of it and returned as
    ``(turn bytes, reason, detail)`` for the dead-letter file. Each turn carries ``degraded``."""
    import hashlib
    import json

    from plainsight.middleware.schemas import InputTurn

    sid = str(obj.get("id") or obj.get("session_id") or f"line-{lineno}")
    if len(sid) > 256:  # the session key only (the id field itself is written by the caller)
        sid = "sha256-" + hashlib.sha256(sid.encode("utf-8", "surrogatepass")).hexdigest()
    meta = obj.get("meta") if isinstance(obj.get("meta"), dict) else {}
    turns_out = []
    bad: list[tuple[bytes, str, str]] = []

    def dump(t) -> bytes:
        return json.dumps(t, ensure_ascii=True).encode()

    for i, t in enumerate(obj["turns"]):
        problem = _turn_problem(i, t)
        if problem is None and len(t["text"].encode("utf-8")) > max_bytes:
            problem = "too_large", f"turns[{i}].text: {len(t['text'].encode('utf-8'))} bytes, limit {max_bytes} (worker.max_payload_bytes)"
        if problem is not None:
            bad.append((dump(t), *problem))
            continue
        text = t["text"]
        role = str(t.get("speaker") or t.get("role") or "student")[:64]
        if not text.strip():
            state = pipeline.sessions.get(sid)  # a speaker that isn't a known role may be a name
            turns_out.append({"speaker": pipeline._role_out(role, state, pipeline.settings.output.logs_mode),
                              "text": text, "entities": [], "degraded": False})
            continue
        try:
            turn = InputTurn(session_id=sid, turn_id=i, role=role, text=text, sent_at=0.0, metadata=meta)
        except ValueError:
            bad.append((dump(t), "schema", f"turns[{i}]: invalid turn"))
            continue
        logs, degraded = await one(turn)
        if logs is None:
            bad.append((dump(t), "processing_error", f"turns[{i}]: the pipeline failed on this turn ({degraded})"))
            continue
        turns_out.append({"speaker": logs.role, "text": logs.text,
                          "entities": [e.model_dump() for e in logs.entities], "degraded": degraded})
    out = {k: v for k, v in obj.items() if k not in _DROPPED_SILENTLY}
    out["turns"] = turns_out
    return out, bad
