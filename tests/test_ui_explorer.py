"""The explorer's routes over HTTP (in-process): the page and its files, the example
transcripts, the clue preview, a job's curves and games. The page itself, in a browser, is
tested by tests/test_explorer_*.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import EXAMPLES
from .test_service import SPORTS, Api, assert_error, plain_api, settings_for

HOOKS = [
    "status", "api-key", "api-key-save", "example-select", "transcript-input", "score-button",
    "file-input", "game-select", "backend-select", "compare-select", "heatmap",
    "heatmap-compare", "disagreement", "tooltip", "turns", "entropy-chart", "psecret-chart",
    "spy-heatmap", "votes", "clue-input", "clue-button", "clue-result", "job-input", "job-open",
    "curves", "curve-group", "curve-games", "clue-player", "outliers", "curve-filter",
    "job-file", "job-paths", "job-submit", "job-list", "job-refresh", "job-back", "job-actions",
    "job-records-table", "records-filter", "records-show", "records-count", "model-select",
    "pairs-table", "seat-select", "seat-note", "game-seat", "leaderboard-seat", "curves-seat",
    "models-seat", "plane-seat",
]  # fmt: skip
"""The ids the page promises (docs/explorer.md, "For tests"), which the browser tests use."""


api = plain_api


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    a = Api(settings_for(tmp_path_factory.mktemp("ui-keys"), default_index, api_keys=["k1"]))
    yield a
    a.close()


SVG_NS = "http://www.w3.org/2000/svg"
"""The SVG namespace: a name in the scripts, not a location anything is loaded from."""


# -- the page and its files ---------------------------------------------------------------


def test_ui_serves_the_page_with_every_hook(api: Api):
    r = api.get("/ui")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'self'" in r.headers["content-security-policy"]
    ids = set(re.findall(r'id="([^"]+)"', r.text))
    assert set(HOOKS) <= ids, set(HOOKS) - ids
    assert 'data-state="loading"' in r.text
    # labelled controls: every input, select and textarea has a <label for=...>
    controls = re.findall(r'<(?:input|select|textarea)[^>]*id="([^"]+)"', r.text)
    labelled = set(re.findall(r'<label for="([^"]+)"', r.text))
    assert controls and set(controls) <= labelled, set(controls) - labelled
    # offline: nothing is loaded from another host
    assert not re.search(r'(?:src|href)="(?:https?:)?//', r.text)


def test_root_redirects_to_the_page_keeping_the_query(api: Api):
    r = api.get("/?example=chameleon_sports&backend=cooccurrence")
    assert r.status_code == 307
    assert r.headers["location"] == "/ui?example=chameleon_sports&backend=cooccurrence"
    assert api.get("/").headers["location"] == "/ui"


@pytest.mark.parametrize(
    ("name", "ctype"),
    [
        ("app.js", "text/javascript; charset=utf-8"),
        ("api.js", "text/javascript; charset=utf-8"),
        ("charts.js", "text/javascript; charset=utf-8"),
        ("state.js", "text/javascript; charset=utf-8"),
        ("views.js", "text/javascript; charset=utf-8"),
        ("jobs.js", "text/javascript; charset=utf-8"),
        ("export.js", "text/javascript; charset=utf-8"),
        ("models.js", "text/javascript; charset=utf-8"),
        ("dom.js", "text/javascript; charset=utf-8"),
        ("leaderboard.js", "text/javascript; charset=utf-8"),
        ("style.css", "text/css; charset=utf-8"),
    ],
)
def test_assets_are_served_with_their_type(api: Api, name: str, ctype: str):
    r = api.get(f"/ui/assets/{name}")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == ctype
    assert r.headers["x-content-type-options"] == "nosniff"
    urls = set(re.findall(r"https?://[^\s\"'`]+", r.text)) - {SVG_NS}
    assert not urls  # no CDN, no font host


def test_every_module_the_page_imports_is_served(api: Api):
    page = api.get("/ui").text
    seen, todo = set(), re.findall(r'src="ui/assets/([^"]+)"', page)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        r = api.get(f"/ui/assets/{name}")
        assert r.status_code == 200, name
        todo += re.findall(r'from "\./([^"]+)"', r.text)
    assert {"app.js", "api.js", "state.js", "views.js", "charts.js", "jobs.js", "export.js"} <= seen
    assert {"models.js", "dom.js", "leaderboard.js"} <= seen


def test_missing_asset_is_404(api: Api):
    assert api.get("/ui/assets/nope.js").status_code == 404
    assert api.get("/ui/assets/../../app.py").status_code == 404


def test_page_and_assets_need_no_key_but_the_api_does(keyed: Api):
    assert keyed.get("/ui").status_code == 200
    assert keyed.get("/").status_code == 307
    assert keyed.get("/ui/assets/app.js").status_code == 200
    for url in ("/v1/examples", "/v1/examples/chameleon_sports", "/v1/backends"):
        assert_error(keyed.get(url), 401, "unauthorized")
    # a path under the assets' folder reaches the files only, never a route
    r = keyed.get("/ui/assets/../../v1/examples")
    assert r.status_code in (401, 404) and "examples" not in r.text
    r = keyed.get("/v1/examples", headers={"X-API-Key": "k1"})
    assert r.status_code == 200


# -- examples -----------------------------------------------------------------------------


def test_examples_list_the_shipped_transcripts_not_the_bad_ones(api: Api):
    r = api.get("/v1/examples")
    assert r.status_code == 200, r.text
    found = {e["name"]: e for e in r.json()["examples"]}
    on_disk = {p.stem for p in EXAMPLES.glob("*.json*") if p.is_file()}
    assert set(found) == on_disk and "chameleon_sports" in found
    assert not any("bad" in n for n in found)
    batch = found["chameleon_batch"]
    assert batch["media_type"] == "application/x-ndjson"
    assert len(batch["games"]) == len((EXAMPLES / "chameleon_batch.jsonl").read_text().splitlines())
    sports = found["chameleon_sports"]["games"][0]
    assert sports == {
        "id": "example-chameleon-sports", "game": "chameleon", "label": "Sports", "players": 4,
        "turns": 4, "matchup": "gpt-4o + claude vs scripted", "difficulty": "easy",
    }  # fmt: skip
    spy = found["spygame_fruit"]["games"][0]
    assert spy["game"] == "spygame" and spy["label"] == "Mango / Papaya"


def test_example_is_the_file_as_shipped(api: Api):
    r = api.get("/v1/examples/chameleon_sports")
    assert r.status_code == 200
    assert r.headers["content-type"] == "application/json"
    assert r.content == SPORTS
    r = api.get("/v1/examples/chameleon_batch")
    assert r.headers["content-type"] == "application/x-ndjson"
    assert [json.loads(x)["game"] for x in r.text.splitlines()] == ["chameleon"] * 6
    # what it returns scores as it is
    assert api.post("/v1/score", content=api.get("/v1/examples/spygame_fruit").content).is_success


def test_unknown_or_malformed_example_names(api: Api):
    err = assert_error(api.get("/v1/examples/nope"), 404, "example_not_found", "name")
    assert "chameleon_sports" in err["message"]
    assert_error(api.get("/v1/examples/bad"), 404, "example_not_found", "name")
    assert api.get("/v1/examples/bad%2Fmixed").status_code in (404, 422)
    assert_error(api.get("/v1/examples/" + "x" * 65), 422, "?")
    assert_error(api.get("/v1/examples/a.json"), 422, "?")


# -- POST /v1/score/preview ---------------------------------------------------------------


def _sports() -> dict:
    return json.loads(SPORTS)


def test_preview_equals_scoring_the_game_with_the_clue_appended(api: Api):
    r = api.post("/v1/score/preview", json={"transcript": _sports(), "clue": "net"})
    assert r.status_code == 200, r.text
    res = r.json()
    # p3 is the chameleon; after p4 the next player is p1, who says "net" in round 2
    assert (res["player"], res["role"], res["turn"], res["clue"]) == (
        "p1", "non-chameleon", 5, "net",
    )  # fmt: skip
    full = _sports()
    full["turns"].append({"player": "p1", "text": "net", "round": 2})
    rep = api.post("/v1/score", json=full).json()
    last, before = rep["steps"][-1], rep["steps"][-2]
    after = res["after"]
    assert after["secret_probability"] == pytest.approx(last["secret_probability"])
    assert after["entropy_bits"] == pytest.approx(last["entropy_bits"])
    assert after["information_gain_bits"] == pytest.approx(last["information_gain_bits"])
    assert after["posterior"] == pytest.approx(last["posterior"])
    assert res["before"]["secret_probability"] == pytest.approx(before["secret_probability"])
    assert after["information_gain_bits"] == pytest.approx(
        res["before"]["entropy_bits"] - after["entropy_bits"]
    )
    assert after["top_candidate"] == max(last["posterior"], key=last["posterior"].get)


def test_preview_after_some_turns_by_a_chosen_player(api: Api):
    r = api.post(
        "/v1/score/preview",
        json={"transcript": _sports(), "clue": "racket", "turns": 0, "player": "p2"},
    )
    assert r.status_code == 200, r.text
    res = r.json()
    assert res["turn"] == 1 and res["player"] == "p2"
    assert res["before"] == {"entropy_bits": 4.0, "secret_probability": 1 / 16, "secret_rank": None}
    # the same clue first, by another speaker, as the real game's first step
    first = api.post("/v1/score", content=SPORTS).json()["steps"][0]
    assert res["after"]["secret_probability"] == pytest.approx(first["secret_probability"])
    # the chameleon's clue is not counted (unless include_chameleon)
    cham = api.post(
        "/v1/score/preview",
        json={"transcript": _sports(), "clue": "net", "turns": 2, "player": "p3"},
    ).json()
    assert cham["after"]["counted"] is False
    assert cham["after"]["information_gain_bits"] == 0
    counted = api.post(
        "/v1/score/preview",
        params={"include_chameleon": "true"},
        json={"transcript": _sports(), "clue": "net", "turns": 2, "player": "p3"},
    ).json()
    assert counted["after"]["counted"] is True


def test_preview_spygame_statement(api: Api):
    spy = json.loads((EXAMPLES / "spygame_fruit.json").read_bytes())
    r = api.post("/v1/score/preview", json={"transcript": spy, "clue": "It is orange inside."})
    assert r.status_code == 200, r.text
    res = r.json()
    assert res["game"] == "spygame" and res["turn"] == len(spy["turns"]) + 1
    # after p4 (the last to speak, round 2) comes p5, out since round 1, then p1 in round 3
    assert (res["player"], res["speaker_word"]) == ("p1", "Mango")
    # after round 1's p4, p5 still speaks (eliminated after its round-1 statement)
    early = api.post("/v1/score/preview", json={"transcript": spy, "clue": "x", "turns": 4})
    assert early.json()["player"] == "p5"
    by_spy = api.post(
        "/v1/score/preview",
        json={"transcript": spy, "clue": "It is orange inside.", "player": "p4"},
    ).json()
    assert by_spy["speaker_word"] == "Papaya"
    full = {**spy, "turns": [*spy["turns"], {"player": "p4", "text": "It is orange inside."}]}
    full["turns"][-1]["round"] = by_spy_round = full["turns"][-2]["round"] + 1
    last = api.post("/v1/score", json=full).json()["steps"][-1]
    assert by_spy["after"]["secret_probability"] == pytest.approx(last["secret_probability"])
    assert by_spy_round == 3


def test_preview_spygame_before_is_the_new_speakers_word(api: Api):
    """The figures before the statement are about the word of whoever says it: after p4
    (the spy, Papaya), p1's "before" is P(Mango) after p4's statement, not P(Papaya)."""
    spy = json.loads((EXAMPLES / "spygame_fruit.json").read_bytes())
    last = api.post("/v1/score", json=spy).json()["steps"][-1]
    assert last["speaker_word"] == "Papaya"
    res = api.post("/v1/score/preview", json={"transcript": spy, "clue": "It is sweet."}).json()
    assert res["speaker_word"] == "Mango"
    before = res["before"]
    assert before["secret_probability"] == pytest.approx(last["posterior"]["Mango"])
    post = last["posterior"]
    assert before["secret_rank"] == 1 + sum(q > post["Mango"] for q in post.values())
    assert before["entropy_bits"] == pytest.approx(last["entropy_bits"])


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"transcript": {"game": "chameleon"}, "clue": "x"}, "body.transcript.id"),
        ({"transcript": "text", "clue": "x"}, "body.transcript"),
        ({"clue": "x"}, "body.transcript"),
        ({"transcript": None, "clue": "x"}, "body.transcript"),
        ({"clue": "x", "transcript": {}, "extra": 1}, "body.extra"),
        ({"transcript": "SPORTS", "clue": "   "}, "body.clue"),
        ({"transcript": "SPORTS", "clue": ""}, "body.clue"),
        ({"transcript": "SPORTS", "clue": 3}, "body.clue"),
        ({"transcript": "SPORTS", "clue": "x", "player": "p9"}, "body.player"),
        ({"transcript": "SPORTS", "clue": "x", "turns": 5}, "body.turns"),
        ({"transcript": "SPORTS", "clue": "x", "turns": -1}, "body.turns"),
        ({"transcript": "SPORTS", "clue": "x", "turns": "2"}, "body.turns"),
        ({"transcript": "SPORTS", "clue": "x" * 20_000}, "body.clue"),
    ],
)
def test_preview_bad_input_is_422_naming_the_field(api: Api, body: dict, field: str):
    if body.get("transcript") == "SPORTS":
        body = {**body, "transcript": _sports()}
    err = assert_error(api.post("/v1/score/preview", json=body), 422, "?")
    assert err["field"] == field or (err.get("problems") or [{}])[0].get("field") == field, err


def test_preview_bad_bodies_and_params(api: Api):
    assert_error(api.post("/v1/score/preview", content=b"{not json"), 422, "?")
    assert_error(api.post("/v1/score/preview", content=b"[1]"), 422, "?", "body")
    deep = {"transcript": {**_sports(), "meta": json.loads("[" * 100 + "]" * 100)}, "clue": "x"}
    assert_error(api.post("/v1/score/preview", json=deep), 422, "?")
    r = api.post(
        "/v1/score/preview", params={"backend": "nope"}, json={"transcript": _sports(), "clue": "x"}
    )
    assert_error(r, 422, "unknown_backend")
    long = {"transcript": _sports(), "clue": "x" * 5000}  # within the model, over the server's
    assert_error(api.post("/v1/score/preview", json=long), 422, "game_too_large")


def test_preview_needs_the_key(keyed: Api):
    body = {"transcript": _sports(), "clue": "net"}
    assert_error(keyed.post("/v1/score/preview", json=body), 401, "unauthorized")
    r = keyed.post("/v1/score/preview", json=body, headers={"Authorization": "Bearer k1"})
    assert r.status_code == 200, r.text


def test_preview_is_in_the_openapi_schema(api: Api):
    op = api.get("/openapi.json").json()["paths"]["/v1/score/preview"]["post"]
    assert set(op["responses"]) >= {"200", "401", "422"}
    assert op["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "PreviewRequest"
    )


# -- a job's curves and games -------------------------------------------------------------


def _finished_job(api: Api, body: bytes) -> str:
    from .test_service import wait_job

    r = api.post("/v1/jobs", content=body, headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"])
    assert job["state"] == "done", job
    return job["id"]


@pytest.fixture(scope="module")
def job_id(api: Api) -> str:
    batch = (EXAMPLES / "chameleon_batch.jsonl").read_bytes()
    return _finished_job(api, batch + b'{"not": "a transcript"}\n')


@pytest.mark.parametrize("by", ["model", "matchup", "difficulty"])
def test_job_curves_are_leakage_reports_curves(
    api: Api, job_id: str, by: str, tmp_path: Path, leakage_home: Path
):
    """The same numbers as ``leakage batch`` + the library's curves on the same games."""
    from leakage.batch import BatchJob, run_batch
    from leakage.curves._compute import curves
    from leakage.curves._data import load_steps

    r = api.get(f"/v1/jobs/{job_id}/curves", params={"by": by})
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["job"], got["state"], got["by"]) == (job_id, "done", by)
    assert (got["games"], got["failed"]) == (6, 1)
    run_batch(BatchJob(inputs=[EXAMPLES / "chameleon_batch.jsonl"], out=tmp_path / "b", workers=0))
    want = curves(load_steps(tmp_path / "b", by), max_clues=16, replicates=1000, seed=0)
    assert len(got["curves"]) == len(want)
    for g, w in zip(got["curves"], want, strict=True):
        assert g == pytest.approx(w), (g, w)
    assert got["groups"][: len({w["group"] for w in want})] == list(
        dict.fromkeys(w["group"] for w in want)
    )
    records = {g["record"]: g for g in got["game_list"]}
    assert sorted(records) == [0, 1, 2, 3, 4, 5]  # record 6 failed
    assert records[4]["game_id"] == "example-chameleon-kitchen"


