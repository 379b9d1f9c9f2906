"""The service's jobs under attack and over time: parallel result downloads, unusable and
sneaky server-side paths, retention and purging (rows, uploads, disk space), a SIGTERM
followed by a restart that must honour LEAKAGE_ON_RESTART, the 405 ``Allow`` header and
multipart limits. In-process (``Api``) where that shows the behaviour, a real uvicorn
process (``Server``) where threads, signals and restarts are the point."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest

from .test_service import BATCH, Api, assert_error, ndjson, settings_for, wait_job
from .test_service_server import Server, _job, _wait, many_games, server_env

ONE_GAME = BATCH.splitlines(keepends=True)[0]


def db_rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(db, isolation_level=None)) as con:
        return con.execute(sql, args).fetchall()


def uploads_of(api: Api) -> list[str]:
    folder = api.state.settings.uploads_dir
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def submit(api: Api, body: bytes = BATCH, **kw: Any) -> str:
    r = api.post("/v1/jobs", content=body, **kw)
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


@pytest.fixture
def folders(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """An allowed folder with one game file, and a folder outside it."""
    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    (allowed / "games.jsonl").write_bytes(BATCH)
    (outside / "secret.jsonl").write_bytes(ONE_GAME)
    yield allowed, outside


# -- 1. parallel downloads of a job's results -----------------------------------------------


def test_parallel_jsonl_downloads_are_complete_and_identical(
    tmp_path: Path, default_index: Path
) -> None:
    """Every one of 40 parallel downloads of a 1,500-result job is complete and identical
    (the results were read on SQLite objects moved between pool threads, so most were cut
    short after their 200)."""
    server = Server(server_env(tmp_path, default_index), tmp_path / "server.log")
    try:
        n = 1500
        r = httpx.post(f"{server.url}/v1/jobs", content=many_games(n), timeout=60)
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        _wait(server.url, job_id, lambda j: j["state"] == "done", timeout=300)
        db = tmp_path / "service" / "jobs.sqlite"
        rows = db_rows(db, "SELECT body FROM results WHERE job_id = ? ORDER BY idx", job_id)
        expected = "".join(f"{body}\n" for (body,) in rows).encode()

        async def download_all() -> list[tuple[int, bytes] | str]:
            async def one(client: httpx.AsyncClient) -> tuple[int, bytes] | str:
                try:
                    r = await client.get(f"/v1/jobs/{job_id}/results")
                except httpx.HTTPError as err:  # a body cut short
                    return repr(err)
                return r.status_code, r.content

            async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
                return await asyncio.gather(*(one(client) for _ in range(40)))

        got = asyncio.run(download_all())
        broken = [g if isinstance(g, str) else (g[0], g[1].count(b"\n")) for g in got
                  if g != (200, expected)]  # fmt: skip
        assert not broken, f"{len(broken)} of 40 downloads broken: {broken[:5]}"
        ids = [json.loads(line)["game_id"] for line in expected.splitlines()]
        assert ids == [f"g{i}" for i in range(n)]
    finally:
        server.stop()
    assert "Traceback" not in (tmp_path / "server.log").read_text()


# -- 2. paths the server cannot use ---------------------------------------------------------


def test_unusable_paths_are_422_naming_the_field(
    tmp_path: Path, default_index: Path, folders: tuple[Path, Path]
) -> None:
    allowed, _ = folders
    api = Api(settings_for(tmp_path, default_index, allowed_paths=[allowed]))
    try:
        cases = [
            ({"path": "/data/x\x00y.jsonl"}, "path", "NUL"),
            ({"paths": [str(allowed), f"{allowed}/a\x00"]}, "paths[1]", "NUL"),
            ({"path": "~nosuchuser/x"}, "path", "no user 'nosuchuser'"),
            ({"paths": [str(allowed), "~nosuchuser"]}, "paths[1]", "no user"),
            ({"path": str(allowed / ("x" * 300))}, "path", "name too long"),
            ({"paths": [str(allowed), str(allowed / "missing")]}, "paths[1]", "no such file"),
            ({"paths": [str(allowed), 3]}, "paths[1]", "valid string"),
        ]
        for body, field, words in cases:
            r = api.post("/v1/jobs", json=body)
            assert r.status_code == 422, (body, r.text)
            err = assert_error(r, 422, "?", field)
            assert words.lower() in err["message"].lower(), (body, err)
        empty = allowed / "empty"
        empty.mkdir()
        err = assert_error(api.post("/v1/jobs", json={"path": str(empty)}), 422, "invalid_input")
        assert err["field"] == "path" and "no JSON, JSONL or Parquet files" in err["message"]
        # a refused request leaves nothing in the uploads folder
        assert uploads_of(api) == []
    finally:
        api.close()


# -- 3. links out of an allowed folder ------------------------------------------------------


def test_a_link_out_of_an_allowed_folder_refuses_the_job(
    tmp_path: Path, default_index: Path, folders: tuple[Path, Path]
) -> None:
    allowed, outside = folders
    (allowed / "sub").mkdir()
    os.symlink(outside / "secret.jsonl", allowed / "sub" / "link.jsonl")
    os.symlink(allowed / "games.jsonl", allowed / "again.jsonl")  # a link that stays inside
    api = Api(settings_for(tmp_path, default_index, allowed_paths=[allowed]))
    try:
        for body, field in [
            ({"path": str(allowed)}, "path"),
            ({"paths": [str(allowed / "games.jsonl"), f"{allowed}/"]}, "paths[1]"),
            ({"path": str(allowed / "sub" / "link.jsonl")}, "path"),
        ]:
            err = assert_error(api.post("/v1/jobs", json=body), 403, "path_not_allowed", field)
            assert "sub/link.jsonl" in err["message"], err
            assert str(outside) not in err["message"]  # where it leads is not shown
        assert uploads_of(api) == []
        assert db_rows(api.state.settings.jobs_path, "SELECT COUNT(*) FROM jobs") == [(0,)]

        (allowed / "sub" / "link.jsonl").unlink()
        r = api.post("/v1/jobs", json={"path": str(allowed)})
        assert r.status_code == 202, r.text
        job = wait_job(api, r.json()["id"])
        # again.jsonl leads to games.jsonl, which is read once
        assert (job["state"], job["total"], job["ok"]) == ("done", 6, 6)
        assert job["paths"] == [str(allowed)]
    finally:
        api.close()


def test_a_path_job_reads_the_files_checked_when_it_was_submitted(
    tmp_path: Path, default_index: Path, folders: tuple[Path, Path]
) -> None:
    """The folder is expanded at submission: a file added (or a link planted) before the job
    runs is not read; and a server whose allowed folders no longer hold a queued job's files
    fails the job instead of reading them."""
    allowed, outside = folders
    api = Api(settings_for(tmp_path, default_index, allowed_paths=[allowed]))
    try:
        api.state.worker.stop()
        first = api.post("/v1/jobs", json={"path": str(allowed)}).json()["id"]
    finally:
        api.close()
    os.symlink(outside / "secret.jsonl", allowed / "zz-link.jsonl")
    (allowed / "more.jsonl").write_bytes(ONE_GAME)
    api = Api(settings_for(tmp_path, default_index, allowed_paths=[allowed]))
    try:
        job = wait_job(api, first)
        assert (job["state"], job["total"], job["ok"]) == ("done", 6, 6)
        api.state.worker.stop()
        (allowed / "zz-link.jsonl").unlink()
        second = api.post("/v1/jobs", json={"path": str(allowed)}).json()["id"]
    finally:
        api.close()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    api = Api(settings_for(tmp_path, default_index, allowed_paths=[elsewhere]))
    try:
        job = wait_job(api, second)
        assert (job["state"], job["done"]) == ("failed", 0)
        assert "games.jsonl: outside the folders this server allows" in job["error"]
    finally:
        api.close()


# -- 3b. cancel is a barrier -----------------------------------------------------------------


def test_no_game_is_stored_after_the_cancel_answered(
    tmp_path: Path, default_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker checked the cancel between games but stored the game in hand after it, so
    a job could store one more game after ``POST .../cancel`` had answered. Here the worker
    (one game a chunk) is held after scoring game g2, before storing it, until the cancel has
    answered."""
    api = Api(settings_for(tmp_path, default_index, job_chunk_size=1))
    store = api.state.store
    add_result = store.add_result
    in_hand, release = threading.Event(), threading.Event()

    def wait_then_store(job: Any, idx: int, **kw: Any) -> Any:
        if idx == 2:
            in_hand.set()
            release.wait(30)
        return add_result(job, idx, **kw)

    monkeypatch.setattr(store, "add_result", wait_then_store)
    db = api.state.settings.jobs_path
    try:
        job_id = submit(api, many_games(6))
        assert in_hand.wait(30)
        r = api.post(f"/v1/jobs/{job_id}/cancel")
        assert r.status_code == 200, r.text
        answered = r.json()
        assert (answered["state"], answered["done"]) == ("cancelled", 2)
        release.set()
        after = submit(api)  # one worker, one job at a time: the cancelled one is over first
        assert wait_job(api, after)["ok"] == 6
        job = api.get(f"/v1/jobs/{job_id}").json()
        assert (job["state"], job["done"], job["ok"]) == ("cancelled", 2, 2)
        rows = db_rows(db, "SELECT idx FROM results WHERE job_id = ? ORDER BY idx", job_id)
        assert rows == [(0,), (1,)]
        assert [x["game_id"] for x in ndjson(api.get(f"/v1/jobs/{job_id}/results"))] == [
            "g0",
            "g1",
        ]
    finally:
        release.set()
        api.close()


