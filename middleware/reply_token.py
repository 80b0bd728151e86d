"""``reply_token``: which tutor replies may be re-identified.

Every output plainsight sends to the tutor topic carries ``reply_token`` = ``rt1.<digest>.<mac>``:
``digest`` is the first 16 bytes of SHA-256 of the output's payload, ``mac`` a keyed MAC
(HMAC-SHA256, key derived from ``surrogate.secret``) of the session id and that digest. A reply on
``tutor.replies`` must carry a token that verifies for its own session
(``reverse.require_reply_token``): it proves the writer read an output plainsight sent to the
tutor for that session. Records on the logs topic carry no token, so text copied from the logs
cannot be turned back into real values; nor can a token of one session unlock another.

Deterministic (no nonce): a replayed output carries the same token, byte for byte.
"""

from __future__ import annotations

import hashlib
import hmac
import struct

PREFIX = "rt1"


def derive_key(secret: bytes, purpose: bytes) -> bytes:
    """A sub-key of the surrogate secret for one purpose (reply tokens, digests, control records)."""
    return hmac.new(secret, b"plainsight-subkey-v1\x00" + purpose, hashlib.sha256).digest()


def _mac(key: bytes, session_id: str, digest: bytes) -> bytes:
    sid = session_id.encode("utf-8", "surrogatepass")
    msg = b"reply" + struct.pack(">I", len(sid)) + sid + digest
    return hmac.new(key, msg, hashlib.sha256).digest()[:16]


def make(key: bytes, session_id: str, payload: bytes) -> str:
    digest = hashlib.sha256(payload).digest()[:16]
    return f"{PREFIX}.{digest.hex()}.{_mac(key, session_id, digest).hex()}"


def verify(key: bytes, session_id: str, token: str | None) -> bool:
    if not token or not isinstance(token, str):
        return False
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != PREFIX:
        return False
    try:
        digest, mac = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return False
    if len(digest) != 16 or len(mac) != 16:
        return False
    return hmac.compare_digest(mac, _mac(key, session_id, digest))


def control_mac(key: bytes, action: str, session_id: str) -> str:
    """MAC of a control record (``forget``) on the input topic: only the secret's holder
    (the operator running ``plainsight forget``) can make one."""
    sid = session_id.encode("utf-8", "surrogatepass")
    return hmac.new(key, b"control\x00" + action.encode() + b"\x00" + sid, hashlib.sha256).hexdigest()
