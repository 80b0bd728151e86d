"""CLI tests call ``plainsight.middleware.cli.main`` in-process; its ``setup_logging`` replaces the
root logger's handlers with one on the (captured, later closed) stderr. Restore them after each
test, so later tests neither lose their log capture nor print "I/O operation on closed file"."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(autouse=True)
def _restore_root_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
    for h in handlers:
        if h not in root.handlers:
            root.addHandler(h)
    root.setLevel(level)
