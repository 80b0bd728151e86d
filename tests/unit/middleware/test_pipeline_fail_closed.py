"""Issue #22 item 8: a replacer that raises on an odd value (as gen_id did on "@_") never takes
the turn down: the spans are written as [LABEL], the output is flagged degraded, nothing leaks."""

from plainsight.middleware.config import load_settings
from plainsight.middleware.schemas import InputTurn
from plainsight.surrogate.pipeline import build_pipeline
from tests.support import secret_overrides


def test_replacer_failure_fails_closed(monkeypatch):
    p = build_pipeline(load_settings(None, **secret_overrides()))

    def boom(*a, **k):
        raise IndexError("string index out of range: maria.lopez@gmail.com")

    monkeypatch.setattr(p.replacer, "replace", boom)
    r = p.process_sync(InputTurn(session_id="s", turn_id=0, role="Maria", text="I'm Maria Lopez, maria.lopez@gmail.com",
                                 sent_at=0.0))
    for out in (r.deid, r.logs):
        assert out.degraded and "Maria" not in out.text and "maria.lopez" not in out.text
        assert "[NAME]" in out.text and "[EMAIL]" in out.text and out.role == "[NAME]"
    assert [e.label for e in r.deid.entities] == ["NAME", "EMAIL"]
