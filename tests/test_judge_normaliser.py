"""The judge's ``normaliser`` option reaches the local model and is refused elsewhere."""

from __future__ import annotations

import pytest

from leakage import create_backend
from leakage.backends.judge import open_llm
from leakage.errors import InvalidInput
from leakage.llm import _local


def test_the_judge_passes_its_normaliser_to_the_local_model(monkeypatch: pytest.MonkeyPatch):
    seen: dict[str, object] = {}

    class Recorder:
        name = "recorder"

        def __init__(self, model: str, **kw: object) -> None:
            seen.update(kw, model=model)

    monkeypatch.setattr(_local, "LocalLM", Recorder)
    monkeypatch.setattr("leakage.llm.LocalLM", Recorder)
    create_backend("judge", normaliser="shortlist")
    assert seen["normaliser"] == "shortlist" and seen["model"] == "gemma-3-270m"


def test_an_unknown_normaliser_is_refused_before_loading_a_model():
    with pytest.raises(InvalidInput, match="normaliser='approximate': Input should be 'exact' or"):
        create_backend("judge", normaliser="approximate")


def test_an_endpoint_has_no_normaliser():
    with pytest.raises(InvalidInput, match="normaliser is an option of the 'local' LLM client"):
        open_llm("some-model", endpoint="http://127.0.0.1:9/v1", normaliser="shortlist")


@pytest.mark.parametrize(
    ("flag", "expected"), [([], None), (["--normaliser", "shortlist"], "shortlist")]
)
def test_score_normaliser_option_reaches_the_judge(monkeypatch, tmp_path, flag, expected):
    """`leakage score --backend judge --normaliser shortlist` asks for that normaliser; without
    the flag the judge gets its default (exact) and no option is passed."""
    from typer.testing import CliRunner

    import leakage.backends
    from leakage.cli import app

    seen: dict[str, object] = {}

    class Stop(Exception):
        pass

    def create(name, **kw):
        seen.update(kw, name=name)
        raise Stop

    monkeypatch.setattr(leakage.backends, "open_backend", create)
    game = tmp_path / "g.json"
    game.write_text(
        '{"game": "chameleon", "id": "g", "category": "c", '
        '"players": [{"id": "a", "role": "non-chameleon"}, '
        '{"id": "b", "role": "chameleon"}], "candidates": ["x", "y"], "secret": "x", '
        '"turns": [{"player": "a", "text": "z"}]}'
    )
    r = CliRunner().invoke(app, ["score", str(game), "--backend", "judge", *flag])
    assert isinstance(r.exception, Stop), r.output
    assert seen["name"] == "judge" and seen.get("normaliser") == expected


def test_score_refuses_an_unknown_normaliser():
    from typer.testing import CliRunner

    from leakage.cli import app

    r = CliRunner().invoke(app, ["score", "x.json", "--backend", "judge", "--normaliser", "fast"])
    assert r.exit_code == 2 and "--normaliser" in r.output
