"""plainsight core: schemas, detection cascade, replacement, pipeline and CLI (no Kafka here)."""

__version__ = "0.1.0"
