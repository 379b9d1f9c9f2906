"""One shape for every error line (``leakage.errors.ErrorRecord``): ``leakage batch``'s
``errors.jsonl`` and the service's batch and job result lines differ only in where the
record is (the batch's ``source`` and ``label``), and their ``error`` object is the one of
the service's error bodies."""

from __future__ import annotations

import json
import pickle

from leakage.batch._worker import error_line as batch_error_line
from leakage.errors import (
    BackendUnavailable,
    ErrorRecord,
    InvalidInput,
    InvalidTranscript,
    LeakageError,
)
from leakage_service.errors import GameTooLarge, describe_leakage_error, error_body
from leakage_service.errors import error_line as service_error_line


def test_a_batch_line_is_a_service_line_with_its_file_and_label():
    err = InvalidTranscript([("turns[1].player", "unknown player 'p9'")], source="x", record=7)
    batch = json.loads(batch_error_line("games.jsonl", 3, "line 4", err))
    service = json.loads(service_error_line(3, err))
    assert batch == {"source": "games.jsonl", "label": "line 4", **service}
    assert list(batch) == ["source", "record", "label", "error"]
    assert service == {
        "record": 3,
        "error": {
            "type": "invalid_transcript",
            "message": "x, record 7: turns[1].player: unknown player 'p9'",
            "field": "turns[1].player",
            "record": 3,
            "problems": [{"field": "turns[1].player", "message": "unknown player 'p9'"}],
        },
    }


def test_the_error_object_is_the_one_of_the_error_bodies():
    err = InvalidInput("bad game")
    status, detail = describe_leakage_error(err, record=2)
    assert status == 422
    assert json.loads(service_error_line(2, err))["error"] == detail
    assert error_body("invalid_input", "bad game", record=2)["error"] == detail
    assert detail == ErrorRecord.of(err, record=2).detail()


def test_the_type_is_the_error_classes_own():
    assert ErrorRecord.of(InvalidInput("x")).type == "invalid_input"
    assert ErrorRecord.of(GameTooLarge([("turns", "too many")])).type == "game_too_large"
    assert describe_leakage_error(BackendUnavailable("no torch"))[0] == 503

    class Unmapped(LeakageError):
        error_type = "unmapped"

    # an error the service does not map is a bug there: a 500, whatever it calls itself
    assert describe_leakage_error(Unmapped("x"))[1]["type"] == "internal_error"
    assert ErrorRecord.of(Unmapped("x")).type == "unmapped"


def test_a_bug_is_an_internal_error_line_without_its_message():
    line = json.loads(service_error_line(5, RuntimeError("secret detail")))
    assert line["error"]["type"] == "internal_error" and "secret" not in line["error"]["message"]
    assert line["record"] == line["error"]["record"] == 5


def test_a_record_travels_between_processes():
    found = ErrorRecord.of(InvalidTranscript([("", "empty")]), source="a", label="line 1")
    assert pickle.loads(pickle.dumps(found)) == found
    # a problem without a field has a null field, and names no field for the record
    assert found.detail()["problems"] == [{"field": None, "message": "empty"}]
    assert found.field is None