def test_job_curves_points_list_their_games(api: Api, job_id: str):
    got = api.get(f"/v1/jobs/{job_id}/curves", params={"by": "difficulty"}).json()
    assert set(got["groups"]) == {"easy", "medium", "hard", "unknown"}
    for point in got["curves"]:
        games = [
            g for g in got["game_list"]
            if g["group"] == point["group"] and g["clues"] >= max(1, point["m"])
        ]  # fmt: skip
        assert len(games) == point["games"], point


def test_job_curves_bad_input(api: Api, job_id: str):
    assert_error(api.get(f"/v1/jobs/{'0' * 32}/curves"), 404, "job_not_found", "id")
    assert_error(api.get("/v1/jobs/nope/curves"), 422, "?")
    assert_error(api.get(f"/v1/jobs/{job_id}/curves", params={"by": "role"}), 422, "?", "by")
    assert_error(api.get(f"/v1/jobs/{job_id}/curves", params={"max_clues": 0}), 422, "?")
    assert_error(api.get(f"/v1/jobs/{job_id}/curves", params={"replicates": 5}), 422, "?")


def test_job_game_has_its_report_and_transcript(api: Api, job_id: str):
    r = api.get(f"/v1/jobs/{job_id}/games/example-chameleon-kitchen")
    assert r.status_code == 200, r.text
    got = r.json()
    assert got["record"] == 4 and got["ok"] and got["error"] is None
    assert got["report"]["game_id"] == "example-chameleon-kitchen"
    want = json.loads((EXAMPLES / "chameleon_batch.jsonl").read_text().splitlines()[4])
    assert got["transcript"]["turns"] == want["turns"]
    assert got["params"]["backend"] == "cooccurrence"
    # scoring the transcript again with the job's parameters gives the stored report
    again = api.post("/v1/score", json=got["transcript"]).json()
    assert again["steps"] == got["report"]["steps"]
    same = api.get(f"/v1/jobs/{job_id}/games/example-chameleon-kitchen", params={"record": 4})
    assert same.json()["record"] == 4


