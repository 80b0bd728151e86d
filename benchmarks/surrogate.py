"""Micro-benchmark of the surrogate core: ``python -m benchmarks.surrogate [--sessions N]``.

Prints (not a test): memory per active session holding 10 entities (tracemalloc and the
mapping's own ``approx_size()``), the cost of a mapping lookup (hit and miss), of ``replace()``
for a typical turn, of ``reidentify()``, and of sealing/opening the encrypted state.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc

from plainsight.middleware.detection.base import Span

from plainsight.surrogate.crypto import StateCipher, derive_dev_key
from plainsight.surrogate.names import load_tables
from plainsight.surrogate.replacer import SurrogateReplacer
from plainsight.surrogate.state import SessionMapping

#: One session's 10 entities: 6 name tokens (3 people) + e-mail, phone, username, id.
TURNS = [
    ("Hi, I'm Maria Lopez and my brother is Daniel.", [(8, 19, "NAME"), (38, 44, "NAME")]),
    ("Mr. Chen says hi. Email me at maria.lopez@gmail.com", [(0, 8, "NAME"), (30, 51, "EMAIL")]),
    ("Call (415) 555-2671, user maria_lopez07, id S-20231187, Priya Natarajan too",
     [(5, 19, "PHONE"), (26, 39, "USERNAME"), (44, 54, "ID_NUM"), (56, 71, "NAME")]),
]
TYPICAL = ("Thanks Maria! Can Daniel and Mr. Chen check question 3?", [(7, 12, "NAME"), (18, 24, "NAME"), (29, 37, "NAME")])


def _spans(items):
    return [Span(a, b, label, "bench") for a, b, label in items]


def _fill(r: SurrogateReplacer, sid: str) -> SessionMapping:
    st = r.new_state(sid)
    for text, items in TURNS:
        r.replace(text, _spans(items), st, "surrogate")
    return st


def _timeit(fn, n: int) -> float:
    """Median µs per call over 5 rounds of ``n`` calls."""
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(rounds)


def run(sessions: int = 2000) -> dict[str, float]:
    figures: dict[str, float] = {}
    t0 = time.perf_counter()
    load_tables()
    figures["tables_load_ms"] = (time.perf_counter() - t0) * 1e3
    r = SurrogateReplacer("bench-secret")
    _fill(r, "warm-up")  # Faker-free path, regexes compiled

    # memory per active session
    gc.collect()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    states = [_fill(r, f"session-{i}") for i in range(sessions)]
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    traced = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    figures["entities_per_session"] = states[0].entries
    figures["memory_per_session_bytes_tracemalloc"] = traced / sessions
    figures["memory_per_session_bytes_approx_size"] = statistics.mean(s.approx_size() for s in states[:200])
    figures["state_bytes_plain"] = len(states[0].to_bytes())
    cipher = StateCipher({"k": derive_dev_key(b"bench")}, "k")
    blob = cipher.seal(states[0])
    figures["state_bytes_encrypted"] = len(blob)

    # lookups (the mapping already holds the value) and misses (a new value)
    st = states[0]
    figures["lookup_name_hit_us"] = _timeit(lambda: r.surrogate_for("Maria", "NAME", st), 20000)
    figures["lookup_full_name_hit_us"] = _timeit(lambda: r.surrogate_for("Maria Lopez", "NAME", st), 20000)
    figures["lookup_email_hit_us"] = _timeit(lambda: r.surrogate_for("maria.lopez@gmail.com", "EMAIL", st), 20000)
    figures["lookup_raw_dict_us"] = _timeit(lambda: st.name_surrogate("Maria"), 50000)
    counter = iter(range(10**9))
    figures["lookup_name_miss_us"] = _timeit(
        lambda: r.surrogate_for("Zorblat", "NAME", r.new_state(f"m{next(counter)}")), 2000
    )
    figures["lookup_phone_miss_us"] = _timeit(
        lambda: r.surrogate_for("(415) 555-2671", "PHONE", r.new_state(f"p{next(counter)}")), 2000
    )

    # replace(): a typical turn on an established session, and a session's first turn
    text, items = TYPICAL
    spans = _spans(items)
    figures["replace_typical_turn_us"] = _timeit(lambda: r.replace(text, spans, st, "surrogate"), 5000)
    t1, i1 = TURNS[0]
    s1 = _spans(i1)
    figures["replace_first_turn_new_session_us"] = _timeit(
        lambda: r.replace(t1, s1, r.new_state(f"f{next(counter)}"), "surrogate"), 1000
    )
    figures["replace_tag_mode_us"] = _timeit(lambda: r.replace(text, spans, st, "tag"), 5000)

    # reverse mapping of a tutor reply
    reply = r.replace(text, spans, st, "surrogate")[0] + " Write to " + st.values["EMAIL"]["maria.lopez@gmail.com"].surrogate
    figures["reidentify_reply_us"] = _timeit(lambda: r.reidentify(reply, st), 5000)

    def rebuilt():
        st._generation += 1  # as after a student turn that added a value: matcher recompiled
        return r.reidentify(reply, st)

    figures["reidentify_after_mapping_change_us"] = _timeit(rebuilt, 500)

    # encrypted state
    figures["seal_us"] = _timeit(lambda: cipher.seal(st), 2000)
    figures["open_us"] = _timeit(lambda: cipher.open(blob, st.session_id), 2000)
    return figures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sessions", type=int, default=2000, help="sessions created for the memory figure")
    args = p.parse_args(argv)
    figures = run(args.sessions)
    width = max(len(k) for k in figures)
    for k, v in figures.items():
        print(f"{k:<{width}}  {v:>12,.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
