"""A throttled, retrying wrapper around the official ``openai`` async client.

- requests per minute: ``asyncio_throttle.Throttler``;
- tokens per minute: a token bucket charged with an estimate before the call (chars/4 of the
  prompt + the completion cap) and reconciled with the usage the server reports;
- a global concurrency limit (semaphore) for in-flight HTTP requests;
- retries with exponential backoff and full jitter on 429, 5xx, timeouts and connection
  errors; ``Retry-After`` / ``retry-after-ms`` honoured, and a 429 pauses *all* requests until
  the server's retry time (no pile-up of doomed requests during a storm);
- never sleeps past the caller's deadline: it gives up early instead.

Nothing here is per session, so no session waits for another's turn except through the shared
limits (which are global by nature). Errors carry a reason code, never the request or response
text (which would hold PII).
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from dataclasses import dataclass
from typing import Any

from asyncio_throttle import Throttler

from .stats import LLMStats


#: connections per HTTP pool (see ThrottledClient._bind)
POOL_PER_CLIENT = 16


class LLMCallError(Exception):
    """The model could not be reached or refused; ``reason`` is a short code."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None
    latency_s: float
    attempts: int


#: Libraries that log request bodies (the raw turn!) at DEBUG level.
_CHATTY_LOGGERS = ("openai", "httpx", "httpx2", "httpcore", "httpcore2")


def quiet_http_loggers() -> None:
    """Keep the HTTP/OpenAI libraries at WARNING or above: at DEBUG they log request options,
    i.e. the prompt with the raw turn. Applied even when the application logs at DEBUG."""
    for name in _CHATTY_LOGGERS:
        lg = logging.getLogger(name)
        if lg.level < logging.WARNING:
            lg.setLevel(logging.WARNING)


def estimate_tokens(messages: list[dict[str, str]]) -> int:
    """Rough token count of a chat request (chars/4 + per-message overhead)."""
    return sum(len(m.get("content") or "") for m in messages) // 4 + 4 * len(messages) + 3


class TokenBucket:
    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.tokens = float(per_minute)
        self.last = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now

    async def acquire(self, n: int) -> None:
        n = min(float(n), self.capacity)
        while True:
            self._refill()
            if self.tokens >= n:
                self.tokens -= n
                return
            await asyncio.sleep(min(1.0, max(0.005, (n - self.tokens) / self.rate)))

    def reconcile(self, estimated: int, actual: int) -> None:
        """Give back (or charge) the difference between the estimate and the reported usage."""
        self._refill()
        self.tokens = min(self.capacity, self.tokens + (estimated - actual))


