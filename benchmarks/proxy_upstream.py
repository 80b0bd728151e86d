"""A fake OpenAI-compatible upstream for the proxy's tests and ``plainsight bench proxy``.

Starlette served by uvicorn on 127.0.0.1 (a free port), in a background thread (``start()``) or
a process of its own (``python -m plainsight.benchmarks.proxy_upstream --port P --latency-ms L``).

``POST /v1/chat/completions``: the reply is ``reply(body)`` (default: echo the last user message
prefixed with "You said: "), as a plain completion or an SSE stream cut into chunks of 1–3
characters (``chunk_sizes``, seeded), after ``latency_s``; ``tool_call`` answers with a tool call
whose arguments are the reply. ``GET /v1/models`` lists one model. ``requests`` records every
request body and ``headers`` the last headers (leak scans read them). ``status`` > 0 answers
every request with that status and an OpenAI error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import threading
import time
from typing import Any, Callable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _last_user(body: dict) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, list):
                return " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            return c or ""
    return ""


class FakeUpstream:
    def __init__(self, latency_s: float = 0.0, reply: Callable[[dict], str] | None = None, seed: int = 0,
                 chunk_sizes: tuple[int, int] = (1, 3), port: int = 0, chunk_delay_s: float = 0.0) -> None:
        self.latency_s = latency_s
        self.reply = reply or (lambda body: "You said: " + _last_user(body))
        self.seed = seed
        self.chunk_sizes = chunk_sizes
        self.chunk_delay_s = chunk_delay_s
        self.port = port or free_port()
        self.requests: list[dict] = []
        #: a file to append every request body to (JSON lines), for leak scans of a separate process
        self.record: str | None = None
        self.headers: list[dict] = []
        self.status = 0
        self.tool_call = False
        self.cancelled = 0
        self._server = None
        self._thread: threading.Thread | None = None
        self.app = self._build()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _build(self):
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, StreamingResponse
        from starlette.routing import Route

        async def models(request):
            return JSONResponse({"object": "list", "data": [{"id": "fake-model", "object": "model", "created": 0,
                                                             "owned_by": "plainsight-tests"}]})

        async def chat(request):
            body = await request.json()
            self.requests.append(body)
            if self.record:
                with open(self.record, "a", encoding="utf-8") as f:
                    f.write(json.dumps(body, ensure_ascii=False) + "\n")
            self.headers.append(dict(request.headers))
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            if self.status:
                return JSONResponse({"error": {"message": "scripted upstream error", "type": "server_error",
                                               "param": None, "code": "scripted"}}, status_code=self.status)
            text = self.reply(body)
            model = body.get("model", "fake-model")
            if not body.get("stream"):
                msg: dict[str, Any] = {"role": "assistant", "content": text}
                if self.tool_call:
                    msg = {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": text}}]}
                return JSONResponse({"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
                                     "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
                                     "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
            rng = random.Random(self.seed + len(self.requests))
            lo, hi = self.chunk_sizes
            pieces = []
            i = 0
            while i < len(text):
                n = rng.randint(lo, hi)
                pieces.append(text[i : i + n])
                i += n

            def chunk(delta: dict, finish=None) -> str:
                return "data: " + json.dumps({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                                              "model": model, "choices": [{"index": 0, "delta": delta,
                                                                           "finish_reason": finish}]}) + "\n\n"

            async def gen():
                try:
                    yield chunk({"role": "assistant", "content": ""})
                    for j, p in enumerate(pieces):
                        if self.chunk_delay_s:
                            await asyncio.sleep(self.chunk_delay_s)
                        if self.tool_call:
                            tc = {"index": 0, "function": {"arguments": p}}
                            if j == 0:
                                tc.update(id="call_1", type="function")
                                tc["function"]["name"] = "lookup"
                            yield chunk({"tool_calls": [tc]})
                        else:
                            yield chunk({"content": p})
                    yield chunk({}, "tool_calls" if self.tool_call else "stop")
                    yield "data: [DONE]\n\n"
                except asyncio.CancelledError:
                    self.cancelled += 1
                    raise

            return StreamingResponse(gen(), media_type="text/event-stream")

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                                 Route("/v1/models", models, methods=["GET"])])

    def start(self) -> "FakeUpstream":
        import uvicorn

        cfg = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="error", access_log=False,
                             lifespan="off")
        self._server = uvicorn.Server(cfg)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        wait_port(self.port)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)


def wait_port(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listening on 127.0.0.1:{port}")


def main() -> None:  # pragma: no cover - run by the benchmark in its own process
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--latency-ms", type=float, default=0.0)
    ap.add_argument("--reply", default=None, help="fixed reply text")
    ap.add_argument("--record", default=None, help="append every request body to this file (JSON lines)")
    a = ap.parse_args()
    import uvicorn

    up = FakeUpstream(a.latency_ms / 1000.0, (lambda b: a.reply) if a.reply else None, port=a.port)
    up.record = a.record
    uvicorn.run(up.app, host="127.0.0.1", port=a.port, log_level="error", access_log=False, lifespan="off")


if __name__ == "__main__":  # pragma: no cover
    main()
