"""plainsight: streaming privacy middleware for AI tutoring.

One import package. Its subpackages keep the repository's layout (see the README's *Layout*):

* ``plainsight.middleware`` — the transport-agnostic core: schemas, settings, detection cascade,
  LLM stage, pipeline and the CLI;
* ``plainsight.surrogate`` — surrogate generation, session mappings, sealed state;
* ``plainsight.consumers`` — all Kafka I/O: worker, state store, embedded broker;
* ``plainsight.configs`` — the shipped YAML configuration and prompts;
* ``plainsight.benchmarks`` — the ``plainsight bench`` harnesses (needs the ``bench`` extra).

The documented public API is re-exported here and in :mod:`plainsight.api`; every other module is
internal and may change between releases.
"""

from __future__ import annotations

import os as _os

# A source checkout keeps the subpackages beside this folder (middleware/, surrogate/, …) rather
# than inside it: the wheel maps them under plainsight/ (setup.py's package_dir). Running from the
# checkout (PYTHONPATH or an editable install) finds them through this one extra search path.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if _os.path.isfile(_os.path.join(_checkout, "pyproject.toml")) and _os.path.isfile(
    _os.path.join(_checkout, "middleware", "__init__.py")
):
    __path__.append(_checkout)  # type: ignore[name-defined]  # noqa: F821

DISTRIBUTION = "plainsight-privacy"


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version(DISTRIBUTION)
    except PackageNotFoundError:  # pragma: no cover - running from a checkout that is not installed
        return "0+unknown"


__version__ = _version()



def __getattr__(name: str):
    # the in-process API (plainsight/facade.py), imported on first use so ``import plainsight`` stays light
    if name in ("Plainsight", "Session"):
        from . import facade

        return getattr(facade, name)
    raise AttributeError(f"module 'plainsight' has no attribute {name!r}")


__all__ = ["DISTRIBUTION", "Plainsight", "Session", "__version__"]