# -- 4. retention, purging, disk space ------------------------------------------------------


def test_refused_jobs_leave_no_upload_files(
    tmp_path: Path, default_index: Path, folders: tuple[Path, Path]
) -> None:
    allowed, _ = folders
    api = Api(settings_for(tmp_path, default_index, allowed_paths=[allowed]))
    try:
        for body in [{"path": 3}, {"path": "/etc"}, {"paths": []}, {"path": "x", "paths": ["y"]}]:
            assert api.post("/v1/jobs", json=body).status_code in (403, 422)
        assert api.post("/v1/jobs", content=b"  \n").status_code == 422
        assert api.post("/v1/jobs", content=b"\xff\xfe").status_code == 422
        assert uploads_of(api) == []
    finally:
        api.close()
    # a crash mid-upload leaves a .part file, and an upload with no job: the next start
    # removes both, and keeps the upload of a job
    home_uploads = settings_for(tmp_path, default_index).uploads_dir
    (home_uploads / "0123456789abcdef0123456789abcdef.part").write_bytes(b"half an upload")
    (home_uploads / "fedcba9876543210fedcba9876543210.jsonl").write_bytes(BATCH)
    stray = home_uploads / "00112233445566778899aabbccddeeff"  # a multipart upload's folder
    stray.mkdir()
    (stray / "a.jsonl").write_bytes(BATCH)
    api = Api(settings_for(tmp_path, default_index, allowed_paths=[allowed]))
    try:
        api.state.worker.stop()
        job_id = submit(api)
        assert uploads_of(api) == [f"{job_id}.json"]
        files = {"file": ("a.jsonl", BATCH, "application/x-ndjson")}
        folder_job = api.post("/v1/jobs", files=files).json()["id"]
    finally:
        api.close()
    api = Api(settings_for(tmp_path, default_index, allowed_paths=[allowed]))
    try:  # a job's folder is its upload: kept
        assert uploads_of(api) == sorted([f"{job_id}.json", folder_job])
    finally:
        api.close()


