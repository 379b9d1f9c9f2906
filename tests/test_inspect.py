"""The Inspect AI components (leakage.inspect) and Inspect eval logs as an input format,
offline: mockllm players with scripted outputs, through ``inspect_ai.eval()`` and through a
real ``inspect eval`` in a subprocess; each log read back with ``read_eval_log`` and its
scores checked against ``leakage score`` on the same games."""

from __future__ import annotations

import gc
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.solver import generate

from leakage.errors import InvalidTranscript
from leakage.games.metrics import metrics_table
from leakage.scoring import score_transcript
from leakage.transcripts import iter_transcripts, parse_transcript

from .inspect_tasks import epoch_player, scripted_model

REPO = Path(__file__).resolve().parent.parent
TASK_FILE = "tests/inspect_tasks.py@scripted_spygame"
EVAL_FLAGS = ["--model", "mockllm/model", "--display", "none", "--log-dir"]

# inspect-ai 0.3.285 leaves an anyio memory stream of its eval loop unclosed, reported when
# it is collected; _run collects it here so that it is not reported in a later test
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def _run(task, tmp_path: Path, **kw):
    model = scripted_model()
    (log,) = eval(task, model=model, log_dir=str(tmp_path), display="none", **kw)
    gc.collect()
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def _check_scores(log, path: Path, backend) -> None:
    """Each sample's leakage score is ``leakage score``'s report of the game the log keeps,
    as the eval-log input format reads it back."""
    games = list(iter_transcripts([path]))
    assert len(games) == len(log.samples) and not any(isinstance(g, Exception) for g in games)
    for sample, game in zip(log.samples, games, strict=True):
        assert game.id == sample.id
        expected = score_transcript(game, backend).model_dump(mode="json")
        score = sample.scores["leakage_scorer"]
        assert score.metadata["report"] == expected
        s = expected["summary"]
        if game.game == "chameleon":
            assert score.value["secret_probability"] == pytest.approx(s["final_secret_probability"])
            assert score.value["secret_rank"] == s["final_secret_rank"]
        else:
            spy = s["spy_hit_after_round1"]
            assert (
                math.isnan(score.value["spy_caught"])
                if spy is None
                else (score.value["spy_caught"] == float(spy))
            )
        assert score.value["information_gain_bits"] == pytest.approx(
            s["total_information_gain_bits"]
        )
        turns = [line for line in score.explanation.splitlines() if line[:1].isdigit()]
        assert len(turns) == len(expected["steps"])
        # the summary is a paragraph of its own, not part of the last turn's list item
        assert "\n\nFinal: " in score.explanation
        outcome = sample.scores["game_scorer"]
        assert outcome.answer == game.meta["outcome"]
        assert outcome.value["valid"] == float(game.meta["outcome"] != "invalid")
    # the game metrics over the games are leakage's own
    kind = games[0].game
    rows = {r.metric: r.value for r in metrics_table(games, n_boot=1)[kind]}
    (metrics,) = [s for s in log.results.scores if s.name == "game_scorer"]
    got = {k: m.value for k, m in metrics.metrics.items()}
    assert got and got == pytest.approx({k: v for k, v in rows.items() if k in got})
    assert set(got) == {k for k, v in rows.items() if v is not None}


def test_chameleon_by_its_registered_name(tmp_path: Path, default_index: Path, cooccurrence):
    model = scripted_model()
    log = _run(
        "leakage/chameleon",
        tmp_path,
        task_args={"games": 3, "seed": 3, "backend_options": {"index": str(default_index)}},
        model_roles={"chameleon": model, "non_chameleon": model},
    )
    assert log.eval.task == "leakage/chameleon" and len(log.samples) == 3
    # the same seed deals the same games as `leakage play` would: card, secret, seats
    first = parse_transcript(log.samples[0].store["leakage_transcript"])
    assert first.meta["seed"] == log.samples[0].metadata["seed"]
    # each seat keeps the model that played it, and the roles' bindings are recorded
    assert {p.agent for p in first.players} == {"mockllm/model"}
    assert first.meta["model_roles"] == {
        "chameleon": "mockllm/model",
        "non_chameleon": "mockllm/model",
    }
    assert [s.id for s in log.samples] == ["chameleon-3-000", "chameleon-3-001", "chameleon-3-002"]
    assert log.eval.task_version == "1.0.0"
    assert len(first.turns) == 4
    _check_scores(log, Path(log.location), cooccurrence)
    # the secret probability is averaged over the games
    (p,) = [s for s in log.results.scores if s.name == "secret_probability"]
    values = [s.scores["leakage_scorer"].value["secret_probability"] for s in log.samples]
    assert p.metrics["mean"].value == pytest.approx(sum(values) / len(values))


