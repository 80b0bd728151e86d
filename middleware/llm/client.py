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
import random
import time
from dataclasses import dataclass
from typing import Any

from asyncio_throttle import Throttler

from .stats import LLMStats


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
        self.throttler = Throttler(rate_limit=settings.requests_per_minute, period=60.0, retry_interval=0.02)
        self.tokens = TokenBucket(settings.tokens_per_minute)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._sem: asyncio.Semaphore | None = None
        self._pause_until = 0.0

    # The httpx pool and the semaphore belong to one event loop; rebuild them if a caller
    # moves to another loop (e.g. repeated asyncio.run() in a CLI).
    def _bind(self) -> None:
        loop = asyncio.get_running_loop()
        if loop is self._loop and self._client is not None:
            return
        import httpx
        from openai import AsyncOpenAI, DefaultAsyncHttpxClient

        key = self.s.api_key.get_secret_value() if self.s.api_key is not None else None
        if not key:
            import os

            key = os.environ.get("OPENAI_API_KEY") or ("unused" if self.s.base_url else None)
        limits = httpx.Limits(max_connections=self.s.max_concurrency, max_keepalive_connections=self.s.max_concurrency)
        self._client = AsyncOpenAI(
            api_key=key,
            base_url=self.s.base_url,
            max_retries=0,
            timeout=self.s.timeout_s,
            http_client=DefaultAsyncHttpxClient(limits=limits, timeout=self.s.timeout_s),
        )
        self._sem = asyncio.Semaphore(self.s.max_concurrency)
        self._loop = loop

    async def aclose(self) -> None:
        if self._client is not None:
            try:
                await self._client.close()
            except Exception:  # pragma: no cover - best effort
                pass
            self._client = None
            self._loop = None

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
                try:
                    resp = await self._client.chat.completions.create(**kwargs)
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
            choice = resp.choices[0]
            text = choice.message.content or ""
            finish = choice.finish_reason
        except (AttributeError, IndexError, TypeError):
            raise LLMCallError("bad_response") from None
        usage = getattr(resp, "usage", None)
        pt = getattr(usage, "prompt_tokens", None)
        ct = getattr(usage, "completion_tokens", None)
        if not isinstance(pt, int) or not isinstance(ct, int):  # servers that don't report usage
            pt, ct = prompt_est, max(1, len(text) // 4)
        self.stats.add_usage(stage, pt, ct)
        self.tokens.reconcile(est, pt + ct)
        return Completion(text, pt, ct, finish, time.monotonic() - t_start, attempt + 1)


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
