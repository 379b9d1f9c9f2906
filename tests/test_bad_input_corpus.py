"""The bad-input corpus: records the schema fuzzer never drew, each between good records, on
every path that reads transcripts.

One bad game never costs the good ones. Each kind of record below is one game of a batch,
job or file between eight good games (the shipped Chameleon and SpyGame examples and the six
games of ``chameleon_batch.jsonl``), and on each path it must become exactly one error that
names its record and its field, while every good game of the same body, job or file is
scored and stored:

- ``POST /v1/score``: 422 naming the field (never 500);
- ``POST /v1/score/batch`` (JSONL and a JSON array): a report line per good game, one error
  line for the bad record, and the stream not cut;
- ``POST /v1/jobs``: the job ends ``done`` (not ``failed``) with every good game stored and
  the bad record's error listed; the explorer's view of a job's game
  (``GET /v1/jobs/{id}/games/{game_id}``) still reads the good games of its input;
- the explorer's clue preview (``POST /v1/score/preview``, a pasted transcript): 422 naming
  the field inside ``body.transcript``;
- ``leakage score``: exit 2, one ``error:`` line per bad record naming file, record and
  field, and the good reports written;
- ``leakage batch`` (local and ``--engine ray``): one line per bad record in
  ``errors.jsonl``, every good game in the step table and ``reports.jsonl``.

The records are written as raw bytes: ``json.dumps`` would send ``"\\ud800"`` for a lone
surrogate, which is what a client sends, but it cannot write a duplicate key, and a huge
integer must be digits. The command-line paths run once over a folder that holds one file
per kind (a run each would cost a process start each), and each kind's test reads its own
file's lines from that run.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchmarks._archives import bad_crc, declared_bomb, lying_member
from benchmarks._big_records import ck_arena

from .cli_support import run_leakage
from .conftest import EXAMPLES
from .test_service import Api, assert_error, ndjson, settings_for, wait_job

JSONL = {"content-type": "application/x-ndjson"}
JSON = {"content-type": "application/json"}
HOLE = "@@hole@@"
"""A placeholder string in a record, replaced by raw bytes once the record is JSON text."""
HUGE = b"1" + b"0" * 4300
"""An integer of 4,301 digits: more than Python's json converts (``sys.int_info``)."""
DEEP = b'{"a": ' * 9999 + b"{}" + b"}" * 9999
"""A JSON object nested 10,000 deep."""
BAD_AT = 4
"""The bad record's position in each body and file: after four good games, before four."""
ANY_META = "meta.*"
"""The field of a bad ``meta`` key: ``meta`` and the key, however the server spells it
(``meta.key``, or ``meta["\\ud800"]`` for a key that cannot be written plainly)."""