def test_spygame_through_inspect_eval_in_a_subprocess(
    tmp_path: Path, default_index: Path, cooccurrence
):
    inspect = Path(sys.executable).parent / "inspect"
    env = {**os.environ, "LEAKAGE_TEST_INDEX": str(default_index), "INSPECT_LOG_DIR": ""}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    proc = subprocess.run(
        [str(inspect), "eval", TASK_FILE, *EVAL_FLAGS, str(tmp_path)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = tmp_path.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and len(log.samples) == 2
    _check_scores(log, path, cooccurrence)
    backend = ["-b", "cooccurrence", "-O", f"index={default_index}"]
    # `leakage score` on the log prints the reports the scorer put in the log
    out = subprocess.run(
        [sys.executable, "-m", "leakage", "score", str(path), "-f", "jsonl", *backend],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    reports = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert [r["steps"] for r in reports] == [
        s.scores["leakage_scorer"].metadata["report"]["steps"] for s in log.samples
    ]


def test_the_log_of_another_task_is_an_error_naming_what_is_missing(tmp_path: Path):
    other = Task(dataset=[Sample(input="Say hi.", id="q1")], solver=generate())
    log = _run(other, tmp_path)
    (item,) = list(iter_transcripts([log.location]))
    assert isinstance(item, InvalidTranscript)
    message = str(item)
    assert log.location.split("/")[-1] in message
    assert "sample q1 (epoch 1)" in message and "store.leakage_transcript: missing" in message


def test_a_file_that_is_not_an_eval_log_is_an_error(tmp_path: Path, default_index: Path):
    bad = tmp_path / "run.eval"
    bad.write_text("not a zip", encoding="utf-8")
    (item,) = list(iter_transcripts([bad]))
    assert isinstance(item, InvalidTranscript) and "not an Inspect eval log" in str(item)
    assert str(bad) in str(item)
    # a zip archive that is cut short: Inspect's own error, named
    options = {"index": str(default_index)}
    log = _run(
        "leakage/chameleon", tmp_path / "log", task_args={"games": 1, "backend_options": options}
    )
    bad.write_bytes(Path(log.location).read_bytes()[:2000])
    (item,) = list(iter_transcripts([bad]))
    assert isinstance(item, InvalidTranscript)
    assert "not a readable Inspect eval log" in str(item) and str(bad) in str(item)


def test_json_logs_and_misnamed_logs_are_read_by_content(tmp_path: Path, default_index: Path):
    import shutil

    model = scripted_model()
    args = {
        "task_args": {"games": 2, "seed": 4, "backend_options": {"index": str(default_index)}},
        "model_roles": {"chameleon": model, "non_chameleon": model},
    }
    logs = {
        fmt: Path(_run("leakage/chameleon", tmp_path / fmt, log_format=fmt, **args).location)
        for fmt in ("eval", "json")
    }
    assert logs["json"].suffix == ".json" and logs["json"].read_bytes()[:1] == b"{"
    games = [g.model_dump() for g in iter_transcripts([logs["eval"]])]
    assert len(games) == 2 and all(isinstance(g, dict) for g in games)
    assert [g.model_dump() for g in iter_transcripts([logs["json"]])] == games
    # by content, not by name: a .eval archive named .json, a JSON log named .eval
    for src, name in ((logs["eval"], "run.json"), (logs["json"], "run.eval")):
        shutil.copy(src, tmp_path / name)
        assert [g.model_dump() for g in iter_transcripts([tmp_path / name])] == games
    # a directory finds both, and a plain JSON transcript beside them is still one
    (tmp_path / "eval" / "plain.json").write_text(json.dumps(games[0]), encoding="utf-8")
    found = list(iter_transcripts([tmp_path / "eval", tmp_path / "json"]))
    assert len(found) == 5 and not any(isinstance(g, Exception) for g in found)


class LoopProbe:
    """A backend that notes, for its creation and each call, whether it runs on a thread
    with a running event loop (it must not: scoring blocks)."""

    name = "loop_probe"

    def __init__(self, seen: list[bool]) -> None:
        self.seen = seen
        self.seen.append(self._on_loop())

    @staticmethod
    def _on_loop() -> bool:
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return False
        return True

    def info(self) -> dict[str, str]:
        return {"backend": self.name}

    def loglik(self, clues, candidates, *, category=None):
        import numpy as np

        self.seen.append(self._on_loop())
        return np.zeros((len(clues), len(candidates)))


def test_the_scorer_builds_and_scores_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from leakage.backends import base
    from leakage.inspect import leakage_scorer
    from leakage.scoring import score_transcript as score_directly

    from .conftest import EXAMPLES

    seen: list[bool] = []
    made: list[LoopProbe] = []

    def factory() -> LoopProbe:
        made.append(LoopProbe(seen))
        return made[-1]

    monkeypatch.setitem(base.BACKENDS, "loop_probe", factory)
    games = [
        json.loads(line)
        for line in (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()
    ][:3]
    dataset = [Sample(input="-", id=g["id"], metadata={"leakage_transcript": g}) for g in games]
    log = _run(Task(dataset=dataset, scorer=leakage_scorer(backend="loop_probe")), tmp_path)
    # one backend for every sample, built and called on worker threads only
    assert len(made) == 1 and len(seen) > 1 and not any(seen)
    assert sorted(s.id for s in log.samples) == sorted(g["id"] for g in games)
    by_id = {g["id"]: g for g in games}
    for sample in log.samples:
        expected = score_directly(parse_transcript(by_id[sample.id]), LoopProbe([]))
        assert sample.scores["leakage_scorer"].metadata["report"] == expected.model_dump(
            mode="json"
        )


def _inspect_env(home: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of an ``inspect eval`` run as on a fresh machine with no network:
    the leakage home (its default index) given, an empty tiktoken cache, any request
    through a proxy that does not answer, the hub offline."""
    env = {**os.environ, "LEAKAGE_HOME": str(home), "INSPECT_LOG_DIR": ""}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    (tmp_path / "tiktoken").mkdir(exist_ok=True)
    dead = "http://127.0.0.1:9"
    env.update(
        TIKTOKEN_CACHE_DIR=str(tmp_path / "tiktoken"),
        HTTP_PROXY=dead,
        HTTPS_PROXY=dead,
        http_proxy=dead,
        https_proxy=dead,
        NO_PROXY="",
        no_proxy="",
        HF_HUB_OFFLINE="1",
    )
    return env


def test_the_documented_offline_command_plays_valid_games(tmp_path: Path, shared_home: Path):
    """docs/inspect.md's offline run (``-T games=2`` instead of 4, to keep the suite fast):
    the bundled SmolLM2 through the ``leakage/`` provider, no network, valid games, finite
    header metrics, each seat's model kept."""
    inspect = Path(sys.executable).parent / "inspect"
    command = [str(inspect), "eval", "leakage/chameleon", "--model", "leakage/smollm2-135m"]
    proc = subprocess.run(
        [*command, "-T", "games=2", "--display", "none", "--log-dir", str(tmp_path / "logs")],
        cwd=tmp_path,
        env=_inspect_env(shared_home, tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and len(log.samples) == 2
    games = [parse_transcript(s.store["leakage_transcript"]) for s in log.samples]
    assert all(g.meta["outcome"] != "invalid" for g in games)
    assert all(p.agent == "leakage/smollm2-135m" for g in games for p in g.players)
    header = {f"{s.name}.{k}": m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert header["game_scorer.valid_game_ratio"] == 1.0
    for name in ("secret_probability.mean", "information_gain_bits.mean", "game_scorer.judgement"):
        assert math.isfinite(header[name]), name
    # the moves went through Inspect: usage counted with the model's own tokenizer
    usage = log.stats.model_usage["leakage/smollm2-135m"]
    assert usage.input_tokens > 100 and usage.output_tokens > 0
    assert not any((tmp_path / "tiktoken").iterdir())


def test_epochs_pool_every_game_as_leakage_metrics_does(tmp_path: Path, default_index: Path):
    """Three epochs of four games, the players voting differently in each epoch: the
    header's game metrics are those ``leakage metrics`` computes on the same log (all 12
    games), not the first epoch's; the scores are numbers (no conversion warnings)."""
    model = scripted_model(epoch_player)
    log = _run(
        "leakage/chameleon",
        tmp_path,
        task_args={"games": 4, "seed": 2, "backend_options": {"index": str(default_index)}},
        model_roles={"chameleon": model, "non_chameleon": model},
        epochs=3,
    )
    assert len(log.samples) == 12 and log.eval.config.epochs_reducer == ["leakage/games"]
    games = list(iter_transcripts([Path(log.location)]))
    assert len(games) == 12 and not any(isinstance(g, Exception) for g in games)
    rows = {r.metric: r.value for r in metrics_table(games, n_boot=1)["chameleon"]}
    (header,) = [s for s in log.results.scores if s.name == "game_scorer"]
    got = {k: m.value for k, m in header.metrics.items()}
    assert got == pytest.approx({k: v for k, v in rows.items() if v is not None})
    # the epochs differ, so one epoch's metrics are not all the games'
    first = [g for g, s in zip(games, log.samples, strict=True) if s.epoch == 1]
    one = {r.metric: r.value for r in metrics_table(first, n_boot=1)["chameleon"]}
    assert one["identification_rate"] != rows["identification_rate"]
    # `leakage metrics` on the log prints the same figures
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "leakage",
            "metrics",
            log.location,
            "--json",
            str(tmp_path / "m.json"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    printed = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    table = {r["metric"]: r["value"] for r in printed["metrics"]["chameleon"]}
    assert printed["games"] == 12
    assert got == pytest.approx({k: v for k, v in table.items() if v is not None})
    # the leakage values are the mean over the epochs
    (p,) = [s for s in log.results.scores if s.name == "secret_probability"]
    values = [s.scores["leakage_scorer"].value["secret_probability"] for s in log.samples]
    assert p.metrics["mean"].value == pytest.approx(sum(values) / len(values))


def test_two_models_in_two_roles_are_reported_apart(tmp_path: Path, default_index: Path):
    """Two scripted models, each playing the chameleon in one run and the non-chameleons
    in the other: every seat keeps its model, and ``leakage report --by model`` draws one
    group per model (the counted speakers are the non-chameleons)."""
    a, b = "leakage/scripted-alpha", "leakage/scripted-beta"
    options = {"index": str(default_index)}
    logs = []
    for cham, non in ((a, b), (b, a)):
        log = _run(
            "leakage/chameleon",
            tmp_path / cham.split("-")[-1],
            task_args={"games": 3, "seed": 2, "backend_options": options},
            model_roles={"chameleon": cham, "non_chameleon": non},
        )
        for sample in log.samples:
            game = parse_transcript(sample.store["leakage_transcript"])
            assert {p.agent for p in game.players if p.role == "chameleon"} == {cham}
            assert {p.agent for p in game.players if p.role == "non-chameleon"} == {non}
            assert game.meta["model_roles"] == {"chameleon": cham, "non_chameleon": non}
            assert game.meta["outcome"] != "invalid"
        logs.append(log.location)
    backend = ["-b", "cooccurrence", "-O", f"index={default_index}"]
    leakage = [sys.executable, "-m", "leakage"]
    for command in (
        [*leakage, "batch", *logs, "--out", str(tmp_path / "results"), *backend],
        [
            *leakage,
            "report",
            str(tmp_path / "results"),
            "--by",
            "model",
            "-o",
            str(tmp_path / "report"),
        ],
    ):
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:]
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "results" / "steps").to_pydict()
    assert set(table["game_model"]) == {a, b}
    assert {(m, r) for m, r in zip(table["model"], table["role"], strict=True)} == {
        (a, "chameleon"),
        (a, "non-chameleon"),
        (b, "chameleon"),
        (b, "non-chameleon"),
    }
    import csv

    with (tmp_path / "report" / "leakage_by_group.csv").open(encoding="utf-8") as f:
        groups = {row["group"]: int(row["games"]) for row in csv.DictReader(f)}
    assert groups == {a: 3, b: 3}


def _model_configs(log) -> dict[str, set[tuple[int | None, float | None]]]:
    """Each model's (max_tokens, temperature) over every model call of the log."""
    out: dict[str, set[tuple[int | None, float | None]]] = {}
    for sample in log.samples:
        for event in sample.events:
            if event.event == "model":
                out.setdefault(event.model, set()).add(
                    (event.config.max_tokens, event.config.temperature)
                )
    return out


def test_inspect_generation_settings_reach_every_role(tmp_path: Path, default_index: Path):
    """``--max-tokens`` and ``--temperature`` hold for every role's model (Inspect gives a
    role's model only the operational settings), a role's own settings win, and the game's
    own max_tokens (64 a Chameleon move) applies only where nobody set one."""
    from inspect_ai.model import GenerateConfig, get_model

    a, b = "leakage/scripted-a", "leakage/scripted-b"
    args = {"games": 1, "backend_options": {"index": str(default_index)}}
    log = _run(
        "leakage/chameleon",
        tmp_path / "plain",
        task_args=args,
        model_roles={"chameleon": a, "non_chameleon": b},
    )
    assert _model_configs(log) == {a: {(64, None)}, b: {(64, None)}}
    own = get_model(a, config=GenerateConfig(max_tokens=5), memoize=False)
    log = _run(
        "leakage/chameleon",
        tmp_path / "set",
        task_args=args,
        model_roles={"chameleon": own, "non_chameleon": b},
        max_tokens=7,
        temperature=0.5,
    )
    assert _model_configs(log) == {a: {(5, 0.5)}, b: {(7, 0.5)}}


def test_a_wrong_backend_or_an_unbound_role_stops_before_any_model_call(tmp_path: Path):
    """A typo in ``-T backend``, in ``backend_options``, or a game role no model plays is
    an error when the task is built: no model was called."""
    from inspect_ai.model import get_model

    from leakage.errors import InvalidInput, UnknownBackend
    from leakage.inspect._solver import UnboundRole

    from .inspect_tasks import scripted_player

    calls: list[int] = []

    def player(*args):
        calls.append(1)
        return scripted_player(*args)

    model = get_model("mockllm/model", custom_outputs=player, memoize=False)
    for kw, error, said in (
        ({"task_args": {"backend": "cooccurence"}}, UnknownBackend, "'cooccurence'"),
        ({"task_args": {"backend_options": {"indx": "x"}}}, InvalidInput, "'indx'"),
        ({"model": "none", "model_roles": {"chameleon": model}}, UnboundRole, "non_chameleon"),
    ):
        with pytest.raises(error, match=said):
            eval(
                "leakage/chameleon", **{"model": model, **kw}, display="none", log_dir=str(tmp_path)
            )
        gc.collect()
    assert calls == []


def test_the_eval_cards_default_game_set_is_what_the_tasks_deal(leakage_home: Path):
    """docs/inspect.md lists the default games (seed 0, 10 games) so that two labs can see
    they ran the same ones: each listed row is the game the task deals."""
    from leakage.games import ChameleonConfig, ChameleonGame, SpyGame, SpyGameConfig
    from leakage.inspect import chameleon, spygame

    text = (REPO / "docs" / "inspect.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `((?:chameleon|spygame)-0-\d{3})` \| (\d+) \| (.*?) \|$", text, re.M)
    listed = {sid: (int(seed), rest) for sid, seed, rest in rows}
    dealt = {}
    for task in (chameleon(), spygame()):
        for sample in task.dataset:
            m = sample.metadata
            if m["game"] == "chameleon":
                game = ChameleonGame(ChameleonConfig(**m["config"]))
                game.reset(m["seed"], game_id=m["game_id"])
                t = game.transcript({})
                (cham,) = [p.id for p in t.players if p.role == "chameleon"]
                rest = f"{t.category} | {t.secret} | {cham}"
            else:
                spy = SpyGame(SpyGameConfig(**m["config"]))
                spy.reset(m["seed"], game_id=m["game_id"])
                t = spy.transcript({})
                words = {p.role: p.word for p in t.players}
                (who,) = [p.id for p in t.players if p.role == "spy"]
                rest = f"{words['civilian']} / {words['spy']} | {who}"
            dealt[sample.id] = (m["seed"], rest)
    assert len(dealt) == 20 and listed == dealt


def test_the_leakage_provider_names_the_model_args_it_takes():
    from inspect_ai.model import get_model

    with pytest.raises(ValueError, match=r"model args colour are not taken \(it takes: none\)"):
        get_model("leakage/scripted", colour="blue", memoize=False)
    with pytest.raises(ValueError, match="it takes: kind, device, threads, precision, models_dir"):
        get_model("leakage/smollm2-135m", temperature_bias=1, memoize=False)
