"""Benchmarks and test harnesses of plainsight: not part of the worker.

Installed with the ``bench`` extra (``pip install -e ".[bench]"``, which ``.[dev]`` includes):

- ``benchmarks.commands``: the implementations of ``plainsight bench detect|stream|broker|faults``
  (the CLI's ``bench`` command loads them by name and names the extra when one is missing);
- ``stream`` (turns/s and end-to-end latency through a broker and K worker processes),
  ``broker_hop`` (the transport floor), ``faults`` (SIGKILL, broker restart, LLM outage,
  hostile inputs), ``hostile`` (the hostile-input generator, uses hypothesis), ``leak_scan``
  (searches every output, dead letter, stored state, log and metric for raw values);
- ``llm_simulator`` (a local OpenAI-compatible server: the tests' and benchmarks' model),
  ``llm`` (LLM stage throughput and tokens), ``surrogate`` (surrogate micro-benchmark).

Layering: this package sits on top of everything (tests/unit/test_architecture.py); nothing in
``middleware``, ``surrogate`` or ``consumers`` imports it.
"""
