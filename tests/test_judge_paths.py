"""Where the judge's model clients keep their files: the LLM-response cache and the converted
GGUF models are the paths a caller gives (the service its ``Settings.paths``), else those of
the home ``LEAKAGE_HOME`` names."""

from __future__ import annotations

import pytest

from leakage.backends import create_backend
from leakage.paths import Paths

ENDPOINT = "http://127.0.0.1:9/v1"  # nothing is asked of it: the clients are only built


def test_endpoint_responses_are_cached_under_the_home_leakage_home_names(tmp_path, monkeypatch):
    from leakage.backends.judge import open_llm

    monkeypatch.setenv("LEAKAGE_HOME", str(tmp_path))
    client = open_llm("some-model", endpoint=ENDPOINT)
    assert client.cache is not None
    assert client.cache.path == Paths(tmp_path).llm_responses


@pytest.mark.parametrize("name", ["judge", "listener"])
def test_the_factories_take_the_response_cache(name, tmp_path, monkeypatch):
    monkeypatch.setenv("LEAKAGE_HOME", str(tmp_path / "elsewhere"))
    cache = tmp_path / "given" / "responses.sqlite"
    backend = create_backend(name, model="some-model", endpoint=ENDPOINT, cache_path=str(cache))
    assert backend.client.cache.path == cache
    assert cache.is_file()
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("name", ["judge", "listener"])
def test_the_factories_pass_the_models_folder_to_the_local_model(name, tmp_path, monkeypatch):
    import leakage.llm
    from leakage.llm import _open

    loaded = []

    class RecordingLM:
        name = "recording"

        def __init__(self, model, **options):
            loaded.append((model, options))

    monkeypatch.setattr(leakage.llm, "LocalLM", RecordingLM)
    monkeypatch.setattr(_open, "_OPEN_MODELS", type(_open._OPEN_MODELS)())
    torch = {"client_kind": "local"}  # a CPU without bf16 would default to CTranslate2
    first = create_backend(name, model="some-model", models_dir=str(tmp_path / "a"), **torch)
    assert loaded[-1][1]["models_dir"] == str(tmp_path / "a")
    # a model converted into another folder is another model
    second = create_backend(name, model="some-model", models_dir=str(tmp_path / "b"), **torch)
    assert second.client is not first.client and len(loaded) == 2
    assert loaded[-1][1]["models_dir"] == str(tmp_path / "b")


def test_local_model_converts_a_gguf_model_into_the_models_folder(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from leakage.llm._local import _model

    used = []

    class Stop(Exception):
        pass

    def ensure_converted(source, cache_dir, *args, **kwargs):
        used.append(cache_dir)
        raise Stop

    monkeypatch.setenv("LEAKAGE_HOME", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(_model, "ensure_converted", ensure_converted)
    with pytest.raises(Stop):
        _model.LocalLM("smollm2-135m", models_dir=tmp_path / "models")
    assert len(used) == 1 and used[0].parent == tmp_path / "models"
