"""One client picker, ``leakage.llm.open_llm``, over the registry of client kinds
``LLM_CLIENTS`` (``local``, ``openai``, and the kinds of installed distributions, entry-point
group ``leakage.llm_clients``: simulated here), used by the judge, the describers and the game
agents alike."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from leakage.backends import create_backend
from leakage.errors import InvalidInput, UnknownBackend
from leakage.games.agents import AgentFactory
from leakage.llm import LLM_CLIENTS, Generation, Message, open_llm
from leakage.paths import Paths
from tests.plugin_support import fake_entry_points

ENDPOINT = "http://127.0.0.1:9/v1"  # nothing is asked of it: the clients are only built


class EchoClient:
    """A client of a kind another distribution adds."""

    def __init__(self, model: str | None, **options: Any) -> None:
        self.name = f"echo:{model}"
        self.options = options

    def info(self) -> dict[str, object]:
        return {"model": self.name}

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        return [-float(len(c)) for c in continuations]

    def generate(self, messages: Sequence[Message] | str, **options: Any) -> Generation:
        return Generation(text="echo")


def open_echo(model: str | None = None, *, loud: bool = False, cache_path: str | None = None):
    return EchoClient(model, loud=loud, cache_path=cache_path)


@pytest.fixture
def echo_kind(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The kind ``echo``, from a (simulated) installed distribution."""
    LLM_CLIENTS.reload()
    fake_entry_points(monkeypatch, "leakage.llm_clients", echo=f"{__name__}:open_echo")
    yield
    LLM_CLIENTS.pop("echo", None)
    LLM_CLIENTS.reload()


@pytest.fixture
def recording_lm(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """``LocalLM`` replaced by a class that records what it is built with (no model loaded),
    with no model shared from an earlier test, and the default local kind."""
    import leakage.llm
    from leakage.llm import _open

    loaded: list[tuple[str, dict[str, Any]]] = []

    class RecordingLM:
        def __init__(self, model: str, **options: Any) -> None:
            self.name = model
            loaded.append((model, options))

    monkeypatch.setattr(leakage.llm, "LocalLM", RecordingLM)
    monkeypatch.setattr(_open, "_OPEN_MODELS", type(_open._OPEN_MODELS)())
    # torch's client whatever the CPU (without bf16 the default would be CTranslate2's)
    monkeypatch.setattr(_open, "default_local_kind", lambda **given: "local")
    return loaded


def test_the_package_has_three_kinds_and_an_unknown_one_is_named():
    assert {"local", "openai", "ctranslate2"} <= set(LLM_CLIENTS.names())
    with pytest.raises(UnknownBackend, match=r"unknown LLM client 'nope'; available: .*local"):
        open_llm("m", kind="nope")


def test_a_kind_from_an_entry_point_is_picked_with_its_options(echo_kind, tmp_path: Path):
    assert "echo" in LLM_CLIENTS.names()
    client = open_llm("m", kind="echo", loud=True, cache_path=str(tmp_path / "c.sqlite"))
    assert isinstance(client, EchoClient) and client.name == "echo:m"
    assert client.options == {"loud": True, "cache_path": str(tmp_path / "c.sqlite")}
    # a location it does not take is left out; an option it does not take is an error
    assert "models_dir" not in open_llm("m", kind="echo", models_dir=str(tmp_path)).options
    with pytest.raises(
        InvalidInput, match="threads is an option of the 'local' or 'ctranslate2' LLM client"
    ):
        open_llm("m", kind="echo", threads=2)
    # the judge builds its client with the same picker
    judge = create_backend("judge", model="m", client_kind="echo")
    assert isinstance(judge.client, EchoClient)  # type: ignore[attr-defined]
    assert judge.loglik(["ab"], ["x", "y"]).tolist() == [[-3.0, -3.0]]


def test_the_endpoint_kind_caches_where_it_is_told(leakage_home: Path, tmp_path: Path):
    client = open_llm("m", endpoint=ENDPOINT, cache_path=str(tmp_path / "r.sqlite"))
    assert type(client).__name__ == "OpenAICompatibleClient"
    assert client.cache.path == tmp_path / "r.sqlite"  # type: ignore[attr-defined]
    client = open_llm("m", endpoint=ENDPOINT)
    assert client.cache.path == Paths(leakage_home).llm_responses  # type: ignore[attr-defined]
    assert open_llm("m", endpoint=ENDPOINT, cache=False).cache is None  # type: ignore[attr-defined]
    with pytest.raises(InvalidInput, match="endpoint is an option of the 'openai' LLM client"):
        open_llm("m", kind="local", endpoint=ENDPOINT)


def test_the_agent_factory_picks_its_clients_with_open_llm(
    recording_lm, leakage_home: Path, tmp_path: Path
):
    """A local agent's model is shared with every other user of it in the process (the
    judge's); an endpoint agent's answers are kept where the factory is told (not by
    default: every move is asked)."""
    factory = AgentFactory(models_dir=tmp_path / "models")
    local = factory.client("local:some-model")
    assert factory.client("local:some-model") is local
    assert recording_lm == [("some-model", recording_lm[0][1])]
    assert recording_lm[0][1]["models_dir"] == str(tmp_path / "models")
    judge = create_backend("judge", model="some-model", models_dir=str(tmp_path / "models"))
    assert judge.client is local and len(recording_lm) == 1  # type: ignore[attr-defined]
    assert AgentFactory().client("local").name == "gemma-3-270m"  # the default local model

    remote = AgentFactory(llm_endpoint=ENDPOINT).client("llm:m")
    assert remote.name == "m" and remote.cache is None  # type: ignore[attr-defined]
    told = AgentFactory(llm_endpoint=ENDPOINT, llm_cache=tmp_path / "answers.sqlite")
    assert told.client("llm:m").cache.path == tmp_path / "answers.sqlite"  # type: ignore[attr-defined]
