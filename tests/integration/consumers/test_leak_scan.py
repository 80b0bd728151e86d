"""The leak scan finds planted leaks, and finds none in what the worker really wrote."""

from __future__ import annotations

import asyncio
import json
import logging

from plainsight.benchmarks.leak_scan import ValueSet, scan
from plainsight.consumers.worker import Worker
from plainsight.middleware.metrics import Metrics
from plainsight.surrogate.crypto import MAGIC

from tests.support import produce, read_topic, turn_bytes

CANARIES = [
    ("c1", "Hi, my name is Zorvath Quellin and my email is zorvath.quellin@canary-mail.org",
     ["Zorvath", "Quellin", "zorvath.quellin@canary-mail.org"]),
    ("c2", "call me at +1 (415) 555-0199, I'm Ottoline Brackwater", ["555-0199", "Ottoline", "Brackwater"]),
    ("c3", "my student id is S99887766 and my name is Ferdinanda Okoro", ["S99887766", "Ferdinanda", "Okoro"]),
]


def _values():
    vs = ValueSet()
    for sid, _t, vals in CANARIES:
        for v in vals:
            vs.add(sid, v, "canary")
    return vs


def test_scan_finds_planted_leaks_and_ignores_clean_text():
    vs = _values()
    vs.add("g1", "Maria", "gold")
    clean = [json.dumps({"session_id": "c1", "text": "Hi, my name is Lucia Benn", "role": "student"}).encode()]
    assert scan(vs, outputs=clean, logs=["worker started"], metrics=["plainsight_turns_total 3"]).leaks == 0
    # a canary in an output, a gold name in a log line, plaintext in the state topic, a DLQ echo
    assert scan(vs, outputs=[json.dumps({"session_id": "c1", "text": "hi Zorvath"}).encode()]).leaks == 1
    assert scan(vs, logs=["processing failed for Maria"]).leaks == 1
    assert scan(vs, state=[b"\x01\x02 zorvath.quellin@canary-mail.org"]).leaks >= 1
    assert scan(vs, dlq=[b'{"detail": "text was Ottoline"}']).leaks == 1
    # word boundaries for names: 'Okoro' inside another word is not a hit
    assert scan(vs, logs=["okoroshi"]).leaks == 0
    # a gold value surviving in its own session's output is a detector miss, not a system leak
    rep = scan(vs, outputs=[json.dumps({"session_id": "g1", "text": "thanks Maria"}).encode()])
    assert rep.leaks == 0 and rep.residual_gold_values == 1


async def test_worker_writes_no_leaks_and_scan_catches_a_planted_one(make_settings, caplog):
    caplog.set_level(logging.INFO)
    s = make_settings()
    metrics = Metrics.from_settings(s)
    w = Worker(s, s.kafka.bootstrap_servers, metrics=metrics)
    await w.start()
    task = asyncio.create_task(w.run())
    await w.wait_ready(30)
    bad = [b'{"session_id": "c1", "text": "Zorvath Quellin', b'\xff Ottoline']
    try:
        await produce(s, [(sid, turn_bytes(sid, 0, text)) for sid, text, _v in CANARIES] + [("c1", b) for b in bad])
        outs = await read_topic(s, s.topics.output, len(CANARIES))
        logs_topic = await read_topic(s, s.topics.logs, len(CANARIES))
        dlq = await read_topic(s, s.topics.dlq, len(bad))
        await asyncio.sleep(0.5)
        state = await read_topic(s, s.topics.state, 1, idle=0.3)
    finally:
        w.request_stop()
        await asyncio.wait_for(task, 60)
        await w.stop()
    exposition = metrics.exposition()[0].decode()
    log_text = "\n".join(r.getMessage() for r in caplog.records
                         if r.name.startswith(("plainsight.middleware", "plainsight.consumers", "plainsight.surrogate")))
    assert log_text, "the worker logged nothing the scan could read"
    rep = scan(_values(), outputs=[m.value for m in outs + logs_topic], dlq=[m.value for m in dlq],
               state=[m.value for m in state], logs=[log_text], metrics=[exposition], state_magic=MAGIC)
    assert rep.scanned["output"] == 2 * len(CANARIES) and rep.scanned["dlq"] == len(bad) and rep.scanned["state"] >= 1
    assert rep.leaks == 0, rep.summary()
    planted = rep.scanned
    rep2 = scan(_values(), outputs=[m.value for m in outs] + [json.dumps({"session_id": "c2", "text": "Ottoline!"}).encode()])
    assert rep2.leaks == 1 and planted


def test_state_records_must_be_sealed():
    vs = _values()
    assert scan(vs, state=[b"PSM\x01{}"], state_magic=b"PSE").leaks == 1
    assert scan(vs, state=[b"PSE\x01\x02random bytes", None], state_magic=b"PSE").leaks == 0
