"""Issue #22 item 8: no exception escapes the pipeline for any text, and no detected value appears
in the output. A property test (hypothesis) over chat-like text: handles, lone symbols, digits,
mixed scripts, emoji, very long tokens, and the kinds of values plainsight replaces. Bounded (a few
hundred examples, no deadline) so it runs in CI; one session per example keeps examples apart, and
a second turn in the same session checks that the session's memory copes with the first."""

from __future__ import annotations

import functools

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from plainsight.middleware.config import load_settings
from plainsight.middleware.schemas import InputTurn
from plainsight.surrogate.pipeline import build_pipeline
from tests.support import secret_overrides

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

handles = st.builds(lambda p, b: p + b, st.sampled_from(["@", "@_", "u/", "#", ""]),
                    st.text(alphabet=_ALNUM + "._-", max_size=20))
symbols = st.sampled_from(list("@_#$%^&*()[]{}<>|\\/~`'\".,;:!?+=-–—…«»“”‘’•·§¶°€£¥©®™") + ["@_", "_@", "@.", ".@"])
digits = st.text(alphabet="0123456789 -+().", min_size=1, max_size=24)
scripts = st.sampled_from(["Мария", "Иванов", "李小龙", "大阪府大阪市北区梅田3-1-1", "محمد", "राहुल", "Ελένη",
                           "José", "Nguyễn", "Ōsaka", "Zoë", "Ærøskøbing", "İstanbul", "ß", "ﬁ", "Ⅻ", "𝔐𝔞𝔯𝔦𝔞"])
emoji = st.sampled_from(["😀", "👍🏽", "👨‍👩‍👧", "🇬🇧", "❤️", "✨", "\u200d", "\ufe0f", "🙂🙂🙂"])
values = st.sampled_from([
    "Maria", "Maria Lopez", "maria.lopez@gmail.com", "ana . silva @ outlook . com", "(415) 555-0134",
    "+44 20 7946 0958", "6 1 7 5 5 5 0 1 9 8", "https://example.org/u/tom_lee", "S-2024-11111",
    "12 Elm Street, Springfield 62704", "M14 5RT", "mr okafor", "Dr. Who", "T O M", "K-O-W-A-L-S-K-I",
    "hi im ash", "my name is", "my handle is", "call me", "email:", "id", "@", "_",
])
long_tokens = st.builds(lambda c, n: c * n, st.sampled_from(["a", "A1", "x_", "9", "@", "é", "😀", "Maria"]),
                        st.integers(min_value=50, max_value=2000))
free_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
token = st.one_of(handles, symbols, digits, scripts, emoji, values, long_tokens, free_text,
                  st.sampled_from(["hi", "its", "my", "friend", "is", "and", "at", "dot", "the", "Riemann sum"]))
separators = st.sampled_from([" ", " ", " ", "", "\n", "\t", ", ", ". ", "  ", "\u00a0"])
chat_text = st.builds(lambda toks, seps: "".join(t + s for t, s in zip(toks, seps)),
                      st.lists(token, min_size=1, max_size=12), st.lists(separators, min_size=12, max_size=12))

_counter = iter(range(10**9))


@functools.lru_cache(maxsize=None)
def _pipeline(mode: str):
    return build_pipeline(load_settings(None, **secret_overrides(), output={"deid_mode": mode, "logs_mode": mode}))


def _check(mode: str, texts: list[str]) -> None:
    p = _pipeline(mode)
    sid = f"prop-{next(_counter)}"
    try:
        for i, text in enumerate(texts):
            if not text.strip():
                continue
            res = p.process_sync(InputTurn(session_id=sid, turn_id=i, role="student", text=text, sent_at=0.0))
            out = res.deid.text
            assert res.logs.text == out or mode != "surrogate"
            for s in res.spans:
                value = text[s.start:s.end]
                # a short value may occur by chance (inside a surrogate or elsewhere): judged on longer ones,
                # and only where the input holds it nowhere outside the spans found (that is a detection
                # question, the leak tests' business, not this property's)
                if len(value.strip()) < 4:
                    continue
                outside = "".join(ch if not any(t.start <= k < t.end for t in res.spans) else "\x00"
                                  for k, ch in enumerate(text))
                if value in outside:
                    continue
                assert value not in out, (mode, s.label)
    finally:
        p.sessions.drop(sid)


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(chat_text, min_size=1, max_size=2))
@example(["my handle is @_"])
@example(["@_", "@_ @_ @__ @"])
@example(["my student id is S-2024-11111 and my friend's is S-2024-22222"])
def test_pipeline_never_raises_and_never_echoes_a_detected_value(texts):
    _check("surrogate", texts)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(chat_text, min_size=1, max_size=2))
@example(["my handle is @_"])
def test_pipeline_tag_and_redact_modes_never_raise(texts):
    _check("tag", texts)
    _check("redact", texts)