def test_job_game_not_found(api: Api, job_id: str):
    assert_error(api.get(f"/v1/jobs/{job_id}/games/nope"), 404, "game_not_found", "game_id")
    err = assert_error(
        api.get(f"/v1/jobs/{job_id}/games/nope", params={"record": 4}),
        404,
        "game_not_found",
        "record",
    )
    assert "example-chameleon-kitchen" in err["message"]
    assert_error(
        api.get(f"/v1/jobs/{job_id}/games/x", params={"record": 99}), 404, "game_not_found"
    )
    assert_error(api.get(f"/v1/jobs/{job_id}/games/x", params={"record": -1}), 422, "?")
    # past SQLite's 64-bit integers: a usage error, not a server error (found by the fuzzer)
    assert_error(api.get(f"/v1/jobs/{job_id}/games/x", params={"record": 2**64}), 422, "?")
    assert_error(api.get(f"/v1/jobs/{job_id}/games/x", params={"record": 2**53}), 422, "?")
    assert_error(api.get(f"/v1/jobs/{'0' * 32}/games/x"), 404, "job_not_found")


def test_job_views_need_the_key(keyed: Api):
    for url in (f"/v1/jobs/{'0' * 32}/curves", f"/v1/jobs/{'0' * 32}/games/x"):
        assert_error(keyed.get(url), 401, "unauthorized")