def test_delete_deletes_a_job_its_results_and_its_upload(
    tmp_path: Path, default_index: Path
) -> None:
    api = Api(settings_for(tmp_path, default_index))
    db = api.state.settings.jobs_path
    try:
        done = submit(api)
        wait_job(api, done)
        err = assert_error(api.post(f"/v1/jobs/{done}/cancel"), 409, "job_finished", "id")
        assert f"DELETE /v1/jobs/{done}" in err["message"]
        r = api.request("DELETE", f"/v1/jobs/{done}")
        assert r.status_code == 204 and r.content == b""
        assert_error(api.get(f"/v1/jobs/{done}"), 404, "job_not_found", "id")
        assert_error(api.get(f"/v1/jobs/{done}/results"), 404, "job_not_found", "id")
        assert_error(api.post(f"/v1/jobs/{done}/cancel"), 404, "job_not_found", "id")
        assert_error(api.request("DELETE", f"/v1/jobs/{done}"), 404, "job_not_found", "id")
        assert db_rows(db, "SELECT COUNT(*) FROM results WHERE job_id = ?", done) == [(0,)]
        assert uploads_of(api) == []

        # a running job: cancelled, deleted, and the game in hand does not bring it back
        running = submit(api, many_games(400))
        deadline = time.monotonic() + 30
        while api.get(f"/v1/jobs/{running}").json()["done"] < 5:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert api.request("DELETE", f"/v1/jobs/{running}").status_code == 204
        after = submit(api)  # the worker goes on with the next job
        assert wait_job(api, after)["ok"] == 6
        assert db_rows(db, "SELECT COUNT(*) FROM results WHERE job_id = ?", running) == [(0,)]
        assert db_rows(db, "SELECT COUNT(*) FROM jobs WHERE id = ?", running) == [(0,)]
        assert uploads_of(api) == [f"{after}.json"]

        # a queued one
        api.state.worker.stop()
        queued = submit(api)
        assert api.request("DELETE", f"/v1/jobs/{queued}").status_code == 204
        assert uploads_of(api) == [f"{after}.json"]
    finally:
        api.close()