def _load(name: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


SPORTS = _load("chameleon_sports.json")
SPY = _load("spygame_fruit.json")
CARD = [json.loads(x) for x in (EXAMPLES / "chameleon_batch.jsonl").read_text("utf-8").splitlines()]


def dumps(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


def fill(doc: dict[str, Any], raw: bytes) -> bytes:
    """``doc`` as one line of JSON with its one ``HOLE`` (a value or a key) replaced by
    ``raw``, written as it is."""
    text = dumps(doc)
    hole = json.dumps(HOLE).encode()
    assert text.count(hole) == 1, text[:200]
    return text.replace(hole, raw)


def with_(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(doc))
    out.update(changes)
    return out


def turns(doc: dict[str, Any], i: int, **changes: Any) -> list[dict[str, Any]]:
    out = json.loads(json.dumps(doc["turns"]))
    out[i].update(changes)
    return out


def card(doc: dict[str, Any], **at: str) -> list[str]:
    """The candidates of ``doc`` with some replaced: ``card(doc, c3="x")``."""
    out = list(doc["candidates"])
    for key, word in at.items():
        out[int(key[1:])] = word
    return out


@dataclass(frozen=True)
class Bad:
    kind: str
    record: bytes
    """One line of JSON, as a client sends it."""
    field: str | None
    """The field the error names; ``None`` for a record too deep to be read at all (the
    record is named, no field inside it can be); ``ANY_META`` for a key of ``meta``."""
    also: tuple[str, ...] = ()
    """Other spellings of the field that name it as well."""
    score_field: str | None = None
    """The field ``/v1/score`` names when it is not ``field`` (the whole body)."""

    @property
    def id(self) -> str:
        return f"bad-{self.kind}"

    def names(self, field: str | None) -> bool:
        if self.field == ANY_META:
            return isinstance(field, str) and field[:5] in ("meta.", "meta[") and len(field) > 5
        return field == self.field or field in self.also

    def named_in(self, line: str) -> bool:
        """A command-line error line names the field (``...: FIELD: message``)."""
        if self.field == ANY_META:
            return ": meta." in line or ": meta[" in line
        return any(f": {f}: " in line for f in (self.field, *self.also) if f is not None)


def _sports(kind: str, **changes: Any) -> dict[str, Any]:
    return with_(SPORTS, id=f"bad-{kind}", **changes)


def _duplicate_text() -> bytes:
    line = dumps(_sports("duplicate-key-turn"))
    said = b'"text": "racket"'
    assert line.count(said) == 1
    return line.replace(said, b'"text": "racket", "text": "net"')


def _duplicate_secret() -> bytes:
    line = dumps(_sports("duplicate-key-top"))
    said = b'"secret": "Tennis"'
    assert line.count(said) == 1
    return line.replace(said, b'"secret": "Tennis", "secret": "Golf"')


BAD = [
    Bad("surrogate-turn-text",
        fill(_sports("surrogate-turn-text", turns=turns(SPORTS, 0, text=HOLE)),
             b'"rac\\ud800ket"'),
        "turns[0].text"),
    Bad("surrogate-candidate",
        fill(_sports("surrogate-candidate", candidates=card(SPORTS, c3=HOLE)), b'"Go\\udc00lf"'),
        "candidates[3]"),
    Bad("surrogate-meta-key",
        fill(_sports("surrogate-meta-key", meta={HOLE: "x"}), b'"\\ud800"'), ANY_META),
    Bad("surrogate-meta-value",
        fill(_sports("surrogate-meta-value", meta={"note": HOLE}), b'"\\udfff"'), "meta.note"),
    Bad("huge-integer-round",
        fill(_sports("huge-integer-round", turns=turns(SPORTS, 1, round=HOLE)), HUGE),
        "turns[1].round"),
    Bad("huge-integer-meta",
        fill(_sports("huge-integer-meta", meta={"scores": HOLE}), HUGE), "meta.scores"),
    Bad("deep-object", DEEP, None, score_field="body"),
    # a repeated key is named by its path, as a bad value is: the part the client must fix,
    # and at the top of a record the only spelling that names a field at all
    Bad("duplicate-key-turn", _duplicate_text(), "turns[0].text"),
    Bad("duplicate-key-top", _duplicate_secret(), "secret"),
    Bad("nul-turn-text",
        fill(_sports("nul-turn-text", turns=turns(SPORTS, 0, text=HOLE)), b'"rac\\u0000ket"'),
        "turns[0].text"),
    Bad("nul-candidate",
        fill(_sports("nul-candidate", candidates=card(SPORTS, c3=HOLE)), b'"Go\\u0000lf"'),
        "candidates[3]"),
    Bad("nul-distractor",
        fill(with_(SPY, id="bad-nul-distractor", distractors=["Peach", HOLE, "Melon"]),
             b'"Apri\\u0000cot"'),
        "distractors[1]"),
    Bad("look-alike-candidates",  # Latin Tennis at 2, Cyrillic U+0435 for the e at 3
        dumps(_sports("look-alike-candidates", candidates=card(SPORTS, c3="T\u0435nnis"))),
        "candidates[3]"),
    Bad("nfc-nfd-candidates",  # Café composed at 4, decomposed (e + U+0301) at 5
        dumps(_sports("nfc-nfd-candidates", candidates=card(SPORTS, c4="Caf\u00e9",
                                                             c5="Cafe\u0301"))),
        "candidates[5]", also=("candidates",)),  # as exact duplicates are named
    Bad("round-true",
        fill(_sports("round-true", turns=turns(SPORTS, 1, round=HOLE)), b"true"),
        "turns[1].round"),
]  # fmt: skip
# -- issue 37 (part A): a record of many players: CK-Arena's duplicate-player check compared
# every pair (20,000 players, the duplicate last: 118 s); now linear (tests/test_adapter_scaling)
BAD += [
    Bad("ck-arena-20000-players", dumps(ck_arena(20_000, duplicate_last=True)),
        "game_record.players[19999].player_id"),
]  # fmt: skip
# -- end of issue 37 (part A) --
KINDS = [b.kind for b in BAD]
# -- issue 37, part B: look-alikes and lax numbers the transcript format now refuses ------
ISSUE_37B_BAD = [
    Bad("zero-width-candidate",  # "Golf" with a zero-width space (U+200B) inside
        dumps(_sports("zero-width-candidate", candidates=card(SPORTS, c3="Go\u200blf"))),
        "candidates[3]"),
    Bad("round-string",
        fill(_sports("round-string", turns=turns(SPORTS, 1, round=HOLE)), b'"1"'),
        "turns[1].round"),
]  # fmt: skip
BAD += ISSUE_37B_BAD
KINDS += [b.kind for b in ISSUE_37B_BAD]
# -- end of issue 37, part B -----------------------------------------------------------


def good_records(prefix: str) -> list[tuple[str, bytes]]:
    """Eight good games (id, one line of JSON), their ids under ``prefix`` so that the
    reports of one file or body are told from another's. The sports game carries an escaped
    surrogate pair (U+1F3BE, a valid character), which must not be refused with the lone
    ones."""
    sports = with_(SPORTS, id=f"{prefix}.sports", meta={**SPORTS["meta"], "note": HOLE})
    out = [(sports["id"], fill(sports, b'"\\ud83c\\udfbe"'))]
    for doc in CARD:
        game = with_(doc, id=f"{prefix}.{doc['id']}")
        out.append((game["id"], dumps(game)))
    spy = with_(SPY, id=f"{prefix}.spy")
    out.append((spy["id"], dumps(spy)))
    assert len(out) == 8
    return out


def records(bad: Bad) -> tuple[list[str], list[bytes]]:
    """The good games' ids and the records of ``bad``'s body: the bad one at ``BAD_AT``."""
    good = good_records(bad.kind)
    lines = [line for _, line in good]
    lines.insert(BAD_AT, bad.record)
    return [gid for gid, _ in good], lines


def jsonl(bad: Bad) -> bytes:
    return b"\n".join(records(bad)[1]) + b"\n"


def array(bad: Bad) -> bytes:
    return b"[" + b",\n".join(records(bad)[1]) + b"]"


def _reports_and_errors(lines: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    reports = [x["game_id"] for x in lines if x.get("format") == "leakage.report/1"]
    errors = [x for x in lines if "error" in x]
    assert len(reports) + len(errors) == len(lines), lines
    return reports, errors


def _only_error_names(bad: Bad, errors: list[dict[str, Any]]) -> None:
    """Exactly one error, for the bad record, naming its field."""
    assert [e.get("record") for e in errors] == [BAD_AT], errors
    error = errors[0]["error"]
    assert bad.names(error.get("field")), error
    assert error.get("record") == BAD_AT, error


# -- the service ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    """A server at the default size limits, without the report cache, reading server-side
    paths in ``allowed/`` (so that a job's path is read, not refused unread)."""
    home = tmp_path_factory.mktemp("bad-input")
    (home / "allowed").mkdir()
    a = Api(settings_for(home, default_index, report_cache_bytes=0,
                         allowed_paths=[home / "allowed"]))  # fmt: skip
    yield a
    a.close()


@pytest.fixture(scope="module")
def jobs(api: Api) -> dict[str, dict[str, Any]]:
    """One job per kind (its JSONL uploaded), submitted together and waited for."""
    submitted = {}
    for bad in BAD:
        r = api.post("/v1/jobs", content=jsonl(bad), headers=JSONL)
        submitted[bad.kind] = r
    out = {}
    for kind, r in submitted.items():
        if r.status_code != 202:
            out[kind] = {"submitted": r.status_code, "body": r.text[:500]}
            continue
        out[kind] = wait_job(api, r.json()["id"], timeout=60)
    return out


def test_the_good_records_score(api: Api):
    """The control: the good games, the escaped surrogate pair included, are all scored."""
    good = good_records("control")
    for gid, line in good:
        r = api.post("/v1/score", content=line)
        assert r.status_code == 200 and r.json()["game_id"] == gid, r.text[:500]
    body = b"\n".join(line for _, line in good)
    reports, errors = _reports_and_errors(ndjson(api.post("/v1/score/batch", content=body,
                                                          headers=JSONL)))  # fmt: skip
    assert (reports, errors) == ([gid for gid, _ in good], [])


@pytest.mark.parametrize("bad", BAD, ids=KINDS)
def test_score_is_422_naming_the_field(api: Api, bad: Bad):
    r = api.post("/v1/score", content=bad.record)
    assert r.status_code == 422, (r.status_code, r.text[:500])
    error = assert_error(r, 422, "?")
    if bad.score_field is not None:  # the body is the record
        assert error["field"] == bad.score_field, error
    else:
        assert bad.names(error["field"]), error


@pytest.mark.parametrize("shape", ["jsonl", "array"])
@pytest.mark.parametrize("bad", BAD, ids=KINDS)
def test_batch_scores_every_good_record_and_names_the_bad_one(api: Api, bad: Bad, shape: str):
    body, headers = (jsonl(bad), JSONL) if shape == "jsonl" else (array(bad), JSON)
    r = api.post("/v1/score/batch", content=body, headers=headers)
    assert r.status_code == 200, (r.status_code, r.text[:500])
    lines = ndjson(r)
    reports, errors = _reports_and_errors(lines)
    good, _ = records(bad)
    assert reports == good, lines
    _only_error_names(bad, errors)
    assert [x.get("record") for x in lines].index(BAD_AT) == BAD_AT  # in record order


@pytest.mark.parametrize("bad", BAD, ids=KINDS)
def test_a_job_stores_every_good_record_and_lists_the_bad_one(
    api: Api, jobs: dict[str, dict[str, Any]], bad: Bad
):
    job = jobs[bad.kind]
    assert "submitted" not in job, job
    good, _ = records(bad)
    assert (job["state"], job["ok"], job["failed"]) == ("done", len(good), 1), job
    _only_error_names(bad, job["errors"])
    r = api.get(f"/v1/jobs/{job['id']}/results")
    assert r.status_code == 200, r.text[:500]
    reports, errors = _reports_and_errors(ndjson(r))
    assert reports == good
    _only_error_names(bad, errors)


@pytest.mark.parametrize("bad", BAD, ids=KINDS)
def test_the_explorer_opens_the_good_games_of_the_job(
    api: Api, jobs: dict[str, dict[str, Any]], bad: Bad
):
    """The job's game view reads the job's input again: the good game after the bad record
    is there with its transcript; asking for the bad record is not a server error."""
    job = jobs[bad.kind]
    assert "submitted" not in job, job
    good, _ = records(bad)
    after = good[BAD_AT]  # record BAD_AT + 1
    r = api.get(f"/v1/jobs/{job['id']}/games/{after}", params={"record": BAD_AT + 1})
    assert r.status_code == 200, r.text[:500]
    view = r.json()
    assert view["ok"] and view["report"]["game_id"] == after and view["transcript"]["id"] == after
    r = api.get(f"/v1/jobs/{job['id']}/games/{bad.id}", params={"record": BAD_AT})
    assert r.status_code < 500, r.text[:500]
    if r.status_code == 200:
        assert not r.json()["ok"] and bad.names(r.json()["error"]["field"]), r.text[:500]
    else:
        assert_error(r, r.status_code, "?")


@pytest.mark.parametrize("bad", BAD, ids=KINDS)
def test_the_explorer_preview_of_a_pasted_transcript_is_422_naming_the_field(api: Api, bad: Bad):
    body = b'{"transcript": ' + bad.record + b', "clue": "net"}'
    r = api.post("/v1/score/preview", content=body, headers=JSON)
    assert r.status_code == 422, (r.status_code, r.text[:500])
    field = assert_error(r, 422, "?")["field"]
    if bad.field is None:  # the transcript cannot be read at all
        assert field in ("body", "body.transcript"), field
    else:
        prefix = "body.transcript."
        assert field.startswith(prefix) and bad.names(field[len(prefix) :]), field


@pytest.mark.parametrize("body", [DEEP, b"[" * 10000 + b"]" * 10000], ids=["object", "list"])
def test_a_job_body_nested_10000_deep_is_refused_not_a_server_error(api: Api, body: bytes):
    """Refused at submission (422 naming the body), or a job whose one record fails."""
    r = api.post("/v1/jobs", content=body, headers=JSON)
    assert r.status_code in (202, 422), (r.status_code, r.text[:500])
    if r.status_code == 422:
        assert assert_error(r, 422, "?")["field"] == "body"
    else:
        job = wait_job(api, r.json()["id"])
        assert (job["state"], job["ok"], job["failed"]) == ("done", 0, 1), job
        assert [e["record"] for e in job["errors"]] == [0]


PATH_REQUESTS = [
    # (what, the body with {dir} for the allowed folder, the field named)
    ("path huge integer", b'{"path": ' + HUGE + b"}", "path"),
    ("paths huge integer", b'{"paths": ["{dir}/a.jsonl", ' + HUGE + b"]}", "paths[1]"),
    ("path lone surrogate", b'{"path": "{dir}/a\\ud800.jsonl"}', "path"),
    ("path twice", b'{"path": "{dir}/a.jsonl", "path": "{dir}/b.jsonl"}', "path"),
]


@pytest.mark.parametrize(
    ("what", "body", "field"), PATH_REQUESTS, ids=[x[0] for x in PATH_REQUESTS]
)
def test_a_job_path_request_that_cannot_be_read_is_422_naming_the_field(
    api: Api, what: str, body: bytes, field: str
):
    allowed = api.state.settings.allowed_paths[0]
    for name in ("a.jsonl", "b.jsonl"):  # both there: a path is refused for its JSON alone
        (allowed / name).write_bytes(b"\n".join(line for _, line in good_records(name)))
    body = body.replace(b"{dir}", json.dumps(str(allowed))[1:-1].encode())
    r = api.post("/v1/jobs", content=body, headers=JSON)
    assert r.status_code == 422, (r.status_code, r.text[:500])
    assert assert_error(r, 422, "?")["field"] == field


# -- the command line ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with one JSONL file per kind: ``KIND.jsonl``, the bad record at line 5."""
    folder = tmp_path_factory.mktemp("bad-corpus")
    for bad in BAD:
        (folder / f"{bad.kind}.jsonl").write_bytes(jsonl(bad))
    return folder


def _leakage(*args: str, home: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_leakage(*args, home=home, timeout=timeout, errors="backslashreplace")


@dataclass
class Run:
    proc: subprocess.CompletedProcess[str]
    out: Path

    def describe(self) -> str:
        return f"exit {self.proc.returncode}; stderr: {self.proc.stderr[-3000:]}"


@pytest.fixture(scope="module")
def score_run(corpus: Path, shared_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    out = tmp_path_factory.mktemp("score") / "reports.jsonl"
    proc = _leakage("score", str(corpus), "-f", "jsonl", "-o", str(out), home=shared_home)
    return Run(proc, out)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8", errors="backslashreplace")
    return [json.loads(x) for x in text.split("\n") if x.strip()]


@pytest.mark.parametrize("bad", BAD, ids=KINDS)
def test_leakage_score_names_the_bad_record_and_writes_the_good_reports(score_run: Run, bad: Bad):
    proc = score_run.proc
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, score_run.describe()
    said = [x for x in proc.stderr.split("\n") if f"{bad.kind}.jsonl" in x]
    assert len(said) == 1, score_run.describe()
    line = said[0]
    assert line.startswith("error: ") and "record line 5" in line, line
    assert bad.field is None or bad.named_in(line), line
    good, _ = records(bad)
    reports = [r["game_id"] for r in _read_jsonl(score_run.out)]
    assert [g for g in reports if g.startswith(f"{bad.kind}.")] == good, score_run.describe()


def _batch(corpus: Path, home: Path, out: Path, *engine: str) -> Run:
    proc = _leakage("batch", str(corpus), "--out", str(out), "--no-progress", *engine,
                    home=home)  # fmt: skip
    return Run(proc, out)


@pytest.fixture(scope="module")
def batch_local(corpus: Path, shared_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    return _batch(corpus, shared_home, tmp_path_factory.mktemp("batch") / "out", "--workers", "0")


@pytest.fixture(scope="module")
def batch_ray(corpus: Path, shared_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    pytest.importorskip("ray")
    out = tmp_path_factory.mktemp("batch-ray") / "out"
    return _batch(corpus, shared_home, out, "--engine", "ray", "--workers", "1")


def _check_batch(run: Run, bad: Bad) -> None:
    proc = run.proc
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, run.describe()
    errors = [e for e in _read_jsonl(run.out / "errors.jsonl")
              if Path(e["source"]).name == f"{bad.kind}.jsonl"]  # fmt: skip
    assert len(errors) == 1, (errors, run.describe())
    assert errors[0]["label"] == "line 5", errors
    _only_error_names(bad, errors)
    good, _ = records(bad)
    reports = [r["game_id"] for r in _read_jsonl(run.out / "reports.jsonl")]
    assert sorted(g for g in reports if g.startswith(f"{bad.kind}.")) == sorted(good)
    import pyarrow.parquet as pq

    steps = pq.read_table(run.out / "steps").to_pylist()
    stored = {(r["record"], r["game_id"]) for r in steps
              if Path(r["source"]).name == f"{bad.kind}.jsonl"}  # fmt: skip
    expected = {(i if i < BAD_AT else i + 1, g) for i, g in enumerate(good)}
    assert stored == expected


@pytest.mark.parametrize("bad", BAD, ids=KINDS)
def test_leakage_batch_local_lists_the_bad_record_and_stores_the_good_games(
    batch_local: Run, bad: Bad
):
    _check_batch(batch_local, bad)


@pytest.mark.parametrize("bad", BAD, ids=KINDS)
def test_leakage_batch_on_ray_lists_the_bad_record_and_stores_the_good_games(
    batch_ray: Run, bad: Bad
):
    _check_batch(batch_ray, bad)


# -- issue 37, part B: requests that were answered laxly --------------------------------


def test_a_nul_in_a_preview_clue_is_422_naming_it(api: Api):
    body = {"transcript": SPORTS, "clue": "ne\u0000t"}
    err = assert_error(api.post("/v1/score/preview", json=body), 422, "invalid_request")
    assert err["field"] == "body.clue" and "NUL" in err["message"]


def test_round_one_point_zero_is_round_one(api: Api):
    """Decided: ``1.0`` is the number 1 (JSON Schema's integer), ``"1"`` a 422 (above)."""
    game = _sports("round-float", turns=turns(SPORTS, 1, round=1.0))
    r = api.post("/v1/score", json=game)
    assert r.status_code == 200, r.text[:500]
    fraction = _sports("round-fraction", turns=turns(SPORTS, 1, round=1.5))
    assert_error(api.post("/v1/score", json=fraction), 422, "invalid_transcript", "turns[1].round")


def test_unknown_query_parameters_are_422_naming_them(api: Api):
    job = api.post("/v1/jobs", content=jsonl(BAD[0]), headers=JSONL).json()["id"]
    for method, url, kw in [
        ("GET", "/v1/jobs", {"params": {"limt": 5}}),
        ("GET", f"/v1/jobs/{job}/records", {"params": {"page": 2}}),
        ("POST", "/v1/transcripts", {"params": {"fromat": "x"}, "content": dumps(SPORTS)}),
        ("POST", "/v1/score", {"params": {"bakend": "x"}, "content": dumps(SPORTS)}),
    ]:
        name = next(iter(kw["params"]))
        err = assert_error(api.request(method, url, **kw), 422, "invalid_request", name)
        assert "unknown query parameter" in err["message"], err
    assert api.get("/healthz", params={"x": 1}).status_code == 200  # probes ignore a query


def test_a_trailing_slash_is_a_404_not_a_redirect_to_the_host_header(api: Api):
    r = api.get("/v1/jobs/", headers={"host": "evil.example"})
    err = assert_error(r, 404, "not_found")
    assert "location" not in r.headers and "/v1/jobs" in err["message"]


def test_head_on_a_get_route_answers_without_a_body(api: Api):
    got = api.get("/v1/transcripts/formats")
    head = api.request("HEAD", "/v1/transcripts/formats")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(got.content))
    assert api.request("HEAD", "/v1/score").status_code == 405


def test_game_ids_of_any_characters_open_in_the_job_view(api: Api):
    ids = ["a/b", 'q"uote', "back\\slash", "tab\there", "..", "é ✓"]
    body = b"\n".join(dumps(with_(SPORTS, id=gid)) for gid in ids) + b"\n"
    job = wait_job(api, api.post("/v1/jobs", content=body, headers=JSONL).json()["id"])
    assert (job["state"], job["ok"]) == ("done", len(ids)), job
    for i, gid in enumerate(ids):
        r = api.get(f"/v1/jobs/{job['id']}/games", params={"game_id": gid})
        assert r.status_code == 200 and (r.json()["game_id"], r.json()["record"]) == (gid, i)


# == issue 37 (part A): compressed inputs =================================================
# Inspect .eval logs that are bombs or damaged, on every path that reads them: a bomb (a
# member declaring a gibibyte) is refused whole before anything is read (413 naming the
# member; one error naming it from the command line); a damaged sample member (bad CRC-32,
# inflating past its declared size) fails alone between the eight good games.


@dataclass(frozen=True)
class BadLog:
    kind: str
    member: str
    """The archive member the error names."""
    bomb: bool
    """Refused whole (no game read), or one bad sample among good ones."""

    @property
    def data(self) -> bytes:
        games = [json.loads(line) for _, line in good_records(self.kind)]
        if self.bomb:
            return declared_bomb(games, self.member, 1 << 30)
        games.insert(BAD_AT, with_(SPORTS, id=f"{self.kind}.damaged"))
        if self.kind == "bad-crc-sample":
            return bad_crc(games, BAD_AT)
        return lying_member(games, BAD_AT, 1 << 20)


SAMPLE_AT = f"samples/{BAD_AT + 1}_epoch_1.json"
BAD_LOGS = [
    BadLog("bomb-header", "header.json", bomb=True),
    BadLog("bomb-messages", SAMPLE_AT, bomb=True),
    BadLog("bad-crc-sample", SAMPLE_AT, bomb=False),
    BadLog("lying-sample", SAMPLE_AT, bomb=False),
]
LOG_KINDS = [b.kind for b in BAD_LOGS]


@pytest.mark.parametrize("bad", BAD_LOGS, ids=LOG_KINDS)
def test_a_bad_log_on_the_service(api: Api, bad: BadLog):
    good, _ = records(Bad(bad.kind, b"", None))
    r = api.post("/v1/transcripts", content=bad.data)
    if bad.bomb:
        err = assert_error(r, 413, "input_too_large", bad.member)
        assert bad.member in err["message"], err
        r = api.post("/v1/jobs", content=bad.data, headers={"content-type": "application/zip"})
        assert_error(r, 413, "input_too_large", bad.member)
        return
    assert r.status_code == 200, r.text[:500]
    assert [g["id"] for g in r.json()["games"]] == good
    (error,) = r.json()["errors"]
    assert bad.member in error["message"] and error["record"] == f"sample {BAD_AT + 1}", error
    r = api.post("/v1/jobs", content=bad.data, headers={"content-type": "application/zip"})
    assert r.status_code == 202, r.text[:500]
    job = wait_job(api, r.json()["id"], timeout=60)
    assert (job["state"], job["ok"], job["failed"]) == ("done", len(good), 1), job
    assert [e["record"] for e in job["errors"]] == [BAD_AT], job["errors"]


@pytest.fixture(scope="module")
def log_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bad-logs")
    for bad in BAD_LOGS:
        (folder / f"{bad.kind}.eval").write_bytes(bad.data)
    return folder


@pytest.fixture(scope="module")
def log_runs(log_corpus: Path, shared_home: Path, tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("log-score") / "reports.jsonl"
    score = Run(_leakage("score", str(log_corpus), "-f", "jsonl", "-o", str(out),
                         home=shared_home), out)  # fmt: skip
    batch = _batch(log_corpus, shared_home, tmp_path_factory.mktemp("log-batch") / "out",
                   "--workers", "0")  # fmt: skip
    return score, batch


@pytest.mark.parametrize("bad", BAD_LOGS, ids=LOG_KINDS)
def test_a_bad_log_on_the_command_line(log_runs: tuple[Run, Run], bad: BadLog):
    score, batch = log_runs
    good, _ = records(Bad(bad.kind, b"", None))
    expected = [] if bad.bomb else good
    proc = score.proc
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, score.describe()
    said = [x for x in proc.stderr.split("\n") if f"{bad.kind}.eval" in x]
    assert len(said) == 1 and said[0].startswith("error: ") and bad.member in said[0], said
    reports = [r["game_id"] for r in _read_jsonl(score.out)]
    assert [g for g in reports if g.startswith(f"{bad.kind}.")] == expected, score.describe()
    assert batch.proc.returncode == 2 and "Traceback" not in batch.proc.stderr, batch.describe()
    errors = [e for e in _read_jsonl(batch.out / "errors.jsonl")
              if Path(e["source"]).name == f"{bad.kind}.eval"]  # fmt: skip
    assert len(errors) == 1 and bad.member in errors[0]["error"]["message"], errors
    assert errors[0]["error"]["type"] == ("input_too_large" if bad.bomb else "invalid_transcript")
    reports = [r["game_id"] for r in _read_jsonl(batch.out / "reports.jsonl")]
    assert sorted(g for g in reports if g.startswith(f"{bad.kind}.")) == sorted(expected)


# == end of issue 37 (part A) ===============================================================
