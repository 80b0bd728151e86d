"""The stored session state: each part's class says how it is stored (middleware.codable), the codec
only calls that interface; documents written before the interface existed stay readable."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from plainsight.middleware.codable import BinaryStateCodable, NotCodableError, StateCodable
from plainsight.middleware.config import Settings
from plainsight.middleware.detection.base import Detector, Span, TurnContext
from plainsight.middleware.detection.memory import SessionMemory
from plainsight.middleware.pipeline import Pipeline
from plainsight.middleware.replace import TagReplacer, TagState
from plainsight.middleware.schemas import EntityOut, InputTurn
from plainsight.middleware.state_codec import SessionCodec, StateDecodeError

SECRET_VALUE = "Zorblat Quenby"


def _turn(sid: str, i: int, text: str) -> InputTurn:
    return InputTurn(session_id=sid, turn_id=i, role="student", text=text, sent_at=0.0)


class ZorblatDetector(Detector):
    """Finds the made-up name "Zorblat Quenby"; remembers how often it saw it."""

    name = "zorblat"

    def __init__(self, memory_cls=SessionMemory) -> None:
        self.memory_cls = memory_cls

    def new_memory(self):
        return self.memory_cls()

    def detect(self, text: str, ctx: TurnContext, memory) -> list[Span]:
        i = text.find(SECRET_VALUE)
        return [] if i < 0 else [Span(i, i + len(SECRET_VALUE), "NAME", "zorblat")]


@dataclass(slots=True)
class NumberedState(StateCodable):
    """A custom replace state: value -> number, stored in its own plain format."""

    numbers: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"rows": sorted([v, n] for v, n in self.numbers.items())}

    @classmethod
    def from_dict(cls, data) -> "NumberedState":
        return cls({v: int(n) for v, n in data["rows"]})


class NumberedReplacer:
    """Replaces each value with "PERSON-<n>", numbered per session (state: :class:`NumberedState`)."""

    state_cls = NumberedState

    def new_state(self, session_id: str):
        return self.state_cls()

    def replace(self, text, spans, state, mode):
        out, ents, pos = [], [], 0
        for s in sorted(spans, key=lambda s: s.start):
            n = state.numbers.setdefault(text[s.start:s.end], len(state.numbers) + 1)
            out.append(text[pos:s.start])
            value = f"PERSON-{n}"
            start = sum(map(len, out))
            out.append(value)
            ents.append(EntityOut(start=start, end=start + len(value), label=s.label, source=s.source))
            pos = s.end
        out.append(text[pos:])
        return "".join(out), ents

    def reidentify(self, text, state):
        return text, []


class PlainState:
    """A replace state that does not implement StateCodable (it would be guessed at before)."""

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}

    def to_dict(self) -> dict:  # same method name, no interface: not enough any more
        return {"numbers": self.numbers}


class PlainReplacer(NumberedReplacer):
    state_cls = PlainState


@dataclass(slots=True)
class PlainMemory:
    seen: list[str] = field(default_factory=list)


def _pipeline(replacer, detector=None) -> Pipeline:
    return Pipeline(Settings(), detector=detector or ZorblatDetector(), replacer=replacer)


def test_a_custom_replace_state_round_trips_through_the_codec():
    p = _pipeline(NumberedReplacer())
    first = p.process_sync(_turn("s1", 0, f"hi, I am {SECRET_VALUE}"))
    assert first.deid.text == "hi, I am PERSON-1"
    codec = SessionCodec(p, cipher=None)
    raw = codec.to_plaintext(p.sessions.peek("s1"))
    assert b'"replace":{"d":{"rows":[["Zorblat Quenby",1]]}}' in raw  # its own to_dict, stored as plain data
    restored = codec.from_plaintext("s1", raw)
    assert isinstance(restored.replace_state, NumberedState)
    assert restored.replace_state.numbers == {SECRET_VALUE: 1}
    assert codec.to_plaintext(restored) == raw
    # the restored session goes on where it left off
    p.sessions.drop("s1")
    p.sessions.put(restored)
    assert p.process_sync(_turn("s1", 1, f"{SECRET_VALUE} again")).deid.text == "PERSON-1 again"


def test_a_state_class_without_the_interface_is_refused_by_name_without_data():
    p = _pipeline(PlainReplacer())
    p.process_sync(_turn("s2", 0, f"hi, I am {SECRET_VALUE}"))
    state = p.sessions.peek("s2")
    codec = SessionCodec(p, cipher=None)
    for call in (lambda: codec.to_plaintext(state), lambda: codec.fingerprint(state)):
        with pytest.raises(TypeError) as exc:
            call()
        assert isinstance(exc.value, NotCodableError)
        msg = str(exc.value)
        assert "PlainState" in msg and "StateCodable" in msg
        assert "Zorblat" not in msg and "Quenby" not in msg
    # reading a stored document into it is refused the same way (not hidden as a corrupt state)
    good = _pipeline(NumberedReplacer())
    good.process_sync(_turn("s2", 0, f"hi, I am {SECRET_VALUE}"))
    raw = SessionCodec(good, None).to_plaintext(good.sessions.peek("s2"))
    with pytest.raises(NotCodableError, match="PlainState"):
        codec.from_plaintext("s2", raw)


def test_a_detector_memory_without_the_interface_is_refused_by_name():
    p = _pipeline(NumberedReplacer(), ZorblatDetector(memory_cls=PlainMemory))
    p.process_sync(_turn("s3", 0, "hello"))
    with pytest.raises(NotCodableError, match="detector memory class .*PlainMemory"):
        SessionCodec(p, None).to_plaintext(p.sessions.peek("s3"))


def test_a_detector_without_memory_stores_none():
    class NoMemory(ZorblatDetector):
        def new_memory(self):
            return None

    p = _pipeline(NumberedReplacer(), NoMemory())
    p.process_sync(_turn("s4", 0, f"I am {SECRET_VALUE}"))
    codec = SessionCodec(p, None)
    raw = codec.to_plaintext(p.sessions.peek("s4"))
    assert b'"memory":null' in raw
    assert codec.from_plaintext("s4", raw).detect_memory is None


def test_the_shipped_parts_implement_the_interface_explicitly():
    from plainsight.surrogate.state import SessionMapping

    assert issubclass(SessionMapping, BinaryStateCodable)
    assert issubclass(SessionMemory, StateCodable) and not issubclass(SessionMemory, BinaryStateCodable)
    assert issubclass(TagState, StateCodable)
    with pytest.raises(TypeError):  # the interface is abstract: both halves are required
        type("Half", (StateCodable,), {"to_dict": lambda self: {}})()


def test_bytes_stored_for_a_replacer_whose_state_has_no_byte_form_is_a_decode_error():
    from plainsight.surrogate.pipeline import build_pipeline

    s = Settings.model_validate({"surrogate": {"secret": "codec-test-secret"}})
    sur = build_pipeline(s, detector=ZorblatDetector())
    sur.process_sync(_turn("s5", 0, f"I am {SECRET_VALUE}"))
    raw = SessionCodec(sur, None).to_plaintext(sur.sessions.peek("s5"))
    with pytest.raises(StateDecodeError) as exc:
        SessionCodec(_pipeline(NumberedReplacer()), None).from_plaintext("s5", raw)
    assert "Zorblat" not in str(exc.value)


# A document written by the code before the interface existed (commit 5b9faf7, same secret and turns:
# "hi, my name is Zorblat Quenby, email zq@example.org", "Zorblat here again, call 415-555-0199").
GOLDEN_SURROGATE = (
    '{"extra":{},"f":1,"memory":{"classroom":false,"doubts":[],"doubts_turn":2,"expect_name":"","keeps":[],'
    '"keeps_turn":2,"kept":[],"people":{"quenby":2.0,"zorblat":2.0},"problem":[],"problems_seen":[],"public":[],'
    '"roles_seen":[],"topic":0,"turns":2,"values":{"EMAIL":["zq@example.org"],"PHONE":["4155550199"]}},'
    '"replace":{"b":"UFNNAXsidiI6MSwicyI6ImdvbGRlbiIsIm4iOltbInpvcmJsYXQiLCJab3JibGF0IiwiSWxqYSJdLFsicXVlbmJ5Iiw'
    "iUXVlbmJ5IiwiR3VyYmFub3ciXV0sImEiOltdLCJwIjpbWyJ6b3JibGF0IiwicXVlbmJ5Il1dLCJpIjp7fSwieCI6eyJfRE9NQUlOIjpbWyJ"
    "leGFtcGxlLm9yZyIsImV4YW1wbGUub3JnIiwidGhpc3RsZS5leGFtcGxlLmNvbSIsIiJdXSwiRU1BSUwiOltbInpxQGV4YW1wbGUub3JnIiw"
    "ienFAZXhhbXBsZS5vcmciLCJyYXlAdGhpc3RsZS5leGFtcGxlLmNvbSIsIiJdXSwiUEhPTkUiOltbIjQxNTU1NTAxOTkiLCI0MTUtNTU1LTA"
    'xOTkiLCI4MDUtNTU1LTAxNzYiLCI4MDU1NTUwMTc2fCJdXX0sInQiOltdLCJ0YyI6e30sInRyIjp7fX0="},"sid":"golden","turns":2}'
)

# The same first turn through middleware.replace.TagReplacer at 5b9faf7 (its state was stored field by
# field, the (label, value) keys as their repr; reading it back used to leave those keys as strings).
GOLDEN_TAG = (
    '{"extra":{},"f":1,"memory":{"classroom":false,"doubts":[],"doubts_turn":1,"expect_name":"","keeps":[],'
    '"keeps_turn":1,"kept":[],"people":{"quenby":2.0,"zorblat":2.0},"problem":[],"problems_seen":[],"public":[],'
    '"roles_seen":[],"topic":0,"turns":1,"values":{"EMAIL":["zq@example.org"]}},"replace":{"d":{"counters":'
    '{"EMAIL":1,"NAME":1},"numbers":{"(\'EMAIL\', \'zq@example.org\')":1,"(\'NAME\', \'zorblat quenby\')":1}}},'
    '"sid":"golden","turns":1}'
)


def test_a_surrogate_state_stored_before_the_interface_reads_back_byte_identical():
    from plainsight.surrogate.pipeline import build_pipeline
    from plainsight.surrogate.state import SessionMapping

    s = Settings.model_validate({"surrogate": {"secret": "codec-golden-test-secret"}})
    p = build_pipeline(s)
    codec = SessionCodec(p, None)
    restored = codec.from_plaintext("golden", GOLDEN_SURROGATE.encode())
    assert isinstance(restored.replace_state, SessionMapping) and isinstance(restored.detect_memory, SessionMemory)
    assert restored.detect_memory.people == {"quenby": 2.0, "zorblat": 2.0} and restored.turns == 2
    assert codec.to_plaintext(restored).decode() == GOLDEN_SURROGATE
    # and the session continues with the surrogate it had ("Ilja Gurbanow")
    p.sessions.put(restored)
    out = p.process_sync(_turn("golden", 2, "bye from Zorblat"))
    assert out.deid.text == "bye from Ilja"


def test_a_tag_state_stored_before_the_interface_reads_back_with_its_numbers():
    p = Pipeline(Settings.model_validate({"output": {"deid_mode": "tag"}}), replacer=TagReplacer())
    codec = SessionCodec(p, None)
    restored = codec.from_plaintext("golden", GOLDEN_TAG.encode())
    assert restored.replace_state.numbers == {("EMAIL", "zq@example.org"): 1, ("NAME", "zorblat quenby"): 1}
    assert codec.to_plaintext(restored).decode() == GOLDEN_TAG
    p.sessions.put(restored)
    out = p.process_sync(_turn("golden", 1, "write to zq@example.org"))
    assert out.deid.text == "write to [EMAIL_1]"  # the same tag as before the restart, not [EMAIL_2]


def test_a_memory_document_missing_newer_fields_takes_their_defaults():
    old = {"people": {"ana": 2.0}, "kept": ["rex"], "turns": 3, "unknown_future_field": 1}
    mem = SessionMemory.from_dict(old)
    assert mem.people == {"ana": 2.0} and mem.kept == {"rex"} and mem.turns == 3
    assert mem.keeps == [] and mem.public == set() and mem.topic == 0
    assert SessionMemory.from_dict(mem.to_dict()) == mem
