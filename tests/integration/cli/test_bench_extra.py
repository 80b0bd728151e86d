"""`plainsight bench` without the bench extra names the extra instead of failing half-way."""

from __future__ import annotations

import importlib.util

from plainsight.middleware.cli import main
from plainsight.middleware.commands import bench


def test_bench_names_the_extra_when_a_dependency_is_missing(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "hypothesis" else real(name, *a))
    assert main(["bench", "faults", "--turns", "10"]) == 2
    err = capsys.readouterr().err
    assert "needs the bench extra (missing: hypothesis)" in err
    assert 'pip install -e ".[bench]"' in err


def test_bench_names_the_extra_when_the_benchmarks_package_is_missing(monkeypatch, capsys):
    monkeypatch.setitem(bench.BENCHES, "stream", ("benchmarks.not_installed", "x"))
    assert main(["bench", "stream", "--turns", "10"]) == 2
    assert "needs the bench extra (missing: benchmarks.not_installed)" in capsys.readouterr().err


def test_every_bench_module_is_importable_with_the_extra():
    for name, (module, _help) in bench.BENCHES.items():
        assert bench.missing_modules(module) == [], name
