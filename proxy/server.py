"""The OpenAI-compatible proxy (Starlette app, served by uvicorn): ``plainsight proxy``.

``POST /v1/chat/completions`` (plain and ``stream: true``), ``GET /v1/models`` (passed through),
``GET /healthz``, ``GET /metrics``; anything else gets an OpenAI-shaped 404. See docs/proxy.md.

Per request: authenticate the client (clients file) → limits (before any detection) → session id
(X-Plainsight-Session, then ``user``; else refuse, or a keyed fingerprint where allowed) → load the
sealed session (fail closed: 503) → de-identify every message (fail closed: 500, nothing goes
upstream) → seal and store the session → call the upstream → re-identify the reply with only the
surrogates this request issued (streams: :class:`proxy.restore.StreamRestorer`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import math
import os
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from plainsight.middleware.logs import session_ref

from .clients import LOCAL, Client, ClientRegistry
from .engine import Engine, ProxySession, RequestError
from .metrics import ProxyMetrics
from .restore import StreamRestorer, issued_mapping
from .store import open_store, store_key

log = logging.getLogger("plainsight.proxy")
audit = logging.getLogger("plainsight.proxy.audit")

SESSION_HEADER = "x-plainsight-session"
MAX_SESSION_ID = 200


def error_body(message: str, type_: str, code: str | None = None, param: str | None = None) -> dict:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def error(status: int, message: str, code: str, type_: str | None = None, headers: dict | None = None) -> JSONResponse:
    if type_ is None:
        type_ = {400: "invalid_request_error", 401: "authentication_error", 404: "invalid_request_error",
                 413: "invalid_request_error", 429: "rate_limit_error"}.get(status, "server_error")
    return JSONResponse(error_body(message, type_, code), status_code=status, headers=headers)


class _Refused(Exception):
    def __init__(self, status: int, message: str, reason: str, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status, self.reason, self.headers = status, reason, headers


class _Bucket:
    """Per-client admission: a concurrency cap and a token bucket (requests per minute)."""

    def __init__(self, concurrency: int, rpm: int) -> None:
        self.concurrency = concurrency
        self.rate = rpm / 60.0
        self.capacity = max(1.0, rpm / 30.0)  # two seconds' worth of burst
        self.tokens = self.capacity
        self.stamp = time.monotonic()
        self.active = 0

    def admit(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.active >= self.concurrency:
            raise _Refused(429, f"too many concurrent requests for this client (max_concurrency {self.concurrency})",
                           "concurrency", {"Retry-After": "1"})
        if self.tokens < 1.0:
            wait = math.ceil((1.0 - self.tokens) / self.rate) if self.rate > 0 else 60
            raise _Refused(429, "rate limit reached for this client (requests_per_minute)", "rate_limited",
                           {"Retry-After": str(max(1, wait))})
        self.tokens -= 1.0
        self.active += 1

    def release(self) -> None:
        self.active -= 1


@dataclass
class _Ctx:
    client: Client
    stream: bool = False
    session: str = ""
    outcome: str = "failed_closed"
    status: int = 500
    t0: float = 0.0


class ProxyServer:
    def __init__(self, settings, upstream: str | None = None, *, pipeline=None, store=None, cipher=None,
                 metrics: ProxyMetrics | None = None) -> None:
        from plainsight.middleware.keys import load_configured

        self.settings = settings
        ps = settings.proxy
        self.ps = ps
        self.upstream = (upstream or ps.upstream or "").rstrip("/")
        if not self.upstream:
            raise ValueError("the proxy needs an upstream (--upstream URL or proxy.upstream)")
        if pipeline is None:
            from plainsight.surrogate.pipeline import build_pipeline

            pipeline = build_pipeline(settings)
        self.pipeline = pipeline
        secret = load_configured(settings)[0]
        dkey = hashlib.sha256(b"plainsight-proxy-digest\x00" + (secret.encode() if secret else os.urandom(32))).digest()
        self._fp_key = hashlib.sha256(b"plainsight-proxy-fingerprint\x00" + dkey).digest()
        self.engine = Engine(pipeline, dkey, allow_media=ps.allow_media)
        if cipher is None:
            cipher = _cipher(settings, ps.store)
        self.cipher = cipher
        self.store = store if store is not None else open_store(ps)
        if (ps.store in ("sqlite", "redis") and settings.surrogate.session_keys == "auto"
                and hasattr(pipeline.replacer, "session_keys")):
            # crypto-shredding, as in the Kafka worker: a stored session's surrogates derive from a
            # random key kept only in its sealed state, which ``plainsight forget`` deletes
            pipeline.replacer.session_keys = True
        self.metrics = metrics or ProxyMetrics()
        self.clients = ClientRegistry(ps.clients_file)
        self._buckets: dict[str, _Bucket] = {}
        self._issued_cache: dict[tuple, Any] = {}
        #: store key -> (the sealed blob this process last wrote or read, its opened session)
        self._live: "OrderedDict[str, tuple[bytes, ProxySession]]" = OrderedDict()
        self.ps_cache = 2048
        self._locks: "weakref.WeakValueDictionary[str, asyncio.Lock]" = weakref.WeakValueDictionary()
        self._http: httpx.AsyncClient | None = None
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self.chat, methods=["POST"]),
                Route("/chat/completions", self.chat, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
                Route("/healthz", self.healthz, methods=["GET"]),
                Route("/metrics", self.metrics_endpoint, methods=["GET"]),
                Route("/{path:path}", self.not_found, methods=["GET", "POST", "PUT", "DELETE", "PATCH"]),
            ],
            lifespan=self._lifespan,
        )

    # ---- lifecycle -------------------------------------------------------------------------
    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            ps = self.ps
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(ps.read_timeout_s, connect=ps.connect_timeout_s),
                limits=httpx.Limits(max_connections=1000, max_keepalive_connections=200),
            )
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        await self.store.close()

    def _lifespan(self, app):
        server = self

        class _LS:
            async def __aenter__(self):
                return None

            async def __aexit__(self, *exc):
                await server.aclose()

        return _LS()

    # ---- small endpoints -------------------------------------------------------------------
    async def healthz(self, request: Request) -> Response:
        try:
            await self.store.ping()
        except Exception as exc:
            return JSONResponse({"status": "store unavailable", "error": type(exc).__name__}, status_code=503)
        return JSONResponse({"status": "ok"})

    async def metrics_endpoint(self, request: Request) -> Response:
        body, ctype = self.metrics.exposition()
        return Response(body, media_type=ctype)

    async def not_found(self, request: Request) -> Response:
        self.metrics.refuse("not_found", "unknown")
        return error(404, f"unknown path {request.url.path[:100]!r}: this proxy serves /v1/chat/completions and "
                          "/v1/models", "not_found")

    async def models(self, request: Request) -> Response:
        client = self.clients.authenticate(_bearer(request))
        if client is None:
            self.metrics.refuse("unauthorized", "unknown")
            return error(401, "invalid or missing plainsight client key", "invalid_api_key")
        try:
            r = await self._client().get(self.upstream + "/models", headers=self._upstream_headers(request, client))
        except httpx.HTTPError as exc:
            return error(502, f"upstream unreachable ({type(exc).__name__})", "upstream_unreachable")
        return Response(r.content, status_code=r.status_code, media_type=r.headers.get("content-type"))

    # ---- helpers ---------------------------------------------------------------------------
    def _upstream_headers(self, request: Request, client: Client) -> dict[str, str]:
        key = client.upstream_key()
        if key is None and self.ps.upstream_api_key is not None:
            key = self.ps.upstream_api_key.get_secret_value()
        h = {"content-type": "application/json"}
        if key is not None:
            h["authorization"] = f"Bearer {key}"
        elif not self.clients.enabled:  # one local app: its own upstream key passes through
            auth = request.headers.get("authorization")
            if auth:
                h["authorization"] = auth
        return h

    def _bucket(self, client: Client) -> _Bucket:
        b = self._buckets.get(client.name)
        if b is None:
            b = self._buckets[client.name] = _Bucket(client.max_concurrency or self.ps.max_concurrency,
                                                      client.requests_per_minute or self.ps.requests_per_minute)
        return b

    async def _read_body(self, request: Request) -> dict:
        limit = self.ps.max_body_bytes
        cl = request.headers.get("content-length")
        if cl is not None and cl.isdigit() and int(cl) > limit:
            raise _Refused(413, f"request body larger than max_body_bytes ({limit})", "body_too_large")
        chunks: list[bytes] = []
        n = 0
        async for chunk in request.stream():
            n += len(chunk)
            if n > limit:
                raise _Refused(413, f"request body larger than max_body_bytes ({limit})", "body_too_large")
            chunks.append(chunk)
        raw = b"".join(chunks)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _Refused(400, "request body is not valid UTF-8", "invalid_json") from None
        try:
            body = json.loads(text)
        except (ValueError, RecursionError):
            raise _Refused(400, "request body is not valid JSON", "invalid_json") from None
        if not isinstance(body, dict):
            raise _Refused(400, "request body must be a JSON object", "invalid_request")
        return body

    def _check(self, body: dict) -> None:
        ps = self.ps
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            raise _Refused(400, "'messages' must be a non-empty array", "invalid_request")
        if len(msgs) > ps.max_messages:
            raise _Refused(400, f"too many messages (max_messages {ps.max_messages})", "max_messages")
        for i, m in enumerate(msgs):
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                raise _Refused(400, f"messages[{i}] must be an object with a string 'role'", "invalid_request")
            c = m.get("content")
            n = 0
            if isinstance(c, str):
                n += len(c)
            elif isinstance(c, list):
                for p in c:
                    if not isinstance(p, dict) or not isinstance(p.get("type"), str):
                        raise _Refused(400, f"messages[{i}].content parts must be objects with a 'type'",
                                       "invalid_request")
                    t = p.get("text")
                    if t is not None and not isinstance(t, str):
                        raise _Refused(400, f"messages[{i}].content[].text must be a string", "invalid_request")
                    n += len(t or "")
            elif c is not None:
                raise _Refused(400, f"messages[{i}].content must be a string, an array of parts or null",
                               "invalid_request")
            for k in ("name", "refusal"):
                if k in m and m[k] is not None and not isinstance(m[k], str):
                    raise _Refused(400, f"messages[{i}].{k} must be a string", "invalid_request")
            calls = m.get("tool_calls")
            if calls is not None:
                if not isinstance(calls, list):
                    raise _Refused(400, f"messages[{i}].tool_calls must be an array", "invalid_request")
                for tc in calls:
                    fn = tc.get("function") if isinstance(tc, dict) else None
                    args = fn.get("arguments") if isinstance(fn, dict) else None
                    if not isinstance(args, str):
                        raise _Refused(400, f"messages[{i}].tool_calls[].function.arguments must be a string",
                                       "invalid_request")
                    n += len(args)
                    if _json_depth(args) > ps.max_tool_arg_depth:
                        raise _Refused(400, f"tool-call arguments nest deeper than max_tool_arg_depth "
                                            f"({ps.max_tool_arg_depth})", "max_tool_arg_depth")
            if n > ps.max_message_chars:
                raise _Refused(400, f"messages[{i}] is longer than max_message_chars ({ps.max_message_chars})",
                               "max_message_chars")
        if "user" in body and body["user"] is not None and not isinstance(body["user"], str):
            raise _Refused(400, "'user' must be a string", "invalid_request")

    def _session_id(self, request: Request, body: dict, client: Client) -> str:
        sid = request.headers.get(SESSION_HEADER) or body.get("user") or ""
        if sid:
            if len(sid) > MAX_SESSION_ID:
                raise _Refused(400, f"session id longer than {MAX_SESSION_ID} characters", "invalid_request")
            return sid
        allowed = client.fingerprint_fallback if self.clients.enabled else self.ps.fingerprint_fallback
        if allowed:
            first = next((m.get("content") for m in body["messages"] if m.get("role") == "user"), None)
            if isinstance(first, list):
                first = " ".join(p.get("text") or "" for p in first if isinstance(p, dict))
            if isinstance(first, str) and first:
                d = hmac.new(self._fp_key, (client.name + "\x00" + first).encode("utf-8", "surrogatepass"),
                             hashlib.sha256).hexdigest()[:32]
                return "fp:" + d
        raise _Refused(400, "no session: send an X-Plainsight-Session header or the 'user' field",
                       "session_required")

    def _internal_id(self, client: Client, sid: str) -> str:
        # one namespace per client: the same session id from two clients gives unrelated mappings
        return sid if client is LOCAL else f"{client.name}\x1f{sid}"

    async def _load(self, internal: str, key: str) -> ProxySession:
        blob = await self.store.get(key)
        if blob is None:
            if self._live.pop(key, None) is not None:  # forgotten or expired: drop what memory holds of it
                for k in [k for k in self._issued_cache if k[0] == internal]:
                    del self._issued_cache[k]
            return self.engine.new_session(internal)
        hit = self._live.get(key)
        if hit is not None and hit[0] == blob and hit[1].state.session_id == internal:
            return hit[1]  # the stored state is the one this process sealed last: no need to open it
        ps = self.engine.open(internal, blob, self.cipher)
        self._remember(key, blob, ps)
        return ps

    def _remember(self, key: str, blob: bytes, ps: ProxySession) -> None:
        self._live[key] = (blob, ps)
        self._live.move_to_end(key)
        while len(self._live) > self.ps_cache:
            self._live.popitem(last=False)

    def _finish(self, ctx: _Ctx, started: float) -> None:
        self.metrics.outcome(ctx.outcome, ctx.stream)
        audit.info("client=%s session=%s stream=%s outcome=%s status=%d ms=%.1f", ctx.client.name,
                   session_ref(ctx.session) if ctx.session else "-", ctx.stream, ctx.outcome, ctx.status,
                   (time.perf_counter() - started) * 1e3)

    # ---- the main endpoint -----------------------------------------------------------------
    async def chat(self, request: Request) -> Response:
        t0 = time.perf_counter()
        client = self.clients.authenticate(_bearer(request))
        if client is None:
            self.metrics.refuse("unauthorized", "unknown")
            ctx = _Ctx(LOCAL, outcome="refused", status=401)
            ctx.client = Client("unknown")
            self._finish(ctx, t0)
            await asyncio.sleep(self.ps.refusal_delay_s)
            return error(401, "invalid or missing plainsight client key (Authorization: Bearer psk-...)",
                         "invalid_api_key")
        ctx = _Ctx(client, t0=t0)
        bucket = self._bucket(client)
        try:
            bucket.admit()
        except _Refused as r:
            await asyncio.sleep(self.ps.refusal_delay_s)  # a flooding loop slows itself down
            return self._refused(ctx, r, t0)
        release = True
        try:
            try:
                body = await self._read_body(request)
                self._check(body)
                ctx.stream = bool(body.get("stream"))
                sid = self._session_id(request, body, client)
            except _Refused as r:
                return self._refused(ctx, r, t0)
            internal = self._internal_id(client, sid)
            ctx.session = internal
            key = store_key(sid, client.name)
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = asyncio.Lock()
            async with lock:
                try:
                    ps = await self._load(internal, key)
                except Exception as exc:
                    return self._fail_closed(ctx, t0, 503, "load the session state", exc, "state_unavailable")
                try:
                    deid = self.engine.deidentify_request(ps, body, self.ps.max_tool_arg_depth)
                except RequestError as r:
                    self._live.pop(key, None)  # the session may be half-updated: reopen the stored one
                    return self._refused(ctx, _Refused(r.status, str(r), r.code), t0)
                except Exception as exc:
                    self._live.pop(key, None)
                    return self._fail_closed(ctx, t0, 500, "de-identify this request", exc, "deidentification_failed")
                try:
                    if ps.dirty or ps.state.dirty:
                        blob = self.engine.seal(ps, self.cipher)
                        await self.store.put(key, blob, self.ps.ttl_s)
                        ps.dirty = ps.state.dirty = False
                        self._remember(key, blob, ps)
                except Exception as exc:
                    self._live.pop(key, None)
                    return self._fail_closed(ctx, t0, 503, "store the session state", exc, "state_unavailable")
                mapping = self._issued(ps, deid.entities)
            headers = self._upstream_headers(request, client)
            if ctx.stream:
                release = False
                return await self._stream(request, ctx, deid.body, headers, mapping, t0, bucket)
            return await self._plain(request, ctx, deid.body, headers, mapping, t0)
        finally:
            if release:
                bucket.release()

    def _prepare_restore(self, mapping) -> None:
        """Build the issued mapping's reverse matcher (a regex compile, ~1 ms) while the upstream
        thinks: scheduled after the upstream call's first step, so the request is on its way first."""
        def warm() -> None:
            try:
                self.engine.replacer.reidentify("", mapping)  # builds and caches the matcher on the mapping
            except Exception:  # re-identification proper will report it
                pass

        asyncio.get_running_loop().call_soon(warm)

    def _issued(self, ps: ProxySession, entities: list[tuple[str, str]]):
        """The issued mapping of this request, shared by the session's requests that issued the
        same surrogates (so the replacer's compiled reverse matcher, cached on it, is reused)."""
        rs = ps.state.replace_state
        key = (ps.state.session_id, rs.generation, frozenset(entities))
        hit = self._issued_cache.get(key)
        if hit is None:
            hit = issued_mapping(rs, entities)
            if len(self._issued_cache) >= 4096:
                self._issued_cache.pop(next(iter(self._issued_cache)))
            self._issued_cache[key] = hit
        return hit

    def _refused(self, ctx: _Ctx, r: _Refused, t0: float) -> Response:
        self.metrics.refuse(r.reason, ctx.client.name)
        ctx.outcome, ctx.status = "refused", r.status
        self._finish(ctx, t0)
        return error(r.status, str(r), r.reason, headers=r.headers)

    async def _plain(self, request: Request, ctx: _Ctx, body: dict, headers: dict, mapping, t0: float) -> Response:
        http = self._client()
        t_up = time.perf_counter()
        self.metrics.added.labels("false").observe(t_up - t0)
        call = asyncio.ensure_future(http.post(self.upstream + "/chat/completions", json=body, headers=headers))
        self._prepare_restore(mapping)
        gone = asyncio.ensure_future(_disconnected(request))
        try:
            done, _ = await asyncio.wait({call, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if call not in done:  # the client went away: cancel the upstream request
            call.cancel()
            ctx.outcome, ctx.status = "cancelled", 499
            self._finish(ctx, t0)
            return Response(status_code=499)
        try:
            r = call.result()
        except httpx.HTTPError as exc:
            ctx.outcome, ctx.status = "upstream_unreachable", 502
            self._finish(ctx, t0)
            return error(502, f"upstream unreachable ({type(exc).__name__})", "upstream_unreachable")
        t_resp = time.perf_counter()
        self.metrics.upstream.labels("false").observe(t_resp - t_up)
        if r.status_code >= 400:
            ctx.outcome, ctx.status = "upstream_error", r.status_code
            self._finish(ctx, t0)
            return Response(r.content, status_code=r.status_code,
                            media_type=r.headers.get("content-type", "application/json"))
        try:
            data = r.json()
            for ch in data.get("choices") or []:
                msg = ch.get("message") or {}
                self._restore_message(msg, mapping)
        except Exception as exc:
            log.error("proxy: upstream reply could not be re-identified (%s)", type(exc).__name__)
            ctx.outcome, ctx.status = "upstream_error", 502
            self._finish(ctx, t0)
            return error(502, "the upstream reply was not a chat completion", "bad_upstream_reply")
        after = time.perf_counter() - t_resp
        self.metrics.after.labels("false").observe(after)
        ctx.outcome, ctx.status = "ok", r.status_code
        self._finish(ctx, t0)
        # what plainsight added to this request (benchmarks read it; no content)
        return JSONResponse(data, status_code=r.status_code, headers={
            "x-plainsight-added-ms": f"{(t_up - t0) * 1e3:.3f}", "x-plainsight-overhead-ms": f"{(t_up - t0 + after) * 1e3:.3f}"})

    def _reid(self, text: str, mapping) -> str:
        return self.engine.replacer.reidentify(text, mapping)[0] if text else text

    def _restore_json(self, args: str, mapping) -> str:
        try:
            doc = json.loads(args)
        except ValueError:
            return self._reid(args, mapping)

        def walk(v):
            if isinstance(v, str):
                return self._reid(v, mapping)
            if isinstance(v, list):
                return [walk(x) for x in v]
            if isinstance(v, dict):
                return {k: walk(x) for k, x in v.items()}
            return v

        return json.dumps(walk(doc), ensure_ascii=False)

    def _restore_message(self, msg: dict, mapping) -> None:
        if isinstance(msg.get("content"), str):
            msg["content"] = self._reid(msg["content"], mapping)
        if isinstance(msg.get("refusal"), str):
            msg["refusal"] = self._reid(msg["refusal"], mapping)
        for tc in msg.get("tool_calls") or []:
            fn = tc.get("function") or {}
            if isinstance(fn.get("arguments"), str):
                fn["arguments"] = self._restore_json(fn["arguments"], mapping)
        fc = msg.get("function_call")
        if isinstance(fc, dict) and isinstance(fc.get("arguments"), str):
            fc["arguments"] = self._restore_json(fc["arguments"], mapping)

    def _fail_closed(self, ctx: _Ctx, t0: float, status: int, what: str, exc: BaseException, code: str) -> Response:
        """A stage failed before anything went upstream: the log and the answer name the exception
        type only (never the request's text)."""
        log.error("proxy: could not %s (%s); nothing sent upstream", what, type(exc).__name__)
        ctx.status = status
        self._finish(ctx, t0)
        return error(status, f"plainsight could not {what} ({type(exc).__name__}); nothing was sent upstream", code)

    async def _stream(self, request: Request, ctx: _Ctx, body: dict, headers: dict, mapping, t0: float,
                      bucket: _Bucket) -> Response:
        http = self._client()
        t_up = time.perf_counter()
        self.metrics.added.labels("true").observe(t_up - t0)
        try:
            req = http.build_request("POST", self.upstream + "/chat/completions", json=body, headers=headers)
            sending = asyncio.ensure_future(http.send(req, stream=True))
            self._prepare_restore(mapping)
            resp = await sending
        except httpx.HTTPError as exc:
            bucket.release()
            ctx.outcome, ctx.status = "upstream_unreachable", 502
            self._finish(ctx, t0)
            return error(502, f"upstream unreachable ({type(exc).__name__})", "upstream_unreachable")
        except BaseException:
            bucket.release()
            raise
        if resp.status_code >= 400:
            try:
                content = await resp.aread()
            finally:
                await resp.aclose()
                bucket.release()
            ctx.outcome, ctx.status = "upstream_error", resp.status_code
            self._finish(ctx, t0)
            return Response(content, status_code=resp.status_code,
                            media_type=resp.headers.get("content-type", "application/json"))
        ctx.status = resp.status_code
        once = _Once(bucket.release)
        gen = self._relay(resp, ctx, mapping, t0, t_up, once)

        def never_started(resp: httpx.Response = resp, once: _Once = once) -> None:
            # a client gone before the body started: the generator's ``finally`` never runs
            if not once.done:
                once()
                with contextlib.suppress(RuntimeError):
                    asyncio.get_running_loop().create_task(resp.aclose())

        weakref.finalize(gen, never_started)
        return StreamingResponse(gen, status_code=resp.status_code,
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-cache", "x-plainsight-added-ms": f"{(t_up - t0) * 1e3:.3f}"})

    async def _relay(self, resp: httpx.Response, ctx: _Ctx, mapping, t0: float, t_up: float, release: "_Once"):
        replacer = self.engine.replacer
        restorers: dict[tuple, StreamRestorer] = {}
        first_in: float | None = None
        first_out = False
        deadline = t_up + self.ps.max_stream_s

        def restorer(key: tuple) -> StreamRestorer:
            r = restorers.get(key)
            if r is None:
                r = restorers[key] = StreamRestorer(replacer, mapping)
            return r

        def flush_choice(idx: int, delta: dict) -> None:
            for key, r in restorers.items():
                if key[0] != idx:
                    continue
                rest = r.flush()
                if not rest:
                    continue
                if key[1] == "content":
                    delta["content"] = rest + (delta.get("content") or "")
                elif key[1] == "refusal":
                    delta["refusal"] = rest + (delta.get("refusal") or "")
                else:
                    delta.setdefault("tool_calls", []).insert(0, {"index": key[2], "function": {"arguments": rest}})

        try:
            async for line in resp.aiter_lines():
                if time.perf_counter() > deadline:
                    self.metrics.refuse("stream_duration", ctx.client.name)
                    yield "data: " + json.dumps(error_body("stream longer than max_stream_s", "server_error",
                                                           "stream_duration")) + "\n\n"
                    break
                if not line.startswith("data:"):
                    continue
                payload = line[5:].strip()
                if payload == "[DONE]":
                    tail = []
                    for idx in sorted({k[0] for k in restorers}):
                        delta: dict = {}
                        flush_choice(idx, delta)
                        if delta:
                            tail.append({"index": idx, "delta": delta, "finish_reason": None})
                    if tail:
                        yield "data: " + json.dumps({"object": "chat.completion.chunk", "choices": tail},
                                                    ensure_ascii=False) + "\n\n"
                    yield "data: [DONE]\n\n"
                    continue
                try:
                    chunk = json.loads(payload)
                except ValueError:
                    continue
                got_content = False
                changed = False
                for ch in chunk.get("choices") or []:
                    idx = ch.get("index", 0)
                    delta = ch.get("delta") or {}
                    for field_ in ("content", "refusal"):
                        if isinstance(delta.get(field_), str) and delta[field_]:
                            got_content = True
                            was = delta[field_]
                            delta[field_] = restorer((idx, field_)).feed(was)
                            changed = changed or delta[field_] != was
                    for tc in delta.get("tool_calls") or []:
                        fn = tc.get("function") or {}
                        if isinstance(fn.get("arguments"), str) and fn["arguments"]:
                            was = fn["arguments"]
                            fn["arguments"] = restorer((idx, "tool", tc.get("index", 0))).feed(was)
                            changed = changed or fn["arguments"] != was
                    if ch.get("finish_reason") is not None:
                        flush_choice(idx, delta)
                        ch["delta"] = delta
                        changed = True  # the last chunk of a choice carries what was held back
                if got_content and first_in is None:
                    first_in = time.perf_counter()
                if not first_out and first_in is not None and any(
                        (c.get("delta") or {}).get("content") for c in chunk.get("choices") or []):
                    first_out = True
                    self.metrics.ttft.observe((t_up - t0) + (time.perf_counter() - first_in))
                # a chunk the restorer left as it was goes out as the upstream wrote it (no re-encoding)
                yield ("data: " + json.dumps(chunk, ensure_ascii=False) if changed else line) + "\n\n"
            ctx.outcome = "ok"
        except asyncio.CancelledError:
            ctx.outcome, ctx.status = "cancelled", 499
            raise
        except httpx.HTTPError as exc:
            ctx.outcome = "upstream_unreachable"
            yield "data: " + json.dumps(error_body(f"upstream stream broke ({type(exc).__name__})", "server_error",
                                                   "upstream_unreachable")) + "\n\n"
        finally:
            release()
            await resp.aclose()
            self.metrics.upstream.labels("true").observe(time.perf_counter() - t_up)
            if restorers:
                self.metrics.held.observe(max(r.max_held for r in restorers.values()))
            self._finish(ctx, t0)


class _Once:
    """Calls ``fn`` the first time it is called, never again."""

    __slots__ = ("fn", "done")

    def __init__(self, fn) -> None:
        self.fn = fn
        self.done = False

    def __call__(self) -> None:
        if not self.done:
            self.done = True
            self.fn()


def _json_depth(s: str) -> int:
    """Nesting depth of brackets in a JSON text (outside strings), without parsing it."""
    depth = best = 0
    in_str = esc = False
    for ch in s:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            best = max(best, depth)
        elif ch in "]}":
            depth -= 1
    return best


def _bearer(request: Request) -> str | None:
    auth = request.headers.get("authorization") or ""
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return None


async def _disconnected(request: Request) -> None:
    while True:
        msg = await request.receive()
        if msg.get("type") == "http.disconnect":
            return


def _cipher(settings, store: str):
    """The worker's state keys; an in-memory store without keys gets a random key of this process."""
    from plainsight.surrogate.crypto import StateCipher

    try:
        return StateCipher.from_settings(settings)
    except Exception:
        if store != "memory":
            raise
        return StateCipher({"ephemeral": os.urandom(32)}, "ephemeral")


def build_app(settings, upstream: str | None = None, **kw: Any) -> ProxyServer:
    return ProxyServer(settings, upstream, **kw)