def test_purging_gives_the_disk_space_back(tmp_path: Path, default_index: Path) -> None:
    api = Api(settings_for(tmp_path, default_index))
    store = api.state.store
    try:
        job_id = submit(api, many_games(600, seed=11))
        assert wait_job(api, job_id, timeout=120)["ok"] == 600
        (stored,) = db_rows(store.path, "SELECT SUM(length(body)) FROM results")[0]
        before = store.disk_bytes()
        assert before > stored  # the results are on disk (database and write-ahead log)
        assert api.request("DELETE", f"/v1/jobs/{job_id}").status_code == 204
        deadline = time.monotonic() + 30
        while store.disk_bytes() > before - stored * 0.8:
            assert time.monotonic() < deadline, (before, stored, store.disk_bytes())
            time.sleep(0.1)
        assert db_rows(store.path, "PRAGMA auto_vacuum") == [(2,)]  # incremental
        assert db_rows(store.path, "PRAGMA freelist_count") == [(0,)]
    finally:
        api.close()


def test_finished_jobs_past_the_age_limit_are_deleted(tmp_path: Path, default_index: Path):
    """At start-up, and after each job: finished jobs older than the limit go (rows, upload
    files); queued and running jobs never do."""
    api = Api(settings_for(tmp_path, default_index))
    try:
        old = submit(api)
        wait_job(api, old)
        api.state.worker.stop()
        queued = submit(api)
    finally:
        api.close()
    time.sleep(2.5)
    two_seconds = 2 / 86400
    api = Api(settings_for(tmp_path, default_index, job_max_age_days=two_seconds))
    db = api.state.settings.jobs_path
    try:
        # start-up: the old job is gone; the queued one runs
        assert_error(api.get(f"/v1/jobs/{old}"), 404, "job_not_found")
        assert f"{old}.json" not in uploads_of(api)
        assert db_rows(db, "SELECT COUNT(*) FROM results WHERE job_id = ?", old) == [(0,)]
        assert wait_job(api, queued)["state"] == "done"
        time.sleep(2.5)
        fresh = submit(api)
        assert wait_job(api, fresh)["state"] == "done"
        # the pass after `fresh` finished deleted `queued` (finished 2.5 s before), not it
        deadline = time.monotonic() + 10
        while api.get(f"/v1/jobs/{queued}").status_code != 404:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert api.get(f"/v1/jobs/{fresh}").status_code == 200
        assert uploads_of(api) == [f"{fresh}.json"]
    finally:
        api.close()
    # 0 keeps everything
    api = Api(settings_for(tmp_path, default_index, job_max_age_days=0))
    try:
        assert api.get(f"/v1/jobs/{fresh}").status_code == 200
    finally:
        api.close()


