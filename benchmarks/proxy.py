"""``plainsight bench proxy``: what the proxy adds, against a fake upstream with a fixed latency.

Processes: the fake upstream (benchmarks/proxy_upstream.py) and ``plainsight proxy`` (pinned to
one core, fast pass only, in-memory store) each in its own process; this process drives them
with httpx over loopback.

* **plain**: sequential requests of growing tutoring conversations (sessions of ``--turns``
  requests, the whole history each time, names / e-mails / phones in it). Added latency per
  request as the proxy reports it (``x-plainsight-overhead-ms``: before the upstream call plus
  re-identification after it) and as the client sees it (through the proxy minus straight to
  the upstream, alternated request by request), p50/p99.
* **stream**: the same, streamed (the upstream echoes in 1–3 character chunks): time-to-first-
  token overhead (client-side TTFT through the proxy minus straight to the upstream), and the
  characters held back per stream (the proxy's histogram).
* **throughput**: ``--concurrency`` clients on fresh sessions for ``--seconds``: requests/s with the
  proxy on one core.
* ``--hostile``: malformed, oversized and disconnecting requests (see :mod:`benchmarks.proxy_hostile`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time

from plainsight.middleware.evaluation import percentile

from .proxy_upstream import free_port, wait_port

FIRST = ["Maria Lopez", "Daniel Okafor", "Sophie Martin", "Liam Chen", "Aisha Rahman", "Jonas Weber"]
QUESTIONS = [
    "Hi, I'm {name}. Can you help me with fractions? My email is {email}.",
    "My teacher Mr. Brown said to simplify 6/8 first. {first} always forgets that.",
    "ok so it's 3/4? you can text me at (415) 555-01{nn} if it's wrong",
    "thanks! {first}'s sister will check it too",
    "what about 10/15?",
    "great, bye!",
]


def _turn(i: int, k: int) -> str:
    name = FIRST[i % len(FIRST)]
    first = name.split()[0]
    return QUESTIONS[k % len(QUESTIONS)].format(name=name, first=first, email=name.lower().replace(" ", ".") + "@gmail.com",
                                                nn=f"{i % 100:02d}")


def _start(args, cmd: list[str], env: dict, core: int | None):
    def pin():
        if core is not None and hasattr(os, "sched_setaffinity"):
            try:
                os.sched_setaffinity(0, {core})
            except OSError:
                pass

    import tempfile

    log = tempfile.TemporaryFile()  # not a pipe: a full pipe would stall the process
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log, preexec_fn=pin)
    proc.log = log  # type: ignore[attr-defined]
    return proc


async def _measure(args) -> dict:
    import tempfile

    import httpx

    from plainsight.proxy.clients import add_client

    from .proxy_hostile import run_flood, run_hostile, scan

    tmp = tempfile.mkdtemp(prefix="ps-bench-proxy-")
    clients = os.path.join(tmp, "clients.yaml")
    key = add_client(clients, "bench", max_concurrency=100_000, requests_per_minute=100_000_000)
    quiet = add_client(clients, "quiet", max_concurrency=64, requests_per_minute=100_000)
    flood = add_client(clients, "flood", max_concurrency=4, requests_per_minute=600)
    record = os.path.join(tmp, "upstream.jsonl")
    up_port, px_port = free_port(), free_port()
    env = dict(os.environ)
    env.pop("PLAINSIGHT_CONFIG", None)
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    up = _start(args, [sys.executable, "-m", "plainsight.benchmarks.proxy_upstream", "--port", str(up_port),
                       "--latency-ms", str(args.upstream_ms), "--record", record], env,
                cores[-1] if len(cores) > 1 else None)
    px = _start(args, [sys.executable, "-m", "plainsight", "proxy", "--upstream", f"http://127.0.0.1:{up_port}/v1",
                       "--port", str(px_port), "--store", "memory", "--clients-file", clients], env, cores[0])
    if len(cores) > 1 and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, set(cores[1:]))  # the driver keeps off the proxy's core
    auth = {"authorization": f"Bearer {key}"}
    try:
        wait_port(up_port, 30)
        wait_port(px_port, 120)
        direct = f"http://127.0.0.1:{up_port}/v1/chat/completions"
        proxied = f"http://127.0.0.1:{px_port}/v1/chat/completions"
        res: dict = {"upstream_latency_ms": args.upstream_ms, "proxy_core": cores[0]}
        async with httpx.AsyncClient(timeout=60, headers=auth) as c:
            # warm up both paths
            for i in range(20):
                body = {"model": "m", "messages": [{"role": "user", "content": _turn(i, 0)}]}
                await c.post(proxied, json=body, headers={"x-plainsight-session": f"warm-{i}"})
                await c.post(direct, json=body)
            import psutil

            proc = psutil.Process(px.pid)
            cpu0 = sum(proc.cpu_times()[:2])
            res["plain"] = await _plain(c, direct, proxied, args)
            # the proxy's own CPU per request (user + system), whatever else the machine runs
            res["plain"]["proxy_cpu_ms_per_request"] = round((sum(proc.cpu_times()[:2]) - cpu0) * 1e3 / args.requests, 2)
            cpu0 = sum(proc.cpu_times()[:2])
            res["stream"] = await _stream(c, direct, proxied, args)
            res["stream"]["proxy_cpu_ms_per_request"] = round((sum(proc.cpu_times()[:2]) - cpu0) * 1e3 / args.requests, 2)
            res["throughput"] = await _throughput(proxied, args, auth)
            m = (await c.get(f"http://127.0.0.1:{px_port}/metrics")).text
            res["held_chars"] = _held(m)
            if args.hostile:
                base = f"http://127.0.0.1:{px_port}"
                mark = os.path.getsize(record)  # the direct requests above carried raw values on purpose
                h = await run_hostile(base, args.hostile, key)
                h["proxy_alive"] = px.poll() is None
                m = (await c.get(f"http://127.0.0.1:{px_port}/metrics")).text
                with open(record, encoding="utf-8") as f:
                    f.seek(mark)
                    upstream_text = f.read()
                px.log.seek(0)
                h["leaks"] = scan([upstream_text, m, px.log.read().decode("utf-8", "replace")])
                res["hostile"] = h
                res["flood"] = await run_flood(base, quiet, flood)
        return res
    finally:
        for p in (px, up):
            p.terminate()
        for p in (px, up):
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        px.log.seek(0)
        log_tail = px.log.read().decode("utf-8", "replace")
        for raw in _RAW:
            if raw in log_tail:
                print("bench proxy: LEAK: a raw value in the proxy's log", file=sys.stderr)
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


_RAW = ("Okafor", "maria.okafor", "293-0134")


def _stats(xs: list[float]) -> dict:
    return {"p50": round(percentile(xs, 50), 3), "p99": round(percentile(xs, 99), 3), "n": len(xs)}


async def _plain(c, direct: str, proxied: str, args) -> dict:
    server, client_side = [], []
    for i in range(args.requests):
        sess, k = divmod(i, args.turns)
        msgs = []
        for j in range(k + 1):
            msgs.append({"role": "user", "content": _turn(sess, j)})
            if j < k:
                msgs.append({"role": "assistant", "content": "You said: " + _turn(sess, j)})
        body = {"model": "m", "messages": msgs}
        t = time.perf_counter()
        r = await c.post(proxied, json=body, headers={"x-plainsight-session": f"plain-{sess}"})
        tp = time.perf_counter() - t
        t = time.perf_counter()
        await c.post(direct, json=body)
        td = time.perf_counter() - t
        server.append(float(r.headers.get("x-plainsight-overhead-ms", "nan")))
        client_side.append((tp - td) * 1e3)
    return {"added_ms_server": _stats(server), "added_ms_client": _stats(client_side)}


async def _ttft(c, url: str, body: dict, headers: dict) -> tuple[float, str]:
    t = time.perf_counter()
    first = None
    text = []
    async with c.stream("POST", url, json=body, headers=headers) as r:
        async for line in r.aiter_lines():
            if not line.startswith("data:") or "[DONE]" in line:
                continue
            d = json.loads(line[5:])
            for ch in d.get("choices") or []:
                piece = (ch.get("delta") or {}).get("content")
                if piece:
                    if first is None:
                        first = time.perf_counter() - t
                    text.append(piece)
    return (first or 0.0) * 1e3, "".join(text)


async def _stream(c, direct: str, proxied: str, args) -> dict:
    over = []
    wrong = 0
    for i in range(args.requests):
        sess, k = divmod(i, args.turns)
        msgs = [{"role": "user", "content": _turn(sess, j)} for j in range(k + 1)]
        body = {"model": "m", "messages": msgs, "stream": True}
        tp, text = await _ttft(c, proxied, body, {"x-plainsight-session": f"stream-{sess}"})
        td, _ = await _ttft(c, direct, body, {})
        over.append(tp - td)
        if text != "You said: " + msgs[-1]["content"]:
            wrong += 1
    return {"ttft_overhead_ms": _stats(over), "replies_not_restored_exactly": wrong}


async def _throughput(proxied: str, args, auth: dict) -> dict:
    import httpx

    done = 0
    errors = 0
    stop = time.perf_counter() + args.seconds

    async def worker(w: int) -> None:
        nonlocal done, errors
        async with httpx.AsyncClient(timeout=60, headers=auth) as c:
            i = 0
            while time.perf_counter() < stop:
                body = {"model": "m", "messages": [{"role": "user", "content": _turn(w * 1000 + i, i % 4)}]}
                r = await c.post(proxied, json=body, headers={"x-plainsight-session": f"tp-{w}-{i // 4}"})
                if r.status_code == 200:
                    done += 1
                else:
                    errors += 1
                i += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(worker(w) for w in range(args.concurrency)))
    dt = time.perf_counter() - t0
    return {"requests_per_s": round(done / dt, 1), "concurrency": args.concurrency, "errors": errors}


def _held(metrics: str) -> dict:
    out = {}
    for name in ("sum", "count"):
        m = re.search(rf"^plainsight_proxy_held_chars_{name} ([0-9.e+]+)$", metrics, re.M)
        out[name] = float(m.group(1)) if m else 0.0
    buckets = {float(b) if b != "+Inf" else float("inf"): float(v) for b, v in
               re.findall(r'^plainsight_proxy_held_chars_bucket\{le="([^"]+)"\} ([0-9.e+]+)$', metrics, re.M)}
    total = out["count"] or 1
    p99 = next((b for b, v in sorted(buckets.items()) if v >= 0.99 * total), 0.0)
    return {"streams": int(out["count"]), "mean_max_held": round(out["sum"] / total, 2), "p99_max_held_le": p99}


def run_bench(args) -> dict:
    return asyncio.run(_measure(args))