def test_a_job_whose_input_is_gone_keeps_its_reports_and_figures(api: Api):
    job = _finished_job(api, (EXAMPLES / "chameleon_batch.jsonl").read_bytes())
    upload = api.state.settings.uploads_dir / f"{job}.jsonl"
    assert upload.is_file()
    upload.unlink()  # as if removed by hand: the stored reports are all that is left
    got = api.get(f"/v1/jobs/{job}/games/example-chameleon-kitchen").json()
    assert got["report"]["game_id"] == "example-chameleon-kitchen"
    assert got["transcript"] is None and "no longer on the server" in got["transcript_note"]
    # the figures come from the job's step table, which holds each speaker's model: the
    # grouping by model stays (it used to become "(none)", read again from the gone input)
    by_model = api.get(f"/v1/jobs/{job}/curves", params={"by": "model"}).json()
    assert "(none)" not in by_model["groups"] and by_model["notes"] == []
    assert any("claude" in g for g in by_model["groups"])
    by_matchup = api.get(f"/v1/jobs/{job}/curves", params={"by": "matchup"}).json()
    assert len(by_matchup["groups"]) == 6 and by_matchup["notes"] == []


# -- the jobs list, a job's records and its report page ------------------------------------


def test_jobs_are_listed_newest_first(api: Api, job_id: str):
    newer = _finished_job(api, (EXAMPLES / "chameleon_batch.jsonl").read_bytes())
    r = api.get("/v1/jobs")
    assert r.status_code == 200, r.text
    got = r.json()
    ids = [j["id"] for j in got["jobs"]]
    assert ids.index(newer) < ids.index(job_id)
    assert got["total"] >= 2
    one = next(j for j in got["jobs"] if j["id"] == job_id)
    assert (one["state"], one["done"], one["failed"], one["source"]) == ("done", 7, 1, "upload")
    assert [j["id"] for j in api.get("/v1/jobs", params={"limit": 1}).json()["jobs"]] == [ids[0]]
    assert_error(api.get("/v1/jobs", params={"limit": 0}), 422, "?", "limit")
    assert_error(api.get("/v1/jobs", params={"limit": "x"}), 422, "?", "limit")


