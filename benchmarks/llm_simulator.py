"""A local OpenAI-compatible chat-completions server that simulates the model (stdlib only).

Used by the tests (``tests/fake_openai.py``), by ``benchmarks.llm`` and usable for
offline demos: ``FakeOpenAI(latency_s=0.4).start().base_url`` → point ``llm.base_url`` at it.

Real HTTP/1.1 with keep-alive on 127.0.0.1 (free port), served by its own event loop in a
background thread. It reads the current turn between ``<current_turn>`` tags of the last user
message and answers like the model would:

- marking mode: the turn echoed with markers around the entities (from ``gold``, a mapping
  entity text → label, or a simple heuristic: emails, URLs, phones, capitalised words that
  are not sentence-initial, words after "my name is"/"i'm"), then ``alter(answer)`` if set;
- JSON mode (``response_format`` present): ``{"entities": [{"text", "label"}]}``;
- verifier (a "Candidates:" list): ``n: T`` when the candidate is in ``gold`` (or looks like
  a name to the heuristic), else ``n: F``;
- usage: prompt ≈ chars/4, completion ≈ chars/4.

Behaviour is scriptable: ``latency_s`` / ``latency_fn(turn_text)``, a FIFO of scripted
:class:`Reply` objects (status codes, Retry-After, raw bodies, dropped connections, custom
content), or ``on_request(body) -> Reply | None`` for full control. ``requests`` records the
parsed request bodies; ``max_in_flight`` the peak concurrency.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

DEFAULT_MARKERS = {
    "NAME": ("@@@", "###"),
    "URL": ("&&&", "$$$"),
    "EMAIL": ("QQQ", "^^^"),
    "PHONE": ("%%%", "~~~"),
    "USERNAME": ("{{{", "}}}"),
    "ID_NUM": ("[[[", "]]]"),
    "ADDRESS": ("|||", "¦¦¦"),
}

_TURN = re.compile(r"<current_turn>\n?(.*?)\n?</current_turn>", re.DOTALL)
_CAND = re.compile(r'^(\d+)\. "(.*?)" \(([A-Z_]+)\)', re.MULTILINE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"']+[^\s<>\"'.,;:!?)]")
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4}(?!\w)")
_WORD = re.compile(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?")
_INTRO = re.compile(r"\b(?:my name is|i'm|i am|im|call me)\s+([a-z][a-z]+)\b", re.IGNORECASE)
_NOT_NAMES = frozenset(
    """I OK Okay Yes No Hi Hello Hey Thanks Thank Please Sorry Good Great Nice Well So And But Or The A An This That
    What Why How When Where Who Which Can Could Would Should Do Does Did Is Are Was Were Let Now Then Next First Also
    Right Sure Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June July
    August September October November December English Math Maths Science Newton Pythagoras Euler Riemann Gauss
    Fibonacci Einstein Shakespeare Chapter Question Answer Step Part Unit Lesson Problem Example Figure Page Mr Mrs Ms
    Dr Miss Google Zoom""".split()
)


@dataclass
class Reply:
    """One scripted answer. ``content`` may be a string or ``fn(turn_text, body) -> str``."""

    status: int = 200
    content: Any = None
    latency_s: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: raw response body (overrides everything else)
    body: bytes | None = None
    #: close the connection without answering
    drop: bool = False
    finish_reason: str = "stop"
    usage: dict[str, int] | None = None
    #: omit the usage block
    no_usage: bool = False


def closed_port_url() -> str:
    """A base_url on which nothing listens (connection refused): an outage."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"


