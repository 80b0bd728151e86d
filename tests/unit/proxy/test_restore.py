"""The proxy's streaming restorer: for any chunking of a reply, the streamed result equals the
replacer's re-identification of the whole reply; only issued surrogates come back; hold-back is small."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from plainsight.proxy.restore import StreamRestorer, issued_mapping
from plainsight.surrogate.replacer import SurrogateReplacer
from tests.surrogate_helpers import parse

REPLACER = SurrogateReplacer("test-secret-for-the-proxy-restorer")


def _session():
    state = REPLACER.new_state("restore-1")
    ents = []
    for marked in ["hi I'm [[Maria Lopez|NAME]], my friend is [[Daniel Okafor|NAME]]",
                   "mail me at [[maria.lopez@gmail.com|EMAIL]] or call [[(415) 555-0134|PHONE]]",
                   "see [[https://example.org/u/maria_l|URL]] and [[@mlopez99|USERNAME]]"]:
        text, spans = parse(marked)
        out, es = REPLACER.replace(text, spans, state, "surrogate")
        ents += [(e.label, out[e.start:e.end]) for e in es]
    return state, ents


STATE, ENTS = _session()
MAPPING = issued_mapping(STATE, ENTS)


def _reply() -> str:
    s = {k: v for k, v in STATE.names.items()}
    first, last, friend = s["maria"], s["lopez"], s["daniel"]
    email = STATE.values["EMAIL"][next(iter(STATE.values["EMAIL"]))].surrogate
    phone = STATE.values["PHONE"][next(iter(STATE.values["PHONE"]))].surrogate
    url = STATE.values["URL"][next(iter(STATE.values["URL"]))].surrogate
    user = STATE.values["USERNAME"][next(iter(STATE.values["USERNAME"]))].surrogate
    return (f"Great work, {first}! {first.upper()}'s answer and {first.lower()}'s notes. {first} {last} and "
            f"{first[0]}. {last} met {friend}. Write to {email} or {phone} ({phone.replace('-', '.')}). "
            f"Links: {url} {url}/ and {user}. {first}{first} {last}x. End {first}")


REPLY = _reply()
WHOLE = REPLACER.reidentify(REPLY, MAPPING)[0]


def _stream(text: str, cuts: list[int]) -> tuple[str, StreamRestorer]:
    r = StreamRestorer(REPLACER, MAPPING)
    out = []
    prev = 0
    for c in sorted(set(cuts)) + [len(text)]:
        out.append(r.feed(text[prev:c]))
        prev = c
    out.append(r.flush())
    return "".join(out), r


def test_whole_reply_is_restored():
    assert "Maria" in WHOLE and "MARIA's" in WHOLE and "Daniel" in WHOLE and "maria.lopez@gmail.com" in WHOLE
    assert "M. Lopez" in WHOLE


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(REPLY) - 1), max_size=80))
def test_any_chunking_equals_the_whole(cuts):
    got, _ = _stream(REPLY, cuts)
    assert got == WHOLE


def test_one_to_three_char_chunks_and_hold_back():
    rng = random.Random(7)
    for _ in range(50):
        cuts, i = [], 0
        while i < len(REPLY):
            i += rng.randint(1, 3)
            cuts.append(i)
        got, r = _stream(REPLY, [c for c in cuts if c < len(REPLY)])
        assert got == WHOLE
        assert r.max_held <= max(len(f) for f in r._forms) + 2


def test_text_without_surrogates_is_never_held():
    r = StreamRestorer(REPLACER, MAPPING)
    text = "The derivative of x squared is 2x; keep going!"
    outs = [r.feed(ch) for ch in text]
    assert "".join(outs) + r.flush() == text
    assert r.max_held <= 2  # at most a letter that could begin a surrogate


def test_only_issued_surrogates_are_restored():
    # the request carried only Daniel's surrogate: Maria's surrogate stays as written
    only = issued_mapping(STATE, [("NAME", STATE.names["daniel"])])
    text = f"{STATE.names['maria']} and {STATE.names['daniel']}"
    got = REPLACER.reidentify(text, only)[0]
    assert got == f"{STATE.names['maria']} and Daniel"
