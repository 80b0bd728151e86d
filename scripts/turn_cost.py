"""Per-turn CPU of the worker's work, in-process (no Kafka): ``Pipeline.process_sync`` plus the
session-state record the worker produces with each turn, over the turns ``plainsight bench stream``
sends (same dev files, 200 sessions, same order). CPU time (``time.thread_time``) per turn, the
minimum over ``--runs`` fresh pipelines: robust to other load on a shared machine, unlike the
end-to-end figures of ``bench stream``. Used for issue #12's "worker per-turn cost" comparison.

Runs on older trees too (before the architecture refactor), to compare like with like::

    export PLAINSIGHT_DATA_DIR=/work/shared/data/dev
    python scripts/turn_cost.py --turns 10000 --runs 3
    git worktree add /tmp/base 779fc8a
    (cd /tmp/base && PYTHONPATH=/tmp/base python /work/main/scripts/turn_cost.py --turns 10000 --runs 3)
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--turns", type=int, default=10_000)
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    try:  # after the architecture refactor
        from plainsight.benchmarks.stream import bench_secret_env, load_dialogues, plan_turns
        from plainsight.surrogate.pipeline import build_pipeline

        os.environ.update(bench_secret_env())
    except ImportError:  # older trees
        from plainsight.consumers.bench_stream import load_dialogues, plan_turns
        from plainsight.middleware.pipeline import Pipeline as build_pipeline
    from plainsight.consumers.state_store import KafkaStateStore
    from plainsight.middleware.config import load_settings
    from plainsight.middleware.schemas import InputTurn
    from plainsight.middleware.state_codec import SessionCodec
    from plainsight.surrogate.crypto import StateCipher

    settings = load_settings()
    plan = plan_turns(load_dialogues(), a.turns, a.sessions, "p")
    best: list[float] | None = None
    totals = []
    for _ in range(a.runs):
        pipe = build_pipeline(settings)
        pipe.warm_up()
        store = KafkaStateStore(settings, "127.0.0.1:1", SessionCodec(pipe, StateCipher.from_settings(settings)))
        try:
            store.attach(pipe.sessions)
        except AttributeError:  # older trees attach the pipeline
            store.attach(pipe)
        gc.collect()
        gc.freeze()  # as the worker does after warm-up
        lat = []
        for sid, tid, role, text in plan:
            t0 = time.thread_time()
            pipe.process_sync(InputTurn(session_id=sid, turn_id=tid, role=role, text=text, sent_at=0.0))
            state = pipe.sessions.peek(sid)
            store.state_record(state)
            state.dirty = False  # as if produced and acknowledged
            lat.append(time.thread_time() - t0)
        totals.append(sum(lat))
        best = lat if best is None else [min(x, y) for x, y in zip(best, lat)]
        gc.unfreeze()
        del pipe, store
        gc.collect()
    xs = sorted(best or [0.0])

    def pct(q: float) -> float:
        return round(xs[min(len(xs) - 1, int(q / 100 * len(xs)))] * 1e3, 3)

    print(json.dumps({"turns": len(plan), "runs": a.runs, "run_totals_s": [round(t, 2) for t in totals],
                      "mean_us": round(sum(xs) / len(xs) * 1e6, 1), "p50_ms": pct(50), "p90_ms": pct(90),
                      "p99_ms": pct(99), "p999_ms": pct(99.9), "max_ms": round(xs[-1] * 1e3, 2)}))


if __name__ == "__main__":
    main()
