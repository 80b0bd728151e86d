"""Hidden in plain sight, end to end through the real broker: a 40-turn session keeps its
surrogates, and tutor replies written with surrogates come back with the real names."""

from __future__ import annotations

import asyncio
import json
import re

from plainsight.consumers.worker import Worker

from tests.support import produce, read_topic, turn_bytes

SESSION = "surr-40"


def forty_turns() -> list[tuple[str, str]]:
    base = [
        ("student", "hi, I'm Maria Lopez. my email is maria.lopez@gmail.com"),
        ("tutor", "Hi Maria! What are we working on?"),
        ("student", "fractions. my friend Tom said they are easy"),
        ("tutor", "Tom is right, Maria. What is 1/2 + 1/4?"),
        ("student", "3/4"),
        ("tutor", "Great job, MARIA. Maria's answer is correct."),
        ("student", "thanks! Lopez is my last name btw, call me at (415) 555-0142"),
        ("tutor", "Thanks maria. Let's try 2/3 + 1/6."),
    ]
    return [base[i % len(base)] for i in range(40)]


def _word_after(text: str, marker: str) -> str | None:
    m = re.search(re.escape(marker) + r"\s*([^\s!.,?']+)", text)
    return m.group(1) if m else None


async def test_forty_turn_session_consistent_and_replies_reidentified(make_settings):
    s = make_settings(output={"deid_mode": "surrogate", "logs_mode": "surrogate"})
    w = Worker(s, s.kafka.bootstrap_servers)
    await w.start()
    task = asyncio.create_task(w.run())
    await w.wait_ready(30)
    turns = forty_turns()
    try:
        await produce(s, [(SESSION, turn_bytes(SESSION, i, text, role=role)) for i, (role, text) in enumerate(turns)])
        outs = await read_topic(s, s.topics.output, len(turns), timeout=60)
        by_id = {json.loads(m.value)["turn_id"]: json.loads(m.value)["text"] for m in outs}
        assert set(by_id) == set(range(40))
        welcome = {_word_after(by_id[i], "Hi") for i in range(1, 40, 8)}
        assert len(welcome) == 1, f"the surrogate of Maria changed: {welcome}"
        maria = welcome.pop()
        assert maria and maria.lower() != "maria"
        tom = {_word_after(by_id[i], "my friend") for i in range(2, 40, 8)}
        assert len(tom) == 1 and tom != {"Tom"}
        tom = tom.pop()
        assert tom != maria, "two people never share a surrogate"
        for i in range(5, 40, 8):  # case and possessive follow the same surrogate
            assert f"Great job, {maria.upper()}." in by_id[i] and f"{maria}'s answer" in by_id[i]
        for i in range(7, 40, 8):
            assert by_id[i].startswith(f"Thanks {maria.lower()}.")
        full = _word_after(by_id[0], "I'm")
        assert full == maria, "the first name of the full-name surrogate is the first-name surrogate"
        last = _word_after(by_id[0], f"I'm {maria}")
        assert last and last != "Lopez"
        for i in range(6, 40, 8):
            assert by_id[i].startswith(f"thanks! {last} is my last name")
        raw = ["Maria", "maria", "MARIA", "Lopez", "maria.lopez@gmail.com", "555-0142", " Tom "]
        for text in by_id.values():
            for r in raw:
                assert r not in text
        emails = {re.search(r"\S+@\S+", by_id[i]).group(0) for i in range(0, 40, 8)}
        assert len(emails) == 1

        # the tutor LLM answers with surrogates (shortened, possessive, other case) ...
        reply = f"Well done {maria}! {maria}'s method works. {last.upper()}, tell {tom} too."
        token = json.loads(outs[-1].value)["reply_token"]  # the tutor answers the output it was sent
        await produce(s, [(SESSION, turn_bytes(SESSION, "r1", reply, role="tutor", reply_token=token))],
                      topic=s.topics.replies_in)
        back = await read_topic(s, s.topics.replies_out, 1, timeout=30)
    finally:
        w.request_stop()
        await asyncio.wait_for(task, 60)
        await w.stop()
    # ... and the student sees the real names again
    out = json.loads(back[0].value)
    assert out["mode"] == "reidentified" and out["turn_id"] == "r1"
    assert out["text"] == "Well done Maria! Maria's method works. LOPEZ, tell Tom too."
