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
from .test_service import SPORTS, Api, assert_error, settings_for

HOOKS = [
    "status", "api-key", "api-key-save", "example-select", "transcript-input", "score-button",
    "file-input", "game-select", "backend-select", "compare-select", "heatmap",
    "heatmap-compare", "disagreement", "tooltip", "turns", "entropy-chart", "psecret-chart",
    "spy-heatmap", "votes", "clue-input", "clue-button", "clue-result", "job-input", "job-open",
    "curves", "curve-group", "curve-games",
]  # fmt: skip
"""The ids docs/explorer.md's contract (notes: explorer_contract.md) promises the page has."""


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    a = Api(settings_for(tmp_path_factory.mktemp("ui"), default_index))
    yield a
    a.close()


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
    assert {"app.js", "api.js", "state.js", "views.js", "charts.js"} <= seen


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