def test_finished_jobs_past_the_size_limit_are_deleted_oldest_first(
    tmp_path: Path, default_index: Path
) -> None:
    api = Api(settings_for(tmp_path, default_index, job_max_bytes=0))
    try:
        first = submit(api)
        wait_job(api, first)
    finally:
        api.close()
    db = settings_for(tmp_path, default_index).jobs_path
    ((size,),) = db_rows(db, "SELECT bytes FROM jobs WHERE id = ?", first)
    (results,) = db_rows(db, "SELECT SUM(length(CAST(body AS BLOB))) FROM results")[0]
    assert size == len(BATCH) + results  # the upload and the results, in bytes

    api = Api(settings_for(tmp_path, default_index, job_max_bytes=int(size * 2.5)))
    try:
        assert api.get(f"/v1/jobs/{first}").status_code == 200  # under the limit at start
        second = submit(api)
        wait_job(api, second)
        third = submit(api)
        wait_job(api, third)
        deadline = time.monotonic() + 10
        while api.get(f"/v1/jobs/{first}").status_code != 404:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert [api.get(f"/v1/jobs/{j}").status_code for j in (second, third)] == [200, 200]
        assert uploads_of(api) == sorted([f"{second}.json", f"{third}.json"])
        assert size * 1.5 < api.state.store.total_bytes() <= size * 2.5
    finally:
        api.close()


def test_a_store_from_an_older_server_is_migrated(tmp_path: Path, default_index: Path) -> None:
    """A jobs database without sizes or incremental vacuum (as older servers wrote it)
    gets both at start-up; its jobs keep working."""
    api = Api(settings_for(tmp_path, default_index, job_max_age_days=0))
    db = api.state.settings.jobs_path
    try:
        job_id = submit(api)
        wait_job(api, job_id)
    finally:
        api.close()
    db_rows(db, "ALTER TABLE jobs DROP COLUMN bytes")  # back to the old layout
    db_rows(db, "DROP TABLE job_files")
    with closing(sqlite3.connect(db, isolation_level=None)) as con:
        con.execute("PRAGMA auto_vacuum=NONE")
        con.execute("VACUUM")
    assert db_rows(db, "PRAGMA auto_vacuum") == [(0,)]
    api = Api(settings_for(tmp_path, default_index, job_max_age_days=0))
    try:
        assert db_rows(db, "PRAGMA auto_vacuum") == [(2,)]
        ((size,),) = db_rows(db, "SELECT bytes FROM jobs WHERE id = ?", job_id)
        (results,) = db_rows(db, "SELECT SUM(length(CAST(body AS BLOB))) FROM results")[0]
        assert size == len(BATCH) + results
        assert len(ndjson(api.get(f"/v1/jobs/{job_id}/results"))) == 6
        assert api.request("DELETE", f"/v1/jobs/{job_id}").status_code == 204
    finally:
        api.close()


# -- 5. SIGTERM, then a restart ---------------------------------------------------------------


def _sigterm_while_running(tmp_path: Path, default_index: Path, n: int) -> tuple[str, int]:
    """Start a server (default settings: resume), submit ``n`` games, SIGTERM it while the
    job runs; the job id and how many results were stored."""
    log = tmp_path / "server.log"
    a = Server(server_env(tmp_path, default_index), log)
    r = httpx.post(f"{a.url}/v1/jobs", content=many_games(n), timeout=60)
    job_id = r.json()["id"]
    _wait(a.url, job_id, lambda j: j["done"] >= 50)
    assert a.stop(signal.SIGTERM) in (0, -signal.SIGTERM)
    db = tmp_path / "service" / "jobs.sqlite"
    ((state, done, runs),) = db_rows(db, "SELECT state, done, runs FROM jobs")
    assert (state, runs) == ("queued", 1) and 50 <= done < n
    return job_id, done