def test_job_records_list_games_and_failures(api: Api, job_id: str):
    r = api.get(f"/v1/jobs/{job_id}/records")
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["job"], got["state"]) == (job_id, "done")
    rows = got["records"]
    assert [x["record"] for x in rows] == list(range(7))
    assert [x["ok"] for x in rows] == [True] * 6 + [False]
    kitchen = rows[4]
    assert kitchen["game_id"] == "example-chameleon-kitchen" and kitchen["turns"] > 0
    stored = api.get(f"/v1/jobs/{job_id}/games/example-chameleon-kitchen").json()["report"]
    assert kitchen["final_entropy_bits"] == stored["summary"]["final_entropy_bits"]
    assert rows[6]["error_type"] == "unknown_input_format" and rows[6]["error_message"]
    assert_error(api.get(f"/v1/jobs/{'0' * 32}/records"), 404, "job_not_found", "id")


@pytest.mark.parametrize("by", ["model", "difficulty"])
def test_job_report_page_is_leakage_reports_page(
    api: Api, job_id: str, by: str, tmp_path: Path, leakage_home: Path
):
    """The page ``leakage report`` writes for ``leakage batch`` on the same games: the same
    sections, figures and table rows (the date and the results' location aside)."""
    from leakage.batch import BatchJob, run_batch
    from leakage.curves import build_site

    r = api.get(f"/v1/jobs/{job_id}/report.html", params={"by": by})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["x-job-state"] == "done"
    assert f"leakage-report-{job_id}-{by}.html" in r.headers["content-disposition"]
    run_batch(BatchJob(inputs=[EXAMPLES / "chameleon_batch.jsonl"], out=tmp_path / "b", workers=0))
    build_site(tmp_path / "b", tmp_path / "site", by=by)
    want = (tmp_path / "site" / "report.html").read_text(encoding="utf-8")

    def tables(html: str) -> list[str]:
        body = re.sub(r"<svg.*?</svg>", "", html, flags=re.S)
        return re.findall(r"<td>([^<]*)</td>", body.split("<h2>Entropy", 1)[1])

    assert re.findall(r"<h2>([^<]*)</h2>", r.text) == re.findall(r"<h2>([^<]*)</h2>", want)
    assert r.text.count("<svg") == want.count("<svg") == 6  # with the leaderboard and plane
    assert tables(r.text) == tables(want)
    assert f"job {job_id}" in r.text


