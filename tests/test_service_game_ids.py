"""Game ids of any characters are addressable (issue 37): ``GET /v1/jobs/{id}/games/{game_id}``
with the id percent-encoded (a ``/`` in it as is or as ``%2F``), and
``GET /v1/jobs/{id}/games?game_id=`` for every id, ``.`` and ``..`` included; the id is matched
exactly, never searched for in the stored JSON (where ``"``, ``\\`` and a tab are escaped)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest

from .test_service import SPORTS, Api, assert_error, plain_api
from .test_ui_explorer import _finished_job

IDS = [
    "a/b",
    "/leading/and/trailing/",
    'q"uote',
    "back\\slash",
    "tab\there",
    "ünï cödé ✓",
    "%2F",
    "a?b#c&record=3",
    "..",
    ".",
    "plain",
    "plai",  # a prefix of another id: exact match, not a substring
]
DOT_SEGMENTS = {".", ".."}


api = plain_api


@pytest.fixture(scope="module")
def job_id(api: Api) -> str:
    game = json.loads(SPORTS)
    lines = [json.dumps({**game, "id": gid}) for gid in IDS]
    return _finished_job(api, ("\n".join(lines) + "\n").encode())


@pytest.mark.parametrize("gid", [g for g in IDS if g not in DOT_SEGMENTS])
def test_a_game_id_of_any_characters_is_found_by_its_path(api: Api, job_id: str, gid: str):
    r = api.get(f"/v1/jobs/{job_id}/games/{quote(gid, safe='')}")
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["game_id"], got["record"]) == (gid, IDS.index(gid))
    assert got["report"]["game_id"] == gid and got["transcript"]["id"] == gid
    with_record = api.get(
        f"/v1/jobs/{job_id}/games/{quote(gid, safe='')}", params={"record": IDS.index(gid)}
    )
    assert with_record.status_code == 200 and with_record.json()["game_id"] == gid


def test_a_slash_may_be_sent_unescaped(api: Api, job_id: str):
    r = api.get(f"/v1/jobs/{job_id}/games/a/b")
    assert r.status_code == 200 and r.json()["game_id"] == "a/b"


@pytest.mark.parametrize("gid", IDS)
def test_every_game_id_is_found_by_the_query(api: Api, job_id: str, gid: str):
    r = api.get(f"/v1/jobs/{job_id}/games", params={"game_id": gid})
    assert r.status_code == 200, r.text
    assert (r.json()["game_id"], r.json()["record"]) == (gid, IDS.index(gid))


def test_ids_that_are_not_there_are_404(api: Api, job_id: str):
    for gid in ("pla", "a", "A/B", 'q\\"uote', "tab\\there"):
        assert_error(
            api.get(f"/v1/jobs/{job_id}/games", params={"game_id": gid}),
            404, "game_not_found", "game_id",
        )  # fmt: skip
    assert_error(
        api.get(f"/v1/jobs/{job_id}/games", params={"game_id": "plain", "record": 0}),
        404, "game_not_found", "record",
    )  # fmt: skip
    assert_error(api.get(f"/v1/jobs/{job_id}/games"), 422, "?", "game_id")
    for url, given in [  # both forms
        (f"/v1/jobs/{job_id}/games/plain", {}),
        (f"/v1/jobs/{job_id}/games", {"game_id": "plain"}),
    ]:
        params = {**given, "recrod": 1}
        assert_error(api.get(url, params=params), 422, "invalid_request", "recrod")
        params = {**given, "record": [0, 10]}
        assert_error(api.get(url, params=params), 422, "invalid_request", "record")
    assert_error(api.get(f"/v1/jobs/{job_id}/games", params={"game_id": ""}), 422, "?")


def test_the_explorer_asks_with_the_query():
    api_js = Path(__file__).parent.parent / "service/leakage_service/ui/assets/api.js"
    text = api_js.read_text(encoding="utf-8")
    assert 'job(id, "/games"), { params: { game_id: game, record } }' in text
