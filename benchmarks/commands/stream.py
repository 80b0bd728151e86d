"""`plainsight bench stream`: turns/s and end-to-end latency through a broker and 1..K workers.

Drives N concurrent sessions of realistic chat (turns from the dev dialogue files, re-timed)
through the embedded broker (or ``--bootstrap-servers``) and K ``plainsight serve`` worker
processes in one consumer group, at a target rate; reports sustained turns/s, e2e latency
p50/p95/p99 (sent_at → output read back), worker CPU and RSS. ``--llm-latency-ms`` adds a
simulated OpenAI-compatible model with that latency. ``--workers 1,2,3`` runs each count.
"""

from __future__ import annotations

import argparse

#: third-party modules this benchmark needs (the `bench` extra)
REQUIRES = ("psutil",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--turns", type=int, default=10_000, help="turns to send (default 10000)")
    p.add_argument("--sessions", type=int, default=200, help="concurrent sessions (default 200)")
    p.add_argument("--rate", type=float, default=1000.0, help="target turns/s (0 = as fast as possible)")
    p.add_argument("--workers", default="1", help="worker processes, or a comma list to run each (e.g. 1,2,3)")
    p.add_argument("--partitions", type=int, default=6)
    p.add_argument("--llm-latency-ms", type=float, default=None, help="add a simulated LLM with this latency")
    p.add_argument("--llm-policy", choices=["wait", "async-refine"], default="wait")
    p.add_argument("--llm-gate", choices=["uncertain", "all"], default="uncertain")
    p.add_argument("--bootstrap-servers", metavar="HOST:PORT", help="use this Kafka instead of an embedded broker")
    p.add_argument("--data-dir", help="dev dialogue files (default ../shared/data/dev or PLAINSIGHT_DATA_DIR)")
    p.add_argument("--idle-sessions", type=int, default=10_000, help="also measure memory of N idle sessions (0 = skip)")
    p.add_argument("--mode", choices=["surrogate", "tag", "redact"], default=None, help="output mode")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    from plainsight.middleware.commands._common import run_async

    return run_async(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import json
    import os
    import platform
    import sys
    from pathlib import Path

    from plainsight.benchmarks.stream import idle_session_memory, load_dialogues, run_stream, write_bench_config
    from plainsight.consumers.broker import EmbeddedBroker

    counts = [int(x) for x in str(args.workers).split(",") if x.strip()]
    dialogues = load_dialogues(Path(args.data_dir) if args.data_dir else None)
    sim = None
    worker_args: list[str] = []
    if args.llm_latency_ms is not None:
        from plainsight.benchmarks.llm_simulator import FakeOpenAI

        sim = FakeOpenAI(latency_s=args.llm_latency_ms / 1e3).start()
        worker_args += ["--llm-base-url", sim.base_url, "--llm-policy", args.llm_policy, "--llm-gate", args.llm_gate,
                        "--llm-budget-ms", str(int(max(2500, args.llm_latency_ms * 4)))]
    if args.mode:
        worker_args += ["--mode", args.mode]
    runs = []
    try:
        for k in counts:
            broker = None
            if args.bootstrap_servers:
                bootstrap = args.bootstrap_servers
            else:
                broker = EmbeddedBroker()
                bootstrap = await broker.start()
            try:
                prefix = f"bench{os.getpid()}k{k}"
                cfg = write_bench_config({}, prefix, args.partitions, f"{prefix}-g")
                env_key = "OPENAI_API_KEY"
                if sim is not None and not os.environ.get(env_key):
                    os.environ[env_key] = "sk-simulated"
                res = await run_stream(bootstrap, cfg, args.turns, args.sessions, args.rate, k, dialogues,
                                       timeout_s=args.timeout, worker_args=worker_args,
                                       llm_latency_ms=args.llm_latency_ms,
                                       broker_pid=broker.pid if broker is not None else None)
                os.unlink(cfg)
                runs.append(res.summary())
                if not args.json:
                    s = runs[-1]
                    print(f"workers={k}: {s['turns_per_s']} turns/s  e2e p50 {s['e2e_p50_ms']} ms  "
                          f"p95 {s['e2e_p95_ms']} ms  p99 {s['e2e_p99_ms']} ms  cpu {s['worker_cpu_percent']}%  "
                          f"rss {s['worker_rss_mb']} MB  received {s['turns_received']}/{s['turns_sent']}",
                          file=sys.stderr)
                    print(f"  where p50/p99 go: inbound {s['inbound_p50_ms']}/{s['inbound_p99_ms']} ms (driver producer, "
                          f"broker, worker fetch)  in worker {s['in_worker_p50_ms']}/{s['in_worker_p99_ms']} ms  "
                          f"outbound {s['outbound_p50_ms']}/{s['outbound_p99_ms']} ms (worker producer, broker, driver "
                          f"fetch)  broker cpu {s['broker_cpu_percent']}%", file=sys.stderr)
            finally:
                if broker is not None:
                    await broker.stop()
    finally:
        if sim is not None:
            sim.stop()
    out = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "runs": runs,
    }
    first = runs[0] if runs else {}
    out["turns_per_s"] = first.get("turns_per_s")
    out["e2e_p99_ms"] = first.get("e2e_p99_ms")
    if args.idle_sessions:
        out["idle"] = idle_session_memory(args.idle_sessions)
    if args.json:
        print(json.dumps(out))
    else:
        print(json.dumps(out, indent=2))
    return 0 if all(r["missing"] == 0 for r in runs) else 1