def test_job_report_page_bad_input(api: Api, job_id: str):
    assert_error(api.get(f"/v1/jobs/{job_id}/report.html", params={"by": "x"}), 422, "?", "by")
    assert_error(api.get(f"/v1/jobs/{'0' * 32}/report.html"), 404, "job_not_found", "id")
    bad = _finished_job(api, b'{"not": "a transcript"}\n')
    err = assert_error(api.get(f"/v1/jobs/{bad}/report.html"), 409, "job_not_ready", "id")
    assert "nothing to report" in err["message"]


def test_jobs_list_records_and_report_need_the_key(keyed: Api):
    for url in ("/v1/jobs", f"/v1/jobs/{'0' * 32}/records", f"/v1/jobs/{'0' * 32}/report.html"):
        assert_error(keyed.get(url), 401, "unauthorized")


def test_the_seats_route_gives_the_librarys_words(api: Api, keyed: Api):
    """``GET /v1/seats``, what the page's seat picker offers and every view names: each game
    kind's seats, the default first, in the library's words, and the default seat under the
    option that decides it."""
    from leakage.seats import CHAMELEON_SEATS, SEAT_KNOWS, SPYGAME_SEATS, seat_sentence

    r = api.get("/v1/seats")
    assert r.status_code == 200, r.text
    games = {g["game"]: g for g in r.json()["games"]}
    assert [s["seat"] for s in games["spygame"]["seats"]] == list(SPYGAME_SEATS)
    assert [s["seat"] for s in games["chameleon"]["seats"]] == list(CHAMELEON_SEATS)
    assert (games["spygame"]["default"], games["chameleon"]["default"]) == (
        "outside-known",
        "chameleon",
    )
    assert games["spygame"]["option"] == "spy_assignment"
    assert games["spygame"]["default_by_option"] == {
        "known": "outside-known",
        "marginalise": "outside-pair",
    }
    assert games["chameleon"]["option"] == "include_chameleon"
    assert games["chameleon"]["default_by_option"] == {"false": "chameleon", "true": "outside-card"}
    assert [s["seat"] for s in games["chameleon"]["outside"]] == ["outside-card"]
    for g in games.values():
        for s in g["seats"] + g["outside"]:
            assert s["knows"] == SEAT_KNOWS[s["seat"]]
            assert s["sentence"] == seat_sentence(s["seat"])
    assert r.json()["aliases"] == {"known": "outside-known", "marginalise": "outside-pair"}
    assert keyed.get("/v1/seats").status_code == 401  # an API route like the others