def test_sigterm_then_restart_with_on_restart_fail_fails_the_job(
    tmp_path: Path, default_index: Path
) -> None:
    job_id, done = _sigterm_while_running(tmp_path, default_index, 3000)
    env = server_env(tmp_path, default_index, LEAKAGE_ON_RESTART="fail")
    b = Server(env, tmp_path / "server.log")
    try:
        job = _job(b.url, job_id)
        assert job["state"] == "failed", job
        assert "LEAKAGE_ON_RESTART=fail" in job["error"]
        time.sleep(1.5)  # nothing resumes it
        job = _job(b.url, job_id)
        assert (job["state"], job["done"], job["runs"]) == ("failed", done, 1)
        assert httpx.get(f"{b.url}/readyz").status_code == 200
    finally:
        b.stop()
    # a later start with resume does not bring a failed job back either
    c = Server(server_env(tmp_path, default_index), tmp_path / "server.log")
    try:
        time.sleep(1.0)
        assert _job(c.url, job_id)["state"] == "failed"
    finally:
        c.stop()


def test_sigterm_then_restart_with_resume_scores_every_record_once(
    tmp_path: Path, default_index: Path
) -> None:
    n = 1200
    job_id, first_run = _sigterm_while_running(tmp_path, default_index, n)
    b = Server(server_env(tmp_path, default_index, LEAKAGE_ON_RESTART="resume"),
               tmp_path / "server.log")  # fmt: skip
    try:
        job = _wait(b.url, job_id, lambda j: j["state"] == "done", timeout=300)
        assert (job["total"], job["done"], job["ok"], job["runs"]) == (n, n, n, 2)
        lines = httpx.get(f"{b.url}/v1/jobs/{job_id}/results", timeout=60).text.splitlines()
        assert [json.loads(x)["game_id"] for x in lines] == [f"g{i}" for i in range(n)]
    finally:
        b.stop()
    db = tmp_path / "service" / "jobs.sqlite"
    runs = dict(db_rows(db, "SELECT run, COUNT(*) FROM results GROUP BY run"))
    assert runs == {1: first_run, 2: n - first_run}
    idx = [i for (i,) in db_rows(db, "SELECT idx FROM results ORDER BY idx")]
    assert idx == list(range(n))


# -- 6. 405 lists every method of the path ------------------------------------------------------


def test_405_allow_lists_every_method_the_path_accepts(tmp_path: Path, default_index: Path):
    api = Api(settings_for(tmp_path, default_index))
    try:
        paths = api.get("/openapi.json").json()["paths"]
        assert set(paths["/v1/jobs/{job_id}"]) == {"get", "delete"}
        assert set(paths["/v1/jobs/{job_id}/cancel"]) == {"post"}
        for template, operations in paths.items():
            accepted = {m.upper() for m in operations}
            url = re.sub(r"\{[^}]+\}", "0" * 32, template)
            for method in sorted({"GET", "POST", "PUT", "PATCH", "DELETE"} - accepted):
                r = api.request(method, url)
                err = assert_error(r, 405, "method_not_allowed")
                allow = {m.strip() for m in r.headers["allow"].split(",")}
                assert allow - {"HEAD"} == accepted, (method, template, r.headers["allow"])
                if template.startswith("/v1/jobs"):
                    assert ", ".join(sorted(accepted)) in err["message"]
    finally:
        api.close()


# -- 7. multipart limits ------------------------------------------------------------------------


