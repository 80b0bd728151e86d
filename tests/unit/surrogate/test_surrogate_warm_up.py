"""Per-turn cost of the name-origin pools (issue #12, worker cost in `bench stream`): the group
pools are filled at warm-up, not in the turn that first needs one, with the same names; the
origin lists are held compactly. Outputs do not change (scripts/check_identical.py)."""

from __future__ import annotations

import pytest

from plainsight.middleware.config import Settings
from plainsight.middleware.schemas import InputTurn
from plainsight.surrogate import SurrogateReplacer
from plainsight.surrogate.names import data_path, load_tables
from plainsight.surrogate.origin import GROUPS, load_origins
from plainsight.surrogate.pipeline import build_pipeline

SECRET = "test-secret"
#: a sample of pool keys: (group, role, gender, base, region)
KEYS = [
    ("Nordic", "first", "N", "Xy", "Europe"),
    ("Nordic", "first", "F", "Xy", None),
    ("Spanish", "last", None, "Xy", "Americas"),
    ("German", "first", "M", "Xy", "Europe"),
    ("Czech-Slovak", "last", None, "Nováková", "Europe"),
    ("Russian", "last", None, "Иванов", None),
    ("Indian", "first", "F", "Xy", "Asia"),
    ("Chinese", "last", None, "王", "Asia"),
]


@pytest.fixture(scope="module")
def warm() -> SurrogateReplacer:
    r = SurrogateReplacer(SECRET)
    r.warm_up()
    return r


def test_warm_up_fills_the_group_pools_before_any_turn(warm):
    filled = set(warm._group_pools)
    for group in GROUPS:
        assert (group, "first", "N", False, None) in filled
        assert (group, "last", None, False, "Europe") in filled
    assert ("Czech-Slovak", "last", None, False, "Europe", True) in filled  # feminine surnames too


@pytest.mark.parametrize("key", KEYS)
def test_warm_pools_hold_the_same_names_as_pools_filled_on_first_use(warm, key):
    # other name tables (same data): their own pool cache, filled lazily as before
    cold = SurrogateReplacer(SECRET, tables=load_tables(data_path()))
    assert cold._group_pools is not warm._group_pools
    assert cold._group_pool(*key) == warm._group_pool(*key)
    assert warm._group_pool(*key)


def test_pools_are_shared_by_replacers_on_the_same_tables(warm):
    other = SurrogateReplacer("another-secret")
    assert other._group_pools is warm._group_pools


def test_pipeline_warm_up_warms_the_replacer():
    pipe = build_pipeline(Settings())
    pipe.warm_up()
    assert ("Nordic", "first", "N", False, "Europe") in pipe.replacer._group_pools
    out = pipe.process_sync(InputTurn(session_id="s", turn_id=0, role="student", text="hi I'm Sigrid", sent_at=0.0))
    assert "Sigrid" not in out.deid.text


def test_origin_lists_share_their_group_sets():
    o = load_origins()
    sets = {id(v) for v in (*o._exact.values(), *o._folded.values())}
    assert len(o._exact) > 30_000 and len(sets) < 1_000  # one frozenset per distinct set of groups
    assert "German" in o.candidates("Jürgen")
    assert o.person_group("Jürgen", "Müller") == "German"
    assert o.gender("German", "Jürgen") == "M"
