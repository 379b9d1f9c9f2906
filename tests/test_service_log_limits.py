"""Uploaded Inspect logs past the server's ``max_log_*`` limits (issue 37): a 413
``input_too_large`` naming the archive member on ``POST /v1/transcripts`` and ``POST
/v1/jobs`` (body and multipart), refused from what the archive declares before anything is
read, nothing left behind; a damaged member (bad CRC-32, inflating past its declared size)
fails alone; a record of 20,000 players gets its 422. The timings and memory of the
gibibyte bombs against a real server are ``python -m benchmarks.service_limits --scenarios
bombs`` (docs/benchmarks.md)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks._archives import bad_crc, declared_bomb, eval_log, lying_member
from benchmarks._big_records import ck_arena

from .conftest import EXAMPLES
from .test_service import Api, assert_error, settings_for, wait_job

GAME = json.loads((EXAMPLES / "chameleon_sports.json").read_text(encoding="utf-8"))
GAMES = [dict(GAME, id=f"g{i}") for i in range(3)]
ZIP = {"content-type": "application/zip"}
MiB = 1 << 20


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    settings = settings_for(tmp_path_factory.mktemp("svc"), default_index,
                            max_log_member_bytes=MiB)  # fmt: skip
    a = Api(settings)
    yield a
    a.close()


def _uploads(api: Api) -> list[str]:
    folder = api.state.settings.uploads_dir
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


BOMBS = {
    "header": (declared_bomb(GAMES, "header.json"), "header.json"),
    "messages": (declared_bomb(GAMES, "samples/2_epoch_1.json"), "samples/2_epoch_1.json"),
    # a member that really expands (2 MiB of messages), past this server's 1 MiB a member
    "real": (eval_log(GAMES, messages_pad={1: 2 * MiB}), "samples/2_epoch_1.json"),
}


@pytest.mark.parametrize("kind", sorted(BOMBS))
def test_a_log_past_the_limits_is_a_413_naming_the_member(api: Api, kind: str):
    data, member = BOMBS[kind]
    before = _uploads(api)
    for r in (
        api.post("/v1/transcripts", content=data),
        api.post("/v1/jobs", content=data, headers=ZIP),
        api.post("/v1/jobs", files={"file": ("run.eval", data)}),
    ):
        err = assert_error(r, 413, "input_too_large", member)
        assert member in err["message"] and "max_member_bytes" in err["message"], err
        assert str(api.state.settings.uploads_dir) not in r.text
    assert _uploads(api) == before  # nothing left behind


@pytest.mark.parametrize("kind", ["crc", "lying"])
def test_a_damaged_sample_fails_alone(api: Api, kind: str):
    data = bad_crc(GAMES, 1) if kind == "crc" else lying_member(GAMES, 1, MiB // 2)
    r = api.post("/v1/transcripts", content=data)
    assert r.status_code == 200, r.text
    body = r.json()
    assert [g["id"] for g in body["games"]] == ["g0", "g2"]
    (bad,) = body["errors"]
    assert bad["record"] == "sample 2" and "samples/2_epoch_1.json" in bad["message"], bad
    assert ("bad CRC-32" if kind == "crc" else "decompresses past") in bad["message"]
    r = api.post("/v1/jobs", content=data, headers=ZIP)
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"])
    assert (job["state"], job["ok"], job["failed"]) == ("done", 2, 1), job


def test_a_record_of_20000_players_gets_its_422(api: Api):
    record = json.dumps(ck_arena(20_000, duplicate_last=True)).encode()
    err = assert_error(api.post("/v1/score", content=record), 422, "invalid_transcript")
    assert err["field"] == "game_record.players[19999].player_id", err