def test_multipart_is_file_parts_and_anything_else_is_a_documented_422(
    tmp_path: Path, default_index: Path
):
    api = Api(settings_for(tmp_path, default_index))
    try:
        file = ("games.jsonl", BATCH, "application/x-ndjson")
        r = api.post("/v1/jobs", files={"file": file}, data={"note": "x"})
        err = assert_error(r, 422, "invalid_request", "note")
        assert "'file' parts only" in err["message"] and "'note'" in err["message"]
        r = api.post("/v1/jobs", files={"file": file}, data={f"f{i}": "x" for i in range(11)})
        err = assert_error(r, 422, "invalid_request", "body")
        assert "'file' parts" in err["message"] and "Too many fields" in err["message"]
        two = api.post("/v1/jobs", files=[("file", file), ("file", file), ("file", ("..", b"[]"))])
        assert two.json()["files"] == ["games.jsonl", "games (2).jsonl", "file-3.json"], two.text
        assert api.request("DELETE", f"/v1/jobs/{two.json()['id']}").status_code == 204
        r = api.post("/v1/jobs", content=b"x", headers={"content-type": "multipart/form-data"})
        assert_error(r, 422, "invalid_request", "body")
        r = api.post("/v1/jobs", files={"file": (None, BATCH)})  # a field: curl -F 'file=<x'
        assert "no filename" in assert_error(r, 422, "invalid_request", "file")["message"]
        r = api.post("/v1/jobs", files={"file": ("g.jsonl", b"\xff\n", "application/x-ndjson")})
        msg = assert_error(r, 422, "invalid_transcript", "file")["message"]
        assert "g.jsonl: not UTF-8 text (byte 0:" in msg  # the file and where in it
        r = api.post("/v1/jobs", files={"file": ("g.jsonl", b" \n", "application/x-ndjson")})
        assert "empty upload" in assert_error(r, 422, "invalid_transcript", "file")["message"]
        assert uploads_of(api) == []
        # the file part alone is an upload, kept under its name in the job's folder
        r = api.post("/v1/jobs", files={"file": file})
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        assert uploads_of(api) == [job_id] and r.json()["files"] == ["games.jsonl"]
        folder = api.state.settings.uploads_dir / job_id
        assert [p.name for p in folder.iterdir()] == ["games.jsonl"]
        body = api.get("/openapi.json").json()["paths"]["/v1/jobs"]["post"]["requestBody"]
        form = body["content"]["multipart/form-data"]["schema"]
        assert form["required"] == ["file"] and form["additionalProperties"] is False
        # file parts, each with a filename
        assert form["properties"]["file"]["items"]["format"] == "binary"
        described = api.get("/openapi.json").json()["paths"]["/v1/jobs"]["post"]["responses"]
        assert "400" not in described
        assert "multipart" in described["422"]["description"]
        schema = described["422"]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorBody"}
    finally:
        api.close()


# -- 8. the upload's schema says what the server accepts -----------------------------------------


def _body_validator(api: Api, media_type: str) -> Any:
    """A validator of ``POST /v1/jobs``'s documented body for ``media_type`` (its
    ``#/components/...`` references resolve against the served OpenAPI document)."""
    import jsonschema

    doc = api.get("/openapi.json").json()
    schema = doc["paths"]["/v1/jobs"]["post"]["requestBody"]["content"][media_type]["schema"]
    return jsonschema.Draft202012Validator({**schema, "components": doc["components"]})


