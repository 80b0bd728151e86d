"""Encrypted session state: AES-256-GCM envelopes with key ids and rotation.

Envelope (all integers big-endian)::

    b"PSE" | version (1 byte) | key-id length (1 byte) | key id (ASCII) | nonce (12 bytes) | ciphertext+tag

* encrypt with the *active* key id; decrypt with any configured key (rotation: add the new key,
  make it active, keep the old one until every stored state was rewritten, then drop it);
* the associated data is the header plus the session id, so an envelope moved to another
  session's key fails authentication;
* the header holds only the format version and the key id (and, version 2, the state's own
  version counter): no session id, no plaintext.

Version 2 envelopes (``encrypt(..., version=n)``) carry the session's state version, an 8-byte
counter that grows with every write, in the header and so in the associated data: it cannot be
altered, and the state store refuses a sealed state older than one it has already seen for the
session (an old blob replayed into the state topic: a rollback). Version 1 envelopes still open
(version 0).

Keys come from ``settings.surrogate.keys`` / ``keys_file`` (key id → base64 of 32 random bytes)
and ``settings.surrogate.active_key_id``. There is no built-in key: with none configured
:meth:`StateCipher.from_settings` raises (``plainsight keys generate`` makes one). The key earlier
versions derived from the public development secret is refused, and so are states sealed with it
(key id ``dev``), unless ``--insecure-dev-keys`` is on. Key material is never logged.
"""

from __future__ import annotations

import logging
import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from plainsight.middleware.keys import derive_dev_key  # noqa: F401  (one definition, re-exported)

from .state import SessionMapping

log = logging.getLogger(__name__)

MAGIC = b"PSE"
ENVELOPE_VERSION = 1
ENVELOPE_VERSION_COUNTED = 2
NONCE_BYTES = 12
DEV_KEY_ID = "dev"


class StateCryptoError(ValueError):
    """An envelope that can't be opened (wrong session, unknown key, tampered, not an envelope)."""


class StateCipher:
    def __init__(self, keys: dict[str, bytes], active_key_id: str, *, allow_dev_key: bool = False) -> None:
        if not keys:
            raise ValueError("no state encryption keys")
        if not allow_dev_key:
            from plainsight.middleware.keys import public_dev_key

            dev = public_dev_key()
            for kid, k in keys.items():
                if k == dev:
                    raise StateCryptoError(
                        f"state key {kid!r} is the public development key from plainsight's source; "
                        "refusing it (make a real one with 'plainsight keys generate')"
                    )
        self.allow_dev_key = allow_dev_key
        for kid, k in keys.items():
            if not kid or len(kid.encode("ascii", "strict")) > 255:
                raise ValueError("key ids must be 1-255 ASCII characters")
            if len(k) != 32:
                raise ValueError(f"state key {kid!r} must be 32 bytes")
        if active_key_id not in keys:
            raise ValueError(f"active key id {active_key_id!r} is not among the configured keys")
        self._aead = {kid: AESGCM(k) for kid, k in keys.items()}
        self.active_key_id = active_key_id

    @property
    def key_ids(self) -> list[str]:
        return list(self._aead)

    @classmethod
    def from_settings(cls, settings) -> "StateCipher":
        """From ``settings`` (a Settings): ``surrogate.keys`` and ``surrogate.keys_file``.

        Raises ``middleware.keys.SecretsError`` (with how to make a key) when none is configured.
        """
        from plainsight.middleware.keys import HOW_TO, SecretsError, active_key_id, decode_key, load_configured

        _secret, _origin, raw_keys, active = load_configured(settings)
        if not raw_keys:
            raise SecretsError(f"no state key configured (surrogate.keys / surrogate.keys_file); {HOW_TO}")
        keys = {kid: decode_key(kid, v) for kid, v in raw_keys.items()}
        active = active_key_id(keys, active)
        return cls(keys, active, allow_dev_key=bool(getattr(settings.surrogate, "_insecure_dev_keys", False)))

    # ---- envelope ------------------------------------------------------------------------
    @staticmethod
    def _header(key_id: str, version: int | None = None) -> bytes:
        kid = key_id.encode("ascii")
        if version is None:
            return MAGIC + bytes([ENVELOPE_VERSION, len(kid)]) + kid
        return MAGIC + bytes([ENVELOPE_VERSION_COUNTED, len(kid)]) + kid + int(version).to_bytes(8, "big")

    @staticmethod
    def _aad(header: bytes, session_id: str) -> bytes:
        return header + b"\x00" + session_id.encode("utf-8")

    def encrypt(self, plaintext: bytes, session_id: str, version: int | None = None) -> bytes:
        header = self._header(self.active_key_id, version)
        nonce = os.urandom(NONCE_BYTES)
        ct = self._aead[self.active_key_id].encrypt(nonce, plaintext, self._aad(header, session_id))
        return header + nonce + ct

    @staticmethod
    def key_id_of(blob: bytes) -> str:
        """The key id an envelope was sealed with (to decide whether to re-encrypt after rotation)."""
        if len(blob) < 5 or blob[:3] != MAGIC:
            raise StateCryptoError("not a plainsight state envelope")
        if blob[3] not in (ENVELOPE_VERSION, ENVELOPE_VERSION_COUNTED):
            raise StateCryptoError(f"unsupported envelope version {blob[3]}")
        n = blob[4]
        extra = 8 if blob[3] == ENVELOPE_VERSION_COUNTED else 0
        if len(blob) < 5 + n + extra + NONCE_BYTES + 16:
            raise StateCryptoError("truncated state envelope")
        try:
            return blob[5 : 5 + n].decode("ascii")
        except UnicodeDecodeError:
            raise StateCryptoError("corrupt key id in state envelope") from None

    def decrypt(self, blob: bytes, session_id: str) -> bytes:
        kid = self.key_id_of(blob)
        aead = self._aead.get(kid)
        if aead is None:
            if kid == DEV_KEY_ID:
                raise StateCryptoError(
                    "state sealed with the public development key (key id 'dev'); refused: anyone could read it"
                )
            raise StateCryptoError(f"state sealed with unknown key id {kid!r}")
        hlen = 5 + len(kid) + (8 if blob[3] == ENVELOPE_VERSION_COUNTED else 0)
        header, nonce, ct = blob[:hlen], blob[hlen : hlen + NONCE_BYTES], blob[hlen + NONCE_BYTES :]
        try:
            return aead.decrypt(nonce, ct, self._aad(header, session_id))
        except InvalidTag:
            raise StateCryptoError("state envelope failed authentication (tampered, wrong key or session)") from None

    @classmethod
    def version_of(cls, blob: bytes) -> int:
        """The state version an envelope carries (0 for a version 1 envelope). Authenticated only
        once the envelope is opened: use it to refuse, never to trust."""
        kid = cls.key_id_of(blob)
        if blob[3] != ENVELOPE_VERSION_COUNTED:
            return 0
        at = 5 + len(kid.encode("ascii"))
        return int.from_bytes(blob[at : at + 8], "big")

    # ---- session mappings ----------------------------------------------------------------
    def seal(self, state: SessionMapping) -> bytes:
        """``state.to_bytes()`` encrypted for ``state.session_id``."""
        return self.encrypt(state.to_bytes(), state.session_id)

    def open(self, blob: bytes, session_id: str) -> SessionMapping:
        state = SessionMapping.from_bytes(self.decrypt(blob, session_id))
        if state.session_id != session_id:  # pragma: no cover - the AAD already binds it
            raise StateCryptoError("state belongs to another session")
        return state

    def needs_rotation(self, blob: bytes) -> bool:
        return self.key_id_of(blob) != self.active_key_id
