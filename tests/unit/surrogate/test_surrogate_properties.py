"""Property tests (hypothesis) for the mapping rules."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plainsight.middleware.detection.base import Span
from plainsight.surrogate import SessionMapping, SurrogateReplacer, reidentify
from plainsight.surrogate.generators import value_norm
from plainsight.surrogate.names import fold, load_tables
from plainsight.surrogate.text import case_pattern

R = SurrogateReplacer("property-secret")
R_STRICT = SurrogateReplacer("property-secret", fuzzy_names=False)
_T = load_tables()
REAL_NAMES = sorted(set(_T.any_first()[:400] + _T.any_last()[:400]))

PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

random_token = st.text(alphabet="abcdefghijklmnopqrstuvwxyzáéíñöü", min_size=2, max_size=10)
name_token = st.one_of(st.sampled_from(REAL_NAMES), random_token)
cased = st.sampled_from([str.lower, str.upper, str.title])


def _turn(tokens: list[str]) -> tuple[str, list[Span]]:
    """A turn mentioning each token once: "t1, t2 and t3."""
    text, spans, pos = "", [], 0
    for i, t in enumerate(tokens):
        sep = "" if i == 0 else ", "
        text += sep
        spans.append(Span(len(text), len(text) + len(t), "NAME", "prop"))
        text += t
    return text + ".", spans


def _outputs(text: str, spans: list[Span], out: str, ents) -> list[tuple[str, str]]:
    return [(text[s.start : s.end], out[e.start : e.end]) for s, e in zip(spans, ents)]


@PROPS
@given(st.lists(st.lists(st.tuples(name_token, cased), min_size=1, max_size=6), min_size=1, max_size=8),
       st.text(alphabet="abc123", min_size=1, max_size=8))
def test_names_injective_consistent_and_never_a_seen_real_value(turns, sid):
    state = R.new_state(sid)
    seen: set[str] = set()
    first_surrogate: dict[str, str] = {}
    for turn in turns:
        tokens = [f(t) for t, f in turn]
        text, spans = _turn(tokens)
        before = set(state.names)
        seen |= {fold(t) for t in tokens}
        out, ents = R.replace(text, spans, state)
        for real, sur in _outputs(text, spans, out, ents):
            key = state.aliases.get(fold(real), fold(real))
            # consistency: one surrogate per (canonical) real token, whatever the case
            assert fold(sur) == fold(first_surrogate.setdefault(key, sur))
            # case preservation
            if case_pattern(real) in ("lower", "upper"):
                assert case_pattern(sur) == case_pattern(real) or len(sur) == 1
        for key in set(state.names) - before:
            # a new surrogate is never a real value seen so far (this turn included)
            assert fold(state.names[key]) not in seen
    # injectivity: distinct real tokens never share a surrogate
    surs = [fold(v) for v in state.names.values()]
    assert len(surs) == len(set(surs))


@PROPS
@given(st.lists(name_token, min_size=1, max_size=6), st.text(alphabet="xyz9", min_size=1, max_size=6))
def test_idempotent_and_stable_across_serialisation(tokens, sid):
    text, spans = _turn(tokens)
    state = R.new_state(sid)
    once, _ = R.replace(text, spans, state)
    assert R.replace(text, spans, state)[0] == once
    restored = SessionMapping.from_bytes(state.to_bytes())
    assert R.replace(text, spans, restored)[0] == once
    # deterministic: a fresh replacer and state give byte-identical output
    fresh = SurrogateReplacer("property-secret")
    assert fresh.replace(text, spans, fresh.new_state(sid))[0] == once


@PROPS
@given(st.lists(st.sampled_from(REAL_NAMES), min_size=1, max_size=5, unique_by=fold), cased)
def test_reidentify_restores_the_deidentified_text(names, case):
    tokens = [case(n) for n in names]
    text, spans = _turn(tokens)
    state = R_STRICT.new_state("round-trip")
    out, _ = R_STRICT.replace(text, spans, state)
    back, ents = reidentify(out, state)
    expected = text if case is not str.title else ", ".join(state.name_real[fold(t)] for t in tokens) + "."
    assert back == expected
    assert len(ents) == len(tokens)


ids = st.from_regex(r"[A-Z]{0,3}[-/]?[0-9]{3,8}(-[0-9]{2,4})?[a-z]{0,2}", fullmatch=True)


@PROPS
@given(st.lists(ids, min_size=1, max_size=12))
def test_ids_injective_and_shape_preserving(values):
    state = R.new_state("ids")
    by_norm: dict[str, str] = {}
    seen: set[str] = set()
    for v in values:
        n = value_norm("ID_NUM", v)
        new = n not in by_norm
        seen.add(n)
        out = R.surrogate_for(v, "ID_NUM", state)
        assert len(out) == len(v)
        assert re.sub(r"[0-9]", "9", re.sub(r"[A-Z]", "A", re.sub(r"[a-z]", "a", out))) == re.sub(
            r"[0-9]", "9", re.sub(r"[A-Z]", "A", re.sub(r"[a-z]", "a", v))
        )
        assert by_norm.setdefault(n, value_norm("ID_NUM", out)) == value_norm("ID_NUM", out)
        if new:
            assert value_norm("ID_NUM", out) not in seen  # never a real value seen so far
    surs = list(by_norm.values())
    assert len(surs) == len(set(surs))


phones = st.from_regex(r"(\+(1|44|49|61) )?\(?[2-9][0-9]{2}\)?[ .-]?[0-9]{3}[ .-]?[0-9]{4}", fullmatch=True)


@PROPS
@given(st.lists(phones, min_size=1, max_size=10))
def test_phones_keep_layout_and_are_injective(values):
    state = R.new_state("phones")
    seen: dict[str, str] = {}
    for v in values:
        out = R.surrogate_for(v, "PHONE", state)
        assert re.sub(r"\d", "9", out) == re.sub(r"\d", "9", v)
        n = value_norm("PHONE", v)
        assert seen.setdefault(n, value_norm("PHONE", out)) == value_norm("PHONE", out)
        assert value_norm("PHONE", out) != n
    assert len(set(seen.values())) == len(seen)
