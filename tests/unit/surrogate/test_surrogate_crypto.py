"""Encrypted session state: round trip, rotation, tamper detection, no plaintext in envelopes."""

from __future__ import annotations

import base64
import logging
import os

import pytest

from plainsight.middleware.config import Settings
from plainsight.surrogate import SessionMapping, StateCipher, StateCryptoError, StateFormatError, SurrogateReplacer
from plainsight.surrogate import crypto as crypto_mod

from tests.surrogate_helpers import DIALOGUE_40, parse

SESSION = "session-crypto-1"
REAL_VALUES = ["Maria", "Lopez", "Daniel", "Chen", "Garcia", "maria.lopez@gmail.com", "mlopez@lincoln.k12.ne.us",
               "maria_lopez07", "2671", "S-20231187"]


def key() -> bytes:
    return os.urandom(32)


@pytest.fixture(scope="module")
def state() -> SessionMapping:
    r = SurrogateReplacer("crypto-test-secret")
    st = r.new_state(SESSION)
    for marked in DIALOGUE_40:
        r.replace(*parse(marked), st)
    return st


def test_round_trip(state):
    c = StateCipher({"k1": key()}, "k1")
    blob = c.seal(state)
    back = c.open(blob, SESSION)
    assert back.to_bytes() == state.to_bytes()
    assert c.decrypt(c.encrypt(b"raw bytes", "s"), "s") == b"raw bytes"
    # fresh nonce each time
    assert c.seal(state) != blob


def test_envelope_holds_no_plaintext(state):
    c = StateCipher({"k1": key()}, "k1")
    blob = c.seal(state)
    low = blob.lower()
    surrogates = list(state.names.values()) + [e.surrogate for d in state.values.values() for e in d.values()]
    for v in REAL_VALUES + surrogates + [SESSION]:
        assert v.encode().lower() not in low, v
    assert blob[:3] == b"PSE" and blob[3] == 1 and blob[5:7] == b"k1"
    # the plaintext does hold them (so the check above is meaningful)
    plain = state.to_bytes()
    assert all(v.encode() in plain for v in ["Maria", "maria.lopez@gmail.com", SESSION])


def test_rotation(state):
    old, new = key(), key()
    c_old = StateCipher({"2025": old}, "2025")
    blob_old = c_old.seal(state)
    c_rot = StateCipher({"2025": old, "2026": new}, "2026")
    assert c_rot.open(blob_old, SESSION).to_bytes() == state.to_bytes()  # old envelopes still open
    assert c_rot.needs_rotation(blob_old)
    blob_new = c_rot.seal(state)
    assert StateCipher.key_id_of(blob_new) == "2026" and not c_rot.needs_rotation(blob_new)
    c_new_only = StateCipher({"2026": new}, "2026")
    assert c_new_only.open(blob_new, SESSION).to_bytes() == state.to_bytes()
    with pytest.raises(StateCryptoError, match="unknown key id"):
        c_new_only.open(blob_old, SESSION)


def test_tampering_and_wrong_session_are_detected(state):
    c = StateCipher({"k1": key()}, "k1")
    blob = c.seal(state)
    for i in (len(blob) - 1, len(blob) // 2, 8):  # tag, ciphertext, nonce
        bad = bytearray(blob)
        bad[i] ^= 0x01
        with pytest.raises(StateCryptoError):
            c.open(bytes(bad), SESSION)
    with pytest.raises(StateCryptoError):
        c.open(blob, "another-session")  # AAD binds the session id
    other = StateCipher({"k1": key()}, "k1")  # same key id, different key
    with pytest.raises(StateCryptoError):
        other.open(blob, SESSION)
    relabelled = blob[:5] + b"k2" + blob[7:]
    with pytest.raises(StateCryptoError):
        StateCipher({"k1": key(), "k2": key()}, "k1").open(relabelled, SESSION)
    for junk in (b"", b"PSE", b"XXXX" + blob[4:], blob[:20]):
        with pytest.raises(StateCryptoError):
            c.open(junk, SESSION)


def test_error_messages_hold_no_plaintext_or_key(state):
    k = key()
    c = StateCipher({"k1": k}, "k1")
    blob = c.seal(state)
    try:
        c.open(blob[:-1] + bytes([blob[-1] ^ 1]), SESSION)
    except StateCryptoError as exc:
        msg = str(exc)
    assert "Maria" not in msg and SESSION not in msg and base64.b64encode(k).decode() not in msg
    with pytest.raises(StateFormatError) as ei:
        SessionMapping.from_bytes(b"PSM\x01{not json Maria")
    assert "Maria" not in str(ei.value)


def test_from_settings_with_keys():
    k1, k2 = base64.b64encode(key()).decode(), base64.b64encode(key()).decode()
    s = Settings(surrogate={"keys": {"a": k1, "b": k2}, "active_key_id": "b"})
    c = StateCipher.from_settings(s)
    assert c.active_key_id == "b" and set(c.key_ids) == {"a", "b"}
    single = StateCipher.from_settings(Settings(surrogate={"keys": {"only": k1}}))
    assert single.active_key_id == "only"
    with pytest.raises(ValueError, match="active_key_id"):
        StateCipher.from_settings(Settings(surrogate={"keys": {"a": k1, "b": k2}}))
    with pytest.raises(ValueError, match="not among"):
        StateCipher.from_settings(Settings(surrogate={"keys": {"a": k1}, "active_key_id": "zz"}))
    bad = base64.b64encode(b"short-key").decode()
    with pytest.raises(ValueError) as ei:
        StateCipher.from_settings(Settings(surrogate={"keys": {"a": bad}}))
    assert bad not in str(ei.value)
    with pytest.raises(ValueError) as ei:
        StateCipher.from_settings(Settings(surrogate={"keys": {"a": "not base64!!"}}))
    assert "not base64!!" not in str(ei.value)


def test_no_key_configured_is_refused_and_the_public_dev_key_too(state):
    """No built-in key any more (issue #16): no keys -> an error saying how to make one; the key
    earlier versions derived from the public dev secret is refused, and so are states sealed with it."""
    from plainsight.middleware.keys import SecretsError, public_dev_key

    with pytest.raises(SecretsError, match="plainsight keys generate"):
        StateCipher.from_settings(Settings())
    dev_b64 = base64.b64encode(public_dev_key()).decode()
    with pytest.raises(StateCryptoError) as ei:
        StateCipher.from_settings(Settings(surrogate={"keys": {"x": dev_b64}}))
    assert dev_b64 not in str(ei.value) and "public development key" in str(ei.value)
    old = StateCipher({"dev": public_dev_key()}, "dev", allow_dev_key=True)  # --insecure-dev-keys
    blob = old.seal(state)
    with pytest.raises(StateCryptoError, match="public development key"):
        StateCipher({"b": key()}, "b").open(blob, SESSION)


def test_mapping_format_is_versioned(state):
    blob = state.to_bytes()
    with pytest.raises(StateFormatError, match="unsupported"):
        SessionMapping.from_bytes(blob[:3] + b"\x09" + blob[4:])
    with pytest.raises(StateFormatError):
        SessionMapping.from_bytes(b"nope")