class FakeOpenAI:
    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        gold: dict[str, str] | None = None,
        markers: dict[str, tuple[str, str]] | None = None,
        alter: Callable[[str], str] | None = None,
    ) -> None:
        self.latency_s = latency_s
        self.latency_fn: Callable[[str], float] | None = None
        self.gold: dict[str, str] = dict(gold or {})
        self.markers = dict(markers or DEFAULT_MARKERS)
        self.alter = alter
        self.script: deque[Reply] = deque()
        self.on_request: Callable[[dict], Reply | None] | None = None
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- lifecycle

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> "FakeOpenAI":
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self._server = loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=1024))
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="fake-openai", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return

        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            for w in list(self._writers):
                w.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), loop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop = None

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- scripting helpers

    def push(self, *replies: Reply) -> None:
        self.script.extend(replies)

    def storm(self, n: int, retry_after_s: float = 0.05, *, ms: bool = False) -> None:
        """The next ``n`` requests get 429 with Retry-After."""
        h = {"retry-after-ms": str(int(retry_after_s * 1000))} if ms else {"retry-after": f"{retry_after_s:g}"}
        self.push(*[Reply(status=429, headers=h) for _ in range(n)])

    def reset_counters(self) -> None:
        self.requests.clear()
        self.statuses.clear()
        self.max_in_flight = 0

    # ---------------------------------------------------------------- HTTP

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                line = await reader.readline()
                if not line:
                    return
                parts = line.decode("latin-1").split()
                if len(parts) < 2:
                    return
                method, path = parts[0], parts[1]
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                n = int(headers.get("content-length", "0") or 0)
                body = await reader.readexactly(n) if n else b""
                keep = await self._respond(method, path, body, writer)
                if not keep or headers.get("connection", "").lower() == "close":
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            return
        finally:
            self._writers.discard(writer)
            try:
                writer.close()
            except Exception:
                pass

    async def _respond(self, method: str, path: str, raw: bytes, writer: asyncio.StreamWriter) -> bool:
        if method != "POST" or not path.rstrip("/").endswith("/chat/completions"):
            await self._send(writer, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            return True
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            await self._send(writer, 400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
            return True
        with self._lock:
            self.requests.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = None
            if self.on_request is not None:
                reply = self.on_request(body)
            if reply is None and self.script:
                try:
                    reply = self.script.popleft()
                except IndexError:
                    reply = None
            reply = reply or Reply()
            turn = _turn_text(body)
            latency = reply.latency_s
            if latency is None:
                latency = self.latency_fn(turn) if self.latency_fn else self.latency_s
            if latency:
                await asyncio.sleep(latency)
            self.statuses.append(reply.status)
            if reply.drop:
                writer.transport.abort()
                return False
            if reply.body is not None:
                await self._send_raw(writer, reply.status, reply.body, reply.headers)
                return True
            if reply.status != 200:
                kind = "rate_limit_error" if reply.status == 429 else "server_error"
                await self._send(writer, reply.status, {"error": {"message": "simulated", "type": kind}}, reply.headers)
                return True
            content = reply.content
            if callable(content):
                content = content(turn, body)
            if content is None:
                content = self.simulate(body, turn)
            await self._send(writer, 200, self._completion(body, content, reply), reply.headers)
            return True
        finally:
            with self._lock:
                self.in_flight -= 1

    def _completion(self, body: dict, content: str, reply: Reply) -> dict:
        msgs = body.get("messages") or []
        pt = sum(len(m.get("content") or "") for m in msgs) // 4 + 4 * len(msgs) + 3
        ct = len(content) // 4 + 1
        out = {
            "id": f"chatcmpl-sim{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "sim"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": reply.finish_reason, "logprobs": None}
            ],
        }
        if not reply.no_usage:
            out["usage"] = reply.usage or {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
        return out

    async def _send(self, writer, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        await self._send_raw(writer, status, json.dumps(payload).encode(), headers or {})

    async def _send_raw(self, writer, status: int, data: bytes, headers: dict[str, str]) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
                  502: "Bad Gateway", 503: "Service Unavailable"}.get(status, "Status")
        head = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json", f"Content-Length: {len(data)}", "Connection: keep-alive"]
        head += [f"{k}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
        await writer.drain()

    # ---------------------------------------------------------------- the simulated model

    def entities(self, text: str) -> list[tuple[int, int, str]]:
        """Non-overlapping (start, end, label) the simulated model finds in ``text``."""
        found: list[tuple[int, int, str]] = []
        if self.gold:
            rx = self._gold_regex()
            found += [(m.start(), m.end(), self.gold[m.group()]) for m in rx.finditer(text)]
        else:
            for rx, label in ((_EMAIL, "EMAIL"), (_URL, "URL"), (_PHONE, "PHONE")):
                found += [(m.start(), m.end(), label) for m in rx.finditer(text)]
            for m in _WORD.finditer(text):
                before = text[: m.start()].rstrip()
                if m.group() in _NOT_NAMES or not before or before[-1] in ".!?:\n\"":
                    continue
                found.append((m.start(), m.end(), "NAME"))
            found += [(m.start(1), m.end(1), "NAME") for m in _INTRO.finditer(text)]
        found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
        out: list[tuple[int, int, str]] = []
        for f in found:
            if not out or f[0] >= out[-1][1]:
                out.append(f)
        return [f for f in out if f[2] in self.markers]

    def _gold_regex(self) -> re.Pattern:
        key = (id(self.gold), len(self.gold))
        if getattr(self, "_gold_key", None) != key:
            values = sorted((v for v in self.gold if v.strip()), key=len, reverse=True)
            self._gold_rx = re.compile(r"(?<!\w)(?:" + "|".join(re.escape(v) for v in values) + r")(?!\w)")
            self._gold_key = key
        return self._gold_rx

    def simulate(self, body: dict, turn: str) -> str:
        user = _last_user(body)
        if "\nCandidates:\n" in user:
            lines = []
            for m in _CAND.finditer(user.split("\nCandidates:\n", 1)[1]):
                value = m.group(2)
                if self.gold:
                    pii = value in self.gold
                else:
                    pii = any(value[s:e] == value for s, e, _ in self.entities(" x " + value)) or value[:1].islower()
                    pii = pii and value not in _NOT_NAMES
                lines.append(f"{m.group(1)}: {'T' if pii else 'F'}")
            return "\n".join(lines)
        ents = self.entities(turn)
        if body.get("response_format"):
            return json.dumps({"entities": [{"text": turn[s:e], "label": l} for s, e, l in ents]})
        out, pos = [], 0
        for s, e, l in ents:
            o, c = self.markers[l]
            out += [turn[pos:s], o, turn[s:e], c]
            pos = e
        out.append(turn[pos:])
        answer = "".join(out)
        return self.alter(answer) if self.alter else answer


def _last_user(body: dict) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else ""
    return ""


def _turn_text(body: dict) -> str:
    m = _TURN.search(_last_user(body))
    return m.group(1) if m else ""


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.llm_simulator [--latency S] [--gold FILE.json]``: serve until stdin closes.

    Prints ``PORT <n>`` once listening. ``--gold`` is a JSON object {entity text: label}.
    """
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m benchmarks.llm_simulator")
    ap.add_argument("--latency", type=float, default=0.4, help="seconds per answer")
    ap.add_argument("--gold", default=None, help="JSON file {entity text: label}")
    args = ap.parse_args(argv)
    gold = None
    if args.gold:
        with open(args.gold, encoding="utf-8") as fh:
            gold = json.load(fh)
    srv = FakeOpenAI(latency_s=args.latency, gold=gold).start()
    print(f"PORT {srv.port}", flush=True)
    try:
        sys.stdin.read()  # until the parent closes our stdin
    except KeyboardInterrupt:
        pass
    finally:
        srv.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
