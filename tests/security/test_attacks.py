"""Security regression tests (#28): each attack of the review, on the real embedded broker.

An attack "fails" when: a forged or copied reply restores nothing, an erased session never comes
back (racing turns, restarts), an oversized output does not wedge its partition, a rollback of
sealed state is refused, a bad state key does not stop loading, and the holder of the surrogate
secret cannot recompute a persisted session's surrogates.
"""

from __future__ import annotations

import asyncio
import json

from plainsight.consumers.worker import Worker
from plainsight.middleware.schemas import DeadLetter
from plainsight.surrogate.crypto import StateCipher
from tests.support import produce, read_topic, run_forget, start_worker, stop_worker, turn_bytes

PII = "Hi, I'm Maria Lopez, call me at 415-555-0134 or write to maria.lopez@gmail.com"
RAW = ("Maria", "Lopez", "415-555-0134", "4155550134", "maria.lopez@gmail.com")


def _dlq_reasons(recs) -> list[str]:
    return [DeadLetter.model_validate_json(r.value).reason for r in recs]


async def _wait(pred, timeout: float = 20.0) -> bool:
    for _ in range(int(timeout / 0.05)):
        if pred():
            return True
        await asyncio.sleep(0.05)
    return pred()


async def test_forged_and_copied_replies_restore_nothing(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        await produce(s, [("s1", turn_bytes("s1", 0, PII)), ("s2", turn_bytes("s2", 0, "I'm Tom Baker"))])
        outs = {json.loads(m.value)["session_id"]: json.loads(m.value) for m in await read_topic(s, s.topics.output, 2)}
        logs = {json.loads(m.value)["session_id"]: json.loads(m.value) for m in await read_topic(s, s.topics.logs, 2)}
        tutor = outs["s1"]
        assert tutor["reply_token"].startswith("rt1.")
        assert "reply_token" not in logs["s1"], "the logs topic carries no token"
        sur_text = logs["s1"]["text"]
        digits = "".join(c for c in sur_text.split("call me at ")[1].split(" or")[0] if c.isdigit())
        spaced = " ".join(digits)
        attacks = [
            # an analyst copies the logs text into a "reply" (no token)
            turn_bytes("s1", "a1", sur_text, role="tutor"),
            # a token of another session
            turn_bytes("s1", "a2", sur_text, role="tutor", reply_token=outs["s2"]["reply_token"]),
            # a made-up token
            turn_bytes("s1", "a3", sur_text, role="tutor", reply_token="rt1." + "00" * 16 + "." + "11" * 16),
        ]
        await produce(s, [("s1", a) for a in attacks], topic=s.topics.replies_in)
        dlq = await read_topic(s, s.topics.dlq, 3, idle=0.5)
        # the rightful reader: the tutor's reply with the token it was sent; spaced digits stay as they are
        legit = f"Thanks! {sur_text} Or dial {spaced}."
        await produce(s, [("s1", turn_bytes("s1", "r1", legit, role="tutor", reply_token=tutor["reply_token"]))],
                      topic=s.topics.replies_in)
        back = await read_topic(s, s.topics.replies_out, 1, idle=0.5)
    finally:
        await stop_worker(w, t)
    assert sorted(_dlq_reasons(dlq)) == ["reply_token"] * 3
    for r in dlq:
        assert b"Maria" not in r.value and b"415-555-0134" not in r.value and b"maria.lopez" not in r.value
    assert len(back) == 1, "only the reply with a valid token of its session was re-identified"
    restored = json.loads(back[0].value)["text"]
    assert "Maria Lopez" in restored and "maria.lopez@gmail.com" in restored and "415-555-0134" in restored
    assert f"Or dial {spaced}." in restored, "a spaced-out variant plainsight never wrote is not restored"


async def test_forget_race_erased_sessions_never_come_back(make_settings):
    s = make_settings()
    n = 20
    sids = [f"race-{i}" for i in range(n)]
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        await produce(s, [(sid, turn_bytes(sid, 0, f"my email is erased.{i}@example.com")) for i, sid in enumerate(sids)])
        await read_topic(s, s.topics.output, n)
        # a slow broker: the state writes of the racing turns land after forget's tombstones
        # (without the forget records this brings 20 of 20 erased sessions back)
        produce_all = w.producer.produce_all

        async def slow_state(session_id, outputs):
            if any(o[0] == s.topics.state and o[1] is not None for o in outputs):
                await asyncio.sleep(1.5)
            return await produce_all(session_id, outputs)

        w.producer.produce_all = slow_state
        # a turn of each session races its forget: it adds a value (so it writes state) right before it
        await produce(s, [(sid, turn_bytes(sid, 1, f"also erased.{i}@example.com, phone 212-555-01{i:02d}"))
                          for i, sid in enumerate(sids)])
        await asyncio.sleep(0.5)  # processed with the old mapping, their state writes on the way
        await run_forget(s, sids)
        assert await _wait(lambda: w.stats.forgotten >= n), "every forget record was handled"
    finally:
        await stop_worker(w, t)

    codec = w.state_store.codec

    async def leaked() -> int:
        recs = await read_topic(s, s.topics.state, 1, idle=1.0)
        latest = {}
        for r in recs:
            latest[r.key.decode()] = r.value
        back = 0
        for i, sid in enumerate(sids):
            blob = latest.get(sid)
            if blob is None:
                continue
            plain = codec.decode(sid, blob).replace_state.to_bytes()
            back += f"erased.{i}@example.com".encode() in plain
        return back

    assert await leaked() == 0, "0 of 20 erased sessions hold their erased values in the state topic"
    w2 = Worker(s, s.kafka.bootstrap_servers)
    t2 = await start_worker(w2)
    try:
        for i, sid in enumerate(sids):
            st = w2.pipeline.sessions.get(sid)  # loads the stored state, if any
            assert f"erased.{i}@example.com".encode() not in st.replace_state.to_bytes()
    finally:
        await stop_worker(w2, t2)
    assert await leaked() == 0, "... after a worker restart as well"


async def test_after_forget_refuse_dead_letters_a_late_turn(make_settings):
    s = make_settings(session={"after_forget": "refuse"})
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        await produce(s, [("gone", turn_bytes("gone", 0, "I'm Evangelina Ruiz"))])
        await read_topic(s, s.topics.output, 1)
        assert await run_forget(s, ["gone"]) == 0
        assert await _wait(lambda: w.stats.forgotten >= 1)
        await produce(s, [("gone", turn_bytes("gone", 1, "it's Evangelina again"))])
        dlq = await read_topic(s, s.topics.dlq, 1, idle=0.3)
    finally:
        await stop_worker(w, t)
    assert _dlq_reasons(dlq) == ["erased_session"]


async def test_forged_forget_record_is_dead_lettered(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        await produce(s, [("victim", turn_bytes("victim", 0, "I'm Evangelina Ruiz"))])
        await read_topic(s, s.topics.output, 1)
        from plainsight.consumers.kafka import make_producer

        p = make_producer(s, s.kafka.bootstrap_servers)
        await p.start()
        try:
            await p.send_and_wait(s.topics.input, b"{}", key=b"victim",
                                  headers=[("plainsight-control", b"forget"), ("plainsight-control-mac", b"00" * 32)])
        finally:
            await p.stop()
        dlq = await read_topic(s, s.topics.dlq, 1, idle=0.3)
    finally:
        await stop_worker(w, t)
    assert _dlq_reasons(dlq) == ["forged_control"]
    assert w.stats.forgotten == 0 and w.pipeline.sessions.peek("victim") is not None


async def test_oversized_output_is_dead_lettered_and_the_partition_moves_on(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        w.producer._producer._max_request_size = 3000  # the broker's limit, made small
        big = "The answer is forty two. " * 160  # ~4 KB: its outputs are over the limit
        await produce(s, [("k", turn_bytes("k", 0, big)), ("k", turn_bytes("k", 1, "still alive"))])
        dlq = await read_topic(s, s.topics.dlq, 1, idle=0.3)
        good = await read_topic(s, s.topics.output, 1, idle=1.0)
        await asyncio.sleep(0.5)
    finally:
        await stop_worker(w, t)
    assert _dlq_reasons(dlq) == ["produce_rejected"]
    assert [json.loads(m.value)["turn_id"] for m in good] == [1], "nothing re-sent; the next turn went through"
    assert w.stats.produce_errors <= 2, "a permanent error is not retried"


async def test_turn_past_its_deadline_is_dead_lettered_others_go_on(make_settings):
    s = make_settings(reverse={"turn_deadline_s": 0.001})
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        heavy = "I met Maria Lopez at 12 Oak Street. " * 200  # over HEAVY_TURN_CHARS: off the loop
        await produce(s, [("heavy", turn_bytes("heavy", 0, heavy)), ("light", turn_bytes("light", 0, "hello there"))])
        dlq = await read_topic(s, s.topics.dlq, 1, idle=0.3)
        good = await read_topic(s, s.topics.output, 1, idle=0.5)
    finally:
        await stop_worker(w, t)
    assert _dlq_reasons(dlq) == ["deadline"]
    assert [json.loads(m.value)["session_id"] for m in good] == ["light"]


async def test_state_rollback_and_bad_keys_are_refused_not_fatal(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        await produce(s, [("rb", turn_bytes("rb", 0, "I'm Evangelina Ruiz"))])
        await read_topic(s, s.topics.output, 1)
        await produce(s, [("rb", turn_bytes("rb", 1, "my email is evangelina.r@example.com"))])
        await read_topic(s, s.topics.output, 2)
    finally:
        await stop_worker(w, t)
    recs = [r for r in await read_topic(s, s.topics.state, 2, idle=0.5) if r.key == b"rb"]
    assert len(recs) == 2
    assert [StateCipher.version_of(r.value) for r in recs] == [1, 2]
    from plainsight.consumers.kafka import make_producer

    p = make_producer(s, s.kafka.bootstrap_servers)
    await p.start()
    try:  # an attacker replays the older sealed state, and a record with a key that is not UTF-8
        await p.send_and_wait(s.topics.state, recs[0].value, key=b"rb", partition=recs[0].partition)
        await p.send_and_wait(s.topics.state, b"junk", key=b"\xff\xfe", partition=recs[0].partition)
    finally:
        await p.stop()
    w2 = Worker(s, s.kafka.bootstrap_servers)
    t2 = await start_worker(w2)
    try:
        assert w2.state_store.rollbacks >= 1 and w2.state_store.bad_keys >= 1
        st = w2.pipeline.sessions.get("rb")
        assert b"evangelina.r@example.com" in st.replace_state.to_bytes(), "the newer state stands"
    finally:
        await stop_worker(w2, t2)


async def test_secret_holder_cannot_recompute_a_persisted_sessions_surrogates(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        await produce(s, [("sx", turn_bytes("sx", 0, PII))])
        out = json.loads((await read_topic(s, s.topics.output, 1))[0].value)["text"]
    finally:
        await stop_worker(w, t)
    from plainsight.surrogate.replacer import SurrogateReplacer

    # the secret's holder runs the same derivation with the secret and the session id ...
    offline = SurrogateReplacer.from_settings(s)
    st = offline.new_state("sx")
    guesses = [offline.surrogate_for(v, lbl, st) for v, lbl in
               (("Maria", "NAME"), ("415-555-0134", "PHONE"), ("maria.lopez@gmail.com", "EMAIL"))]
    # ... and gets none of them: they derive from the session's own key, only in its sealed state
    assert sum(g in out for g in guesses) == 0
    for r in RAW:
        assert r not in out


async def test_a_session_after_forget_starts_fresh_and_stays_consistent(make_settings):
    s = make_settings()
    w = Worker(s, s.kafka.bootstrap_servers)
    t = await start_worker(w)
    try:
        await produce(s, [("again", turn_bytes("again", 0, "my email is evangelina.ruiz@example.com"))])
        before = json.loads((await read_topic(s, s.topics.output, 1))[0].value)["text"]
        assert await run_forget(s, ["again"]) == 0
        assert await _wait(lambda: w.stats.forgotten >= 1)
        await produce(s, [("again", turn_bytes("again", 1, "my email is evangelina.ruiz@example.com"))])
        await read_topic(s, s.topics.output, 2)
        await asyncio.sleep(1.0)  # the tail reads the worker's own tombstone back meanwhile
        await produce(s, [("again", turn_bytes("again", 2, "my email is evangelina.ruiz@example.com"))])
        outs = {json.loads(m.value)["turn_id"]: json.loads(m.value)["text"] for m in await read_topic(s, s.topics.output, 3)}
    finally:
        await stop_worker(w, t)
    assert outs[1] == outs[2], "the fresh session keeps its surrogates"
    assert outs[1] != before, "... which are not the erased session's (a new key)"
