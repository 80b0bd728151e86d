"""``plainsight bench proxy --hostile N``: hostile requests against a running proxy, counted.

Kinds (round robin): malformed JSON, invalid UTF-8, wrong types, tool-call arguments nested past
the limit, megabyte strings, a 20 MB body, no session, an unknown path, a wrong client key,
image parts, a stream the client drops after its first line, and valid requests full of PII (the
leak scan's bait). Every request must be answered (a status, or for the dropped streams a clean
close): ``crashed`` counts 5xx answers and broken connections, ``unanswered`` timeouts; ``leaks``
counts raw values of the bait found upstream, in the proxy's log or in its metrics (the caller
adds the last two). Then the flood: one client hammers the proxy while another sends sequential
requests; the quiet client's p99 against its unloaded p99.
"""

from __future__ import annotations

import asyncio
import collections
import json
import time

from plainsight.middleware.evaluation import percentile

BAIT = "Hi, I'm Maria Okafor, mail maria.okafor@gmail.com or call (415) 293-0134"
RAW = ("Okafor", "maria.okafor", "293-0134")


def _kinds(n_mb: int = 1):
    big = "a" * (n_mb * 1024 * 1024)
    deep = "[" * 60 + "]" * 60
    msg = lambda c: {"model": "m", "messages": [{"role": "user", "content": c}]}  # noqa: E731
    return [
        ("bad_json", b'{"model": "m", "messages": [', {}),
        ("invalid_utf8", b'{"model":"m","messages":[{"role":"user","content":"\xff\xfe\xfa"}]}', {}),
        ("wrong_types", json.dumps({"model": "m", "messages": "hello"}).encode(), {}),
        ("wrong_types", json.dumps({"model": "m", "messages": [{"role": 5, "content": ["x"]}]}).encode(), {}),
        ("wrong_content", json.dumps(msg(12345)).encode(), {}),
        ("nested_tool_json", json.dumps({"model": "m", "messages": [{"role": "assistant", "content": None,
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": deep}}]}]}).encode(), {}),
        ("mb_string", json.dumps(msg(big)).encode(), {}),
        ("no_session", json.dumps(msg("hello")).encode(), {"x-plainsight-session": ""}),
        ("image_part", json.dumps({"model": "m", "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}]}).encode(), {}),
        ("bad_key", json.dumps(msg("hello")).encode(), {"authorization": "Bearer psk-wrong"}),
        ("bait", json.dumps(msg(BAIT)).encode(), {}),
        ("bait_stream", json.dumps({**msg(BAIT), "stream": True}).encode(), {}),
        ("disconnect_stream", json.dumps({**msg(BAIT + " " + "word " * 200), "stream": True}).encode(), {}),
    ]


async def run_hostile(base: str, n: int, key: str | None = None, concurrency: int = 8, big_body: bool = True) -> dict:
    import httpx

    kinds = _kinds()
    sent = answered = crashed = unanswered = 0
    by_reason: collections.Counter = collections.Counter()
    statuses: collections.Counter = collections.Counter()
    lock = asyncio.Lock()
    queue = list(range(n))
    auth = {"authorization": f"Bearer {key}"} if key else {}

    async def one(c: httpx.AsyncClient, i: int) -> None:
        nonlocal sent, answered, crashed, unanswered
        name, body, extra = kinds[i % len(kinds)]
        if i == 0 and big_body:
            name, body, extra = "body_20mb", b'{"model":"m","messages":[{"role":"user","content":"' + b"a" * (20 << 20) + b'"}]}', {}
        headers = {"content-type": "application/json", "x-plainsight-session": f"hostile-{i % 50}", **auth, **extra}
        if headers.get("x-plainsight-session") == "":
            headers.pop("x-plainsight-session")
        sent += 1
        try:
            if name == "disconnect_stream":
                async with c.stream("POST", base + "/v1/chat/completions", content=body, headers=headers) as r:
                    async for _ in r.aiter_lines():
                        break  # leave mid-stream
                answered += 1
                by_reason["disconnected_mid_stream"] += 1
                return
            if name == "bad_key":
                path = "/v1/chat/completions"
            elif i % 97 == 13:
                name, path = "unknown_path", "/v1/embeddings"
            else:
                path = "/v1/chat/completions"
            r = await c.post(base + path, content=body, headers=headers)
            answered += 1
            statuses[r.status_code] += 1
            if r.status_code >= 500:
                crashed += 1
            elif r.status_code >= 400:
                try:
                    by_reason[str(r.json()["error"]["code"])] += 1
                except Exception:
                    crashed += 1  # a refusal that is not an OpenAI error
            else:
                by_reason["ok_" + name] += 1
        except httpx.TimeoutException:
            unanswered += 1
        except httpx.HTTPError:
            crashed += 1

    async def worker() -> None:
        async with httpx.AsyncClient(timeout=60) as c:
            while True:
                async with lock:
                    if not queue:
                        return
                    i = queue.pop(0)
                await one(c, i)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    # still serving?
    async with httpx.AsyncClient(timeout=30) as c:
        r = await c.post(base + "/v1/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "ok?"}]},
                         headers={"x-plainsight-session": "after-hostile", **auth})
    return {"sent": sent, "answered": answered, "crashed": crashed, "unanswered": unanswered, "leaks": 0,
            "by_reason": dict(sorted(by_reason.items())), "statuses": {str(k): v for k, v in sorted(statuses.items())},
            "seconds": round(time.perf_counter() - t0, 1), "serving_after": r.status_code == 200}


async def run_flood(base: str, quiet_key: str, flood_key: str, requests: int = 300, flooders: int = 32) -> dict:
    """The quiet client's latency alone, then while the flood client hammers the proxy."""
    import httpx

    body = {"model": "m", "messages": [{"role": "user", "content": "Hi, I'm Sophie Martin. What is 3/4 of 12?"}]}

    async def quiet() -> list[float]:
        out = []
        async with httpx.AsyncClient(timeout=60) as c:
            for i in range(requests):
                t = time.perf_counter()
                r = await c.post(base + "/v1/chat/completions", json=body,
                                 headers={"authorization": f"Bearer {quiet_key}", "x-plainsight-session": f"q-{i % 10}"})
                if r.status_code == 200:
                    out.append((time.perf_counter() - t) * 1e3)
        return out

    alone = await quiet()
    stop = False
    flood_status: collections.Counter = collections.Counter()

    async def flood() -> None:
        async with httpx.AsyncClient(timeout=60) as c:
            i = 0
            while not stop:
                r = await c.post(base + "/v1/chat/completions", json=body,
                                 headers={"authorization": f"Bearer {flood_key}", "x-plainsight-session": f"f-{i % 10}"})
                flood_status[r.status_code] += 1
                i += 1

    tasks = [asyncio.create_task(flood()) for _ in range(flooders)]
    await asyncio.sleep(0.5)
    loaded = await quiet()
    stop = True
    await asyncio.gather(*tasks, return_exceptions=True)
    a99, l99 = percentile(alone, 99), percentile(loaded, 99)
    return {"quiet_p99_ms_alone": round(a99, 2), "quiet_p99_ms_flooded": round(l99, 2),
            "quiet_p50_ms_alone": round(percentile(alone, 50), 2), "quiet_p50_ms_flooded": round(percentile(loaded, 50), 2),
            "ratio_p99": round(l99 / a99, 2) if a99 else None,
            "flood_answers": {str(k): v for k, v in sorted(flood_status.items())}}


def scan(texts: list[str]) -> int:
    return sum(t.count(raw) for t in texts for raw in RAW)