class ThrottledClient:
    def __init__(self, settings, stats: LLMStats) -> None:
        self.s = settings
        self.stats = stats
        # waiters poll about once per free slot (not every 10 ms: hundreds of waiters would spin)
        poll = min(1.0, max(0.01, 60.0 / settings.requests_per_minute))
        self.throttler = Throttler(rate_limit=settings.requests_per_minute, period=60.0, retry_interval=poll)
        self.tokens = TokenBucket(settings.tokens_per_minute)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._clients: list[Any] = []
        self._load: list[int] = []
        self._sem: asyncio.Semaphore | None = None
        self._pause_until = 0.0
        # import the client library now, not inside the first turn's latency budget
        import openai  # noqa: F401
        import openai.types.chat  # noqa: F401

        quiet_http_loggers()
        self._raw_cls = _http_lib().Response

    # The httpx pools and the semaphore belong to one event loop; rebuild them if a caller
    # moves to another loop (e.g. repeated asyncio.run() in a CLI).
    #
    # Several small connection pools instead of one big one: the HTTP pool's bookkeeping
    # probes every idle connection whenever a request starts or ends, which made one
    # 256-connection pool spend ~4 ms CPU per request at 200 in flight (vs ~1.5 ms sharded).
    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is self._loop and self._clients:
            return
        key = self.s.api_key.get_secret_value() if self.s.api_key is not None else None
        if not key:
            import os

            key = os.environ.get("OPENAI_API_KEY") or ("unused" if self.s.base_url else None)
        per = min(POOL_PER_CLIENT, self.s.max_concurrency)
        n = -(-self.s.max_concurrency // per)
        self._key = key
        self._per = per
        self._clients = [None] * n  # created on first use
        self._load = [0] * n
        self._sem = asyncio.Semaphore(self.s.max_concurrency)
        self._loop = loop

    def _client(self, shard: int) -> Any:
        c = self._clients[shard]
        if c is None:
            from openai import AsyncOpenAI, DefaultAsyncHttpxClient

            _http = _http_lib()
            limits = _http.Limits(max_connections=self._per, max_keepalive_connections=self._per)
            c = self._clients[shard] = AsyncOpenAI(
                api_key=self._key,
                base_url=self.s.base_url,
                max_retries=0,
                timeout=self.s.timeout_s,
                http_client=DefaultAsyncHttpxClient(limits=limits, timeout=self.s.timeout_s, verify=self._ssl()),
            )
        return c

    def _ssl(self) -> Any:
        """One TLS context for every pool (loading the CA bundle costs ~40 ms each time)."""
        if getattr(self, "_ssl_ctx", None) is None:
            import ssl

            try:
                import certifi

                self._ssl_ctx = ssl.create_default_context(cafile=certifi.where())
            except ImportError:  # pragma: no cover
                self._ssl_ctx = ssl.create_default_context()
        return self._ssl_ctx

    def _pick(self) -> int:
        """The least loaded connection pool."""
        return min(range(len(self._load)), key=self._load.__getitem__)

    async def aclose(self) -> None:
        clients, self._clients, self._loop = self._clients, [], None
        for c in clients:
            if c is None:
                continue
            try:
                await c.close()
            except Exception:  # pragma: no cover - best effort
                pass

    def _backoff(self, attempt: int) -> float:
        cap = min(self.s.backoff_max_s, self.s.backoff_base_s * (2**attempt))
        return random.uniform(cap / 2, cap)

    async def complete(
        self,
        stage: str,
        messages: list[dict[str, str]],
        *,
        max_tokens: int,
        response_format: dict | None = None,
        deadline: float | None = None,
    ) -> Completion:
        """One chat completion with throttling and retries. Raises :class:`LLMCallError`."""
        from openai import APIConnectionError, APIStatusError, APITimeoutError, RateLimitError
        self._bind()
        prompt_est = estimate_tokens(messages)
        est = prompt_est + max_tokens
        kwargs: dict[str, Any] = {
            "model": self.s.model_name,
            "messages": messages,
            "temperature": self.s.temperature,
            "top_p": 1,
            "max_tokens": max_tokens,
        }
        if response_format is not None:
            kwargs["response_format"] = response_format
        t_start = time.monotonic()
        attempt = 0
        while True:
            t0 = time.monotonic()
            if self._pause_until > t0:
                wait = self._pause_until - t0
                if deadline is not None and t0 + wait > deadline:
                    raise LLMCallError("rate_limited")
                await asyncio.sleep(wait)
            await self.throttler.acquire()
            await self.tokens.acquire(est)
            assert self._sem is not None
            async with self._sem:
                self.stats.throttle_wait_s += time.monotonic() - t0
                self.stats.requests[stage] += 1
                retry_after: float | None = None
                shard = self._pick()
                self._load[shard] += 1
                try:
                    # ``post`` with the request body as-is and the raw response: the same client,
                    # auth, status errors and timeouts as ``chat.completions.create`` without its
                    # per-call parameter transformation and response model construction (~2 ms
                    # of CPU per request together at high concurrency).
                    raw = await self._client(shard).post("/chat/completions", body=kwargs, cast_to=self._raw_cls)
                    try:
                        resp = raw.json()
                    except ValueError:
                        self.stats.request_errors["bad_response"] += 1
                        raise LLMCallError("bad_response") from None
                except RateLimitError as exc:
                    kind = "rate_limited"
                    retry_after = _retry_after(exc)
                except APITimeoutError:
                    kind = "timeout"
                except APIConnectionError:
                    kind = "outage"
                except APIStatusError as exc:
                    if exc.status_code >= 500:
                        kind = "http_5xx"
                        retry_after = _retry_after(exc)
                    else:
                        self.stats.request_errors[f"http_{exc.status_code}"] += 1
                        self.tokens.reconcile(est, 0)
                        raise LLMCallError(f"http_{exc.status_code}") from None
                else:
                    return self._done(stage, resp, prompt_est, est, t_start, attempt)
                finally:
                    if shard < len(self._load):
                        self._load[shard] -= 1
            # failed attempt
            self.stats.request_errors[kind] += 1
            self.tokens.reconcile(est, est // 4)
            if attempt >= self.s.max_retries:
                raise LLMCallError(kind)
            if retry_after is not None:
                delay = retry_after * random.uniform(1.0, 1.1)
                if kind == "rate_limited":
                    self._pause_until = max(self._pause_until, time.monotonic() + retry_after)
            else:
                delay = self._backoff(attempt)
            if deadline is not None and time.monotonic() + delay > deadline:
                raise LLMCallError(kind)
            self.stats.retries[kind] += 1
            attempt += 1
            await asyncio.sleep(delay)

    def _done(self, stage: str, resp: Any, prompt_est: int, est: int, t_start: float, attempt: int) -> Completion:
        try:
            choice = resp["choices"][0]
            text = choice["message"].get("content") or ""
            finish = choice.get("finish_reason")
            if not isinstance(text, str):
                raise TypeError
        except (AttributeError, IndexError, KeyError, TypeError):
            raise LLMCallError("bad_response") from None
        usage = resp.get("usage") or {}
        pt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
        ct = usage.get("completion_tokens") if isinstance(usage, dict) else None
        if not isinstance(pt, int) or not isinstance(ct, int):  # servers that don't report usage
            pt, ct = prompt_est, max(1, len(text) // 4)
        self.stats.add_usage(stage, pt, ct)
        self.tokens.reconcile(est, pt + ct)
        return Completion(text, pt, ct, finish, time.monotonic() - t_start, attempt + 1)


def _http_lib() -> Any:
    """The HTTP library the installed openai client is built on (httpx2, or httpx before)."""
    try:
        import httpx2 as _http
    except ImportError:  # pragma: no cover - older openai releases use httpx
        import httpx as _http
    return _http


def _retry_after(exc: Any) -> float | None:
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    ra = headers.get("retry-after")
    if not ra:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(ra)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError):
        return None