def test_the_documented_upload_body_is_what_the_server_accepts(
    tmp_path: Path, default_index: Path
) -> None:
    # No allowed paths: a path request the schema allows is a 403 (the server's own rule),
    # an upload it allows a 202; whatever the schema refuses is a 422 at submission.
    api = Api(settings_for(tmp_path, default_index))
    try:
        api.state.worker.stop()  # nothing runs: only submission is under test
        as_json = _body_validator(api, "application/json")
        game = json.loads(ONE_GAME)
        bodies: list[Any] = [
            [game], game, [], [3, "x"], {},  # uploads: any record may fail alone in the job
            {"path": "/data"}, {"paths": ["/data", "/more"]},  # path requests
            {"path": "/data", "paths": ["/more"]}, {"path": None, "paths": ["/data"]},
            {"path": "/data", "game": "chameleon"}, {"paths": []}, {"path": "a\x00b"},
            {"path": ""}, "text", 3, None, True,
        ]  # fmt: skip
        for body in bodies:
            r = api.post("/v1/jobs", json=body)
            valid = as_json.is_valid(body)
            if valid:
                assert r.status_code in (202, 403), (body, r.text)
                expected = 403 if isinstance(body, dict) and {"path", "paths"} & set(body) else 202
                assert r.status_code == expected, (body, r.text)
            else:
                assert r.status_code == 422, (body, r.text)
        # bytes that are not JSON at all, sent as JSON
        for raw in [b"\x00", b"abc", b'"[1]"', b"  -1"]:
            r = api.post("/v1/jobs", content=raw, headers={"content-type": "application/json"})
            assert "not JSON" in assert_error(r, 422, "invalid_request", "body")["message"]
        # JSONL is text: an object with a path key in it is a record, not a path request
        as_text = _body_validator(api, "application/x-ndjson")
        for text, status in [('{"path": "/data"}\n', 202), ("x", 202), (" \n\t", 422), ("", 422)]:
            assert as_text.is_valid(text) == (status == 202), text
            r = api.post("/v1/jobs", content=text, headers={"content-type": "application/x-ndjson"})
            assert r.status_code == status, (text, r.text)
        assert as_text.is_valid("\ufeff \n") is False  # a byte order mark alone is empty too
        r = api.post(
            "/v1/jobs",
            content="\ufeff \n".encode(),
            headers={"content-type": "application/x-ndjson"},
        )
        assert_error(r, 422, "invalid_transcript", "body")
    finally:
        api.close()


def test_several_files_are_one_job_each_keeping_its_name(tmp_path: Path, default_index: Path):
    """Files uploaded together (multipart 'file' parts) are one job, read in the order sent;
    the job lists their names, a record's error names its file (not the server's path), a
    game's id keeps its file's name, and deleting the job removes them all."""
    from .conftest import EXAMPLES, SHARED_DATA

    api = Api(settings_for(tmp_path, default_index))
    try:
        parts = [
            ("file", ("games.jsonl", BATCH, "application/x-ndjson")),
            ("file", ("sports.json", (EXAMPLES / "chameleon_sports.json").read_bytes(), "")),
            ("file", ("bad.jsonl", b'{"not": "a transcript"}\n', "application/x-ndjson")),
        ]
        logs = sorted((SHARED_DATA / "ck-arena-dev" / "logs").glob("*.json"))[:1]
        for log in logs:  # a CK-Arena game's id is made of its file's name
            parts.append(("file", (log.name, log.read_bytes(), "application/json")))
        r = api.post("/v1/jobs", params={"input_format": "auto"}, files=parts)
        assert r.status_code == 202, r.text
        job_id = r.json()["id"]
        names = [p[1][0] for p in parts]
        assert r.json()["files"] == names and r.json()["source"] == "upload"
        job = wait_job(api, job_id)
        n = sum(1 for line in BATCH.splitlines() if line.strip())
        assert job["state"] == "done" and job["total"] == n + 2 + len(logs)
        assert api.get("/v1/jobs").json()["jobs"][0]["files"] == names
        records = api.get(f"/v1/jobs/{job_id}/records").json()["records"]
        assert (
            records[n]["game_id"]
            == json.loads((EXAMPLES / "chameleon_sports.json").read_text())["id"]
        )
        bad = records[n + 1]
        assert not bad["ok"] and bad["error_message"].startswith("bad.jsonl: "), bad
        assert str(api.state.settings.uploads_dir) not in json.dumps(records)
        for log in logs:
            assert records[-1]["ok"] and records[-1]["game_id"].endswith(f"@{log.stem}")
        assert api.request("DELETE", f"/v1/jobs/{job_id}").status_code == 204
        assert uploads_of(api) == []
    finally:
        api.close()
