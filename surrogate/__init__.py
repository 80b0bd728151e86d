"""plainsight surrogates: realistic, consistent, deterministic replacements ("hidden in plain sight").

Entry points (transport-agnostic; the Kafka worker and ``plainsight redact`` use these):

* :class:`SurrogateReplacer` – ``new_state(session_id)``, ``replace(text, spans, state, mode)``,
  ``reidentify(text, state)``, ``surrogate_for(value, label, state)``;
* :class:`SessionMapping` – the per-session state (``to_bytes()``/``from_bytes()``, ``approx_size()``);
* :class:`StateCipher` – AES-GCM envelopes: ``seal(state)``/``open(blob, session_id)``,
  ``encrypt``/``decrypt`` of raw bytes, key rotation;
* :func:`reidentify` – surrogates in a tutor reply → real values.
"""

from .crypto import StateCipher, StateCryptoError
from .replacer import SurrogateReplacer
from .reverse import reidentify
from .state import SessionMapping, StateFormatError

__all__ = [
    "SessionMapping",
    "StateCipher",
    "StateCryptoError",
    "StateFormatError",
    "SurrogateReplacer",
    "reidentify",
]
