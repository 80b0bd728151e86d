"""Process-level tuning for a long-running worker."""

from __future__ import annotations

import gc
import logging
import time

log = logging.getLogger(__name__)


def freeze_heap() -> dict:
    """Collect once, then move every object alive now (the spaCy pipeline, name tables, regex
    caches: ~70k objects) to CPython's permanent generation, so later full collections no longer
    scan them. On this machine one full collection over the loaded models takes ~40 ms: a pause
    that every turn in flight waits for, and so a p99 cost. Call after warm-up, before serving."""
    t0 = time.perf_counter()
    gc.collect()
    gc.freeze()
    info = {"frozen_objects": gc.get_freeze_count(), "ms": round((time.perf_counter() - t0) * 1e3, 1)}
    log.info("heap frozen: %(frozen_objects)d objects in %(ms).1f ms", info)
    return info
