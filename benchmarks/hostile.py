"""Malformed and hostile inputs for fault injection (hypothesis strategies).

Used by the test suite (a small corpus) and by `plainsight bench faults` (10,000 inputs):
broken JSON, huge payloads, binary, deep nesting, wrong types, unicode edge cases, and valid
turns with nasty text. Each input must end up either processed or in the dead-letter topic.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

UNICODE_EDGES = [
    "\u202eevil\u202c",  # right-to-left override
    "e\u0301\u0301\u0301",  # stacked combining marks
    "\u200b\u200c\u200d\ufeff",  # zero-width characters, BOM
    "👩‍👩‍👧‍👦🏳️‍🌈",  # ZWJ sequences
    "\x00\x01\x1f\x7f",  # control characters
    "ｍａｒｉａ＠ｅｘａｍｐｌｅ．ｃｏｍ",  # full-width
    "Ǆǅǆ ǈ ﬁ ß ẞ İ ı",  # case-mapping oddities
    "\U0010ffff\U000e0001",  # edges of the code space
    "ℌ𝔢𝔩𝔩𝔬 𝕄𝕒𝕣𝕚𝕒",  # mathematical letters
    "مرحبا يا ماريا",  # RTL script
    "Привет, Мария!",
    "こんにちは、マリアさん",
    "a" * 5000,
    "@" * 3000 + ".com",
    "1-" * 2000,
    "http://" + "a." * 1500 + "com",
    "my name is " + "Maria " * 800,
]


def _turn(text_value, **over):
    obj = {"session_id": "hostile", "turn_id": 1, "role": "student", "text": text_value, "sent_at": 1_700_000_000}
    obj.update(over)
    return obj


def hostile_payloads(max_bytes: int = 65536) -> st.SearchStrategy[bytes]:
    texts = st.one_of(
        st.text(min_size=1, max_size=200),
        st.sampled_from(UNICODE_EDGES),
        st.lists(st.sampled_from(UNICODE_EDGES + ["Maria", "maria.lopez@gmail.com", "(415) 555-0142", " ", "."]),
                 min_size=1, max_size=12).map("".join),
    )
    valid = st.builds(lambda t, sid, tid: json.dumps(_turn(t, session_id=sid, turn_id=tid)).encode("utf-8", "surrogatepass"),
                      texts, st.text(min_size=1, max_size=30), st.one_of(st.integers(), st.text(max_size=20)))
    broken = valid.flatmap(lambda b: st.integers(0, max(0, len(b) - 1)).map(lambda i: b[:i]))
    binary = st.binary(min_size=0, max_size=512)
    huge = st.integers(max_bytes + 1, max_bytes * 4).map(lambda n: json.dumps(_turn("x" * n)).encode())
    near_limit = st.just(json.dumps(_turn("word " * ((max_bytes - 200) // 5))).encode())
    deep = st.integers(50, 5000).map(lambda d: ('{"session_id":"h","turn_id":1,"role":"student","text":"hi",'
                                                '"sent_at":1,"metadata":' + "[" * d + "]" * d + "}").encode())
    any_json = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
        max_leaves=20,
    )
    field = st.sampled_from(["session_id", "turn_id", "role", "text", "sent_at", "metadata"])
    wrong_types = st.builds(lambda f, v: json.dumps(_turn("hello", **{f: v})).encode(), field, any_json)
    missing = st.builds(lambda f: json.dumps({k: v for k, v in _turn("hello").items() if k != f}).encode(), field)
    not_object = any_json.map(lambda v: json.dumps(v).encode())
    lone_surrogate = st.just(b'{"session_id":"h","turn_id":1,"role":"student","text":"hi \\udc80","sent_at":1}')
    invalid_utf8 = st.binary(min_size=1, max_size=40).map(
        lambda b: b'{"session_id":"h","turn_id":1,"role":"student","text":"' + b"\xff\xfe" + b + b'","sent_at":1}')
    return st.one_of(valid, broken, binary, huge, near_limit, deep, wrong_types, missing, not_object,
                     lone_surrogate, invalid_utf8)


def generate(n: int, max_bytes: int = 65536, seed: int = 0) -> list[bytes]:
    """``n`` hostile payloads, deterministic for a given ``seed``."""
    out: list[bytes] = []

    @settings(max_examples=n, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[__import__("hypothesis").Phase.generate])
    @given(hostile_payloads(max_bytes))
    def collect(p: bytes) -> None:
        if len(out) < n:
            out.append(p)

    collect()
    i = 0
    while len(out) < n:  # hypothesis may stop early on a small search space
        out.append(out[i % max(1, len(out))] if out else b"{}")
        i += 1
    return out[:n]
