"""``plainsight bench SUBCOMMAND`` implementations (registered in ``middleware/commands/bench.py``)."""
