"""The ``leakage`` command line, run as a real process."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .cli_support import run_leakage
from .conftest import EXAMPLES


def run(
    *args: str, home: Path, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_leakage(*args, home=home, env=env_extra)


def test_score_table(leakage_home: Path):
    p = run("score", str(EXAMPLES / "chameleon_sports.json"), home=leakage_home)
    assert p.returncode == 0, p.stderr
    assert "racket" in p.stdout and "Tennis" in p.stdout and "P(secret)" in p.stdout


def test_score_json_report_shape(leakage_home: Path, tmp_path: Path):
    out = tmp_path / "r.json"
    p = run(
        "score",
        str(EXAMPLES / "spygame_two_spies.json"),
        str(EXAMPLES / "chameleon_sports.json"),
        "--format",
        "json",
        "--out",
        str(out),
        home=leakage_home,
    )
    assert p.returncode == 0, p.stderr
    reports = json.loads(out.read_text())
    assert [r["game"] for r in reports] == ["spygame", "chameleon"]
    for r in reports:
        assert r["format"] == "leakage.report/1"
        assert {"game_id", "backend", "candidates", "secret", "steps"} <= r.keys()
        for s in r["steps"]:
            assert {
                "player",
                "text",
                "counted",
                "posterior",
                "entropy_bits",
                "information_gain_bits",
                "secret_probability",
                "secret_rank",
            } <= s.keys()
            assert set(s["posterior"]) == set(r["candidates"])
    assert all("spy_posterior" in s and s["spy_posterior"] for s in reports[0]["steps"])


def test_bad_records_exit_2_and_the_rest_are_still_scored(leakage_home: Path):
    p = run("score", str(EXAMPLES / "bad"), "--format", "jsonl", home=leakage_home)
    assert p.returncode == 2
    lines = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(lines) == 2  # the two good lines of mixed.jsonl
    err = p.stderr
    assert "empty.json: empty file" in err
    assert "latin1.json: not UTF-8" in err
    assert "malformed.json: malformed JSON" in err
    assert "mixed.jsonl, record line 2: secret:" in err
    assert "unknown_player.json, record 0: turns[3].player: unknown player 'p5'" in err
    assert err.count("error:") == 5


def test_missing_fields_are_named(leakage_home: Path, tmp_path: Path):
    bad = tmp_path / "g.json"
    bad.write_text(json.dumps({"format": "leakage.transcript/1", "game": "chameleon", "id": "x"}))
    p = run("score", str(bad), home=leakage_home)
    assert p.returncode == 2
    for field in ("category", "candidates", "players"):
        assert f"{field}: Field required" in p.stderr


def test_schema_is_json_schema():
    p = run("schema", home=Path("/nonexistent"))
    assert p.returncode == 0
    doc = json.loads(p.stdout)
    assert doc["title"] == "leakage.transcript/1"
    assert {"ChameleonTranscript", "SpyGameTranscript"} <= set(doc["$defs"])
    p = run("schema", "report", home=Path("/nonexistent"))
    assert json.loads(p.stdout)["title"] == "leakage.report/1"


def test_corpus_build_from_user_files(tmp_path: Path):
    docs = tmp_path / "docs.txt"
    docs.write_text("tennis racket\nice hockey puck\ngolf club\n", encoding="utf-8")
    out = tmp_path / "mine.sqlite"
    p = run("corpus", "build", "--from", str(docs), "--out", str(out), home=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "indexed 3 documents" in p.stderr
    game = json.loads((EXAMPLES / "chameleon_sports.json").read_text())
    p = run(
        "score",
        str(EXAMPLES / "chameleon_sports.json"),
        "--index",
        str(out),
        "-f",
        "json",
        home=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    (report,) = json.loads(p.stdout)
    assert report["backend_info"]["count_source"]["documents"] == 3
    assert report["steps"][0]["text"] == game["turns"][0]["text"]


def test_default_index_is_built_on_first_use(tmp_path: Path):
    p = run("score", str(EXAMPLES / "chameleon_sports.json"), "-f", "jsonl", home=tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "corpus" / "default.sqlite").is_file()
    p = run("corpus", "info", home=tmp_path)
    assert "wordnet-3.0" in p.stdout


@pytest.mark.parametrize("fmt", ["table", "json", "jsonl"])
def test_empty_input_file_gives_exit_2(leakage_home: Path, tmp_path: Path, fmt: str):
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    p = run("score", str(empty), "-f", fmt, home=leakage_home)
    assert p.returncode == 2 and "empty file" in p.stderr


def test_batch_into_a_used_out_says_why_and_not_that_a_run_stopped(
    leakage_home: Path, tmp_path: Path
):
    args = ("batch", str(EXAMPLES / "chameleon_sports.json"), "--out", str(tmp_path / "o"))
    assert run(*args, "--workers", "0", "--no-progress", home=leakage_home).returncode == 0
    p = run(*args, "--workers", "0", "--no-progress", home=leakage_home)
    assert p.returncode == 2 and "already holds batch results" in p.stderr
    assert "stopped" not in p.stderr


def test_web_source_dry_run_budget_and_cache(tmp_path: Path):
    """`--source serpapi` against a local fake of the real API: dry run, budget, cache."""
    from tests.fakes.web_apis import SERPAPI_KEY, FakeWebApis

    game = EXAMPLES / "chameleon_sports.json"
    with FakeWebApis() as fake:
        env = {"SERPAPI_API_KEY": SERPAPI_KEY}
        web = ("--source", "serpapi", "--endpoint", fake.serpapi_url)
        p = run("score", str(game), *web, "--dry-run", home=tmp_path, env_extra=env)
        assert p.returncode == 0, p.stderr
        assert "1 games need" in p.stdout and fake.hits() == 0
        needed = int(p.stdout.split("need ")[1].split()[0].replace(",", ""))

        p = run(
            "score", str(game), *web, "--budget", "5", "-f", "json", home=tmp_path, env_extra=env
        )
        assert p.returncode == 5, p.stderr
        assert "stopped:" in p.stderr and "--budget" in p.stderr
        assert json.loads(p.stdout) == []
        assert fake.hits() == 5

        p = run("score", str(game), *web, "--dry-run", home=tmp_path, env_extra=env)
        assert f"{needed - 5:,} are not cached" in p.stdout  # what was answered stayed cached

        p = run("score", str(game), *web, "-f", "json", home=tmp_path, env_extra=env)
        assert p.returncode == 0, p.stderr
        assert fake.hits() == needed  # every query went out exactly once
        (report,) = json.loads(p.stdout)
        assert report["backend_info"]["count_source"]["source"] == "serpapi"


def test_web_source_without_key_says_which_variable(tmp_path: Path):
    p = run(
        "score",
        str(EXAMPLES / "chameleon_sports.json"),
        "--source",
        "serpapi",
        home=tmp_path,
        env_extra={"SERPAPI_API_KEY": ""},
    )
    assert p.returncode == 3 and "SERPAPI_API_KEY" in p.stderr


def test_error_messages_are_printed_verbatim(monkeypatch, capsys):
    """Brackets in a message (an extra's name, a field path) are not taken as markup."""
    import leakage.cli as cli
    from leakage.errors import BackendUnavailable

    def fail() -> None:
        raise BackendUnavailable("needs its extra: pip install 'leakage[service]' (turns[0])")

    monkeypatch.setattr(cli, "app", fail)
    with pytest.raises(SystemExit) as exit_info:
        cli.main()
    assert exit_info.value.code == 3
    assert "pip install 'leakage[service]' (turns[0])" in capsys.readouterr().err


def test_a_missing_extra_is_named():
    from leakage.cli.batch import _need_extra
    from leakage.errors import BackendUnavailable

    with pytest.raises(BackendUnavailable, match=r"pip install 'leakage\[batch\]'"):
        _need_extra("leakage_no_such_module", "batch")


# -- options that take one of a fixed set of values ------------------------------------------

GAME = str(EXAMPLES / "chameleon_sports.json")
BACKENDS = ("answers", "cooccurrence", "embedding", "ensemble", "judge", "listener")
FORMATS = (
    "auto",
    "leakage",
    "ck-arena",
    "clembench-guesswhat",
    "clembench-taboo",
    "inspect",
    "spygame-liang",
    "textarena-taboo",
)
BATCH = ("batch", GAME, "-o", "OUT")
SPLITS = ("splits", "build", GAME, "-o", "OUT")
TOURNAMENT = ("cheatsheet-tournament", "chameleon", "--agents", "x", "--role", "chameleon")

CHOICE_OPTIONS = [
    # (the command before the option, the option, its choices)
    (("score", GAME), "--backend", BACKENDS),
    (("score", GAME), "--input-format", FORMATS),
    (("score", GAME), "--format", ("table", "json", "jsonl")),
    (("score", GAME), "--spy-assignment", ("known", "marginalise")),
    (("score", GAME), "--source", ("local", "serpapi", "google-cse", "infini-gram")),
    (("score", GAME), "--estimator", ("conditional", "npmi", "ngd")),
    (("score", GAME), "--pooling", ("mean", "sum")),
    (("score", GAME, "-b", "judge"), "--judge-mode", ("likelihood", "elicitation")),
    (("score", GAME, "-b", "embedding"), "--precision", ("auto", "fp32", "bf16")),
    (BATCH, "--backend", BACKENDS),
    (BATCH, "--input-format", FORMATS),
    (BATCH, "--spy-assignment", ("known", "marginalise")),
    (BATCH, "--engine", ("local", "ray")),
    (("report", "OUT", "-o", "OUT"), "--by", ("model", "matchup", "difficulty", "role")),
    (("calibrate", GAME), "--input-format", FORMATS),
    (("metrics", GAME), "--input-format", FORMATS),
    (SPLITS, "--describer", ("wordnet", "llm", "file")),
    (SPLITS, "--method", ("terciles", "thresholds")),
    (("vocab", "build", "--out", "OUT"), "--kind", ("auto", "flat", "hnsw", "ivf", "numpy")),
    (("guess", "ice"), "--format", ("table", "json")),
    (("play", "chameleon"), "--lessons", ("llm", "rules", "auto")),
    (TOURNAMENT, "--lessons", ("llm", "rules", "auto")),
    (TOURNAMENT[:4], "--role", ("non-chameleon", "chameleon", "civilian", "spy")),
]


@pytest.mark.parametrize(
    ("command", "option", "values"),
    CHOICE_OPTIONS,
    ids=[f"{c[0]} {o}" for c, o, _ in CHOICE_OPTIONS],
)
def test_a_value_outside_the_choices_is_a_usage_error(
    command: tuple[str, ...], option: str, values: tuple[str, ...], tmp_path: Path
):
    """Exit code 2 and one line naming the option and every choice, before anything runs
    (no traceback, no model loaded or converted, nothing written)."""
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    p = run(*args, option, "no-such-value", home=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    (line,) = [x for x in p.stderr.splitlines() if "Invalid value" in x]
    assert f"'{option}'" in line and "'no-such-value' is not one of" in line
    assert all(f"'{v}'" in line for v in values), line
    assert list(tmp_path.iterdir()) == []


def test_the_choices_are_the_librarys():
    """The sets the CLI accepts are those the library knows: a backend, input format, count
    source or estimator added to the library is offered by the CLI too, and every choice is
    one the library takes."""
    from typing import get_args

    import numpy as np

    from leakage._runtime import resolve_precision
    from leakage.backends import backend_names
    from leakage.backends.cooccurrence import ESTIMATORS, POOLINGS
    from leakage.backends.cooccurrence.web import WEB_SOURCES
    from leakage.backends.judge import DIRECTIONS, MODES
    from leakage.cli import _options as o
    from leakage.games.chameleon import ROLES as CHAMELEON_ROLES
    from leakage.games.spygame import ROLES as SPY_ROLES
    from leakage.llm._local import NORMALISERS
    from leakage.posterior import SPY_ASSIGNMENTS, spy_posterior
    from leakage.transcripts import input_formats

    assert list(o.BACKENDS.values()) == backend_names()
    assert o.INPUT_FORMATS.values() == input_formats()
    assert sorted(o.COUNT_SOURCES.values()) == sorted(["local", *WEB_SOURCES])
    assert o.ROLES.values() == (*CHAMELEON_ROLES, *SPY_ROLES)
    assert get_args(o.Estimator) == ESTIMATORS
    assert get_args(o.Pooling) == POOLINGS
    assert get_args(o.JudgeMode) == MODES
    assert get_args(o.Normaliser) == NORMALISERS
    assert get_args(o.Direction) == DIRECTIONS
    assert get_args(o.SpyAssignment) == SPY_ASSIGNMENTS
    assert all(resolve_precision(p) in ("fp32", "bf16") for p in get_args(o.Precision))
    for assignment in get_args(o.SpyAssignment):
        assert spy_posterior(np.zeros(3), assignment=assignment).sum() == pytest.approx(1.0)


def test_help_lists_the_choices():
    p = run("score", "--help", home=Path("/nonexistent"))
    assert p.returncode == 0, p.stderr
    text = " ".join(p.stdout.split())  # the help column wraps
    assert "answers, cooccurrence, embedding, ensemble, judge or listener" in text
    assert "conditional, npmi or ngd" in text
    assert "google-cse, infini-gram, local or serpapi" in text  # the registry's, sorted
    formats = "ck-arena, clembench-guesswhat, clembench-taboo, inspect, spygame-liang"
    unboxed = " ".join(p.stdout.replace("\u2502", " ").split())  # the list wraps in the box
    assert f"auto, leakage, {formats} or textarena-taboo" in unboxed
    assert "<known|marginalise>" in text and "<mean|sum>" in text and "<auto|fp32|bf16>" in text
