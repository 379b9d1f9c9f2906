"""``leakage_service.provision`` (the image build's steps, ``docker/prepare.sh``) prepares the
files the service will use: its settings' index (``LEAKAGE_INDEX`` included), read as the
server reads them, unknown variables refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leakage.errors import InvalidInput
from leakage_service.provision import main, provision
from leakage_service.settings import Settings


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in [n for n in os.environ if n.upper().startswith("LEAKAGE_")]:
        monkeypatch.delenv(name)
    return monkeypatch


def test_the_index_step_finds_the_index_the_service_will_use(
    clean_env: pytest.MonkeyPatch, tmp_path: Path, default_index: Path, capsys
):
    home = tmp_path / "home"
    clean_env.setenv("LEAKAGE_HOME", str(home))
    clean_env.setenv("LEAKAGE_INDEX", str(default_index))
    clean_env.setenv("LEAKAGE_PREPARE", "index")  # docker/prepare.sh's, not a setting
    assert main(["index"]) == 0
    assert capsys.readouterr().out.startswith(f"index: {default_index} is there")
    assert not home.exists()  # nothing was built under the home


def test_steps_take_the_settings_given(tmp_path: Path, default_index: Path):
    settings = Settings(home=tmp_path, index=default_index)
    assert provision("index", settings).startswith(f"index: {default_index} is there")
    with pytest.raises(SystemExit, match="unknown step 'warm'"):
        provision("warm", settings)


def test_a_misspelt_variable_stops_the_build(clean_env: pytest.MonkeyPatch):
    clean_env.setenv("LEAKAGE_INDX", "/srv/index.sqlite")
    with pytest.raises(InvalidInput, match="did you mean LEAKAGE_INDEX"):
        main(["index"])
