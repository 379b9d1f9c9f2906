"""leakage.errors.validation_problems: the one formatter of pydantic's errors (library and
service): its field paths are the ones the seven former formatters wrote."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

from leakage.errors import validation_problems


class _Pair(BaseModel):
    word: str
    score: float


class _Doc(BaseModel):
    kind: Literal["a", "b"]
    pairs: list[_Pair] = Field(default_factory=list)


def _err(doc: object) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Doc.model_validate(doc)
    return info.value


def test_fields_are_paths_or_dotted_in_pydantics_order():
    err = _err({"kind": "c", "pairs": [{"word": "x", "score": 1}, {"word": 3}]})
    assert validation_problems(err) == [
        ("kind", "Input should be 'a' or 'b'"),
        ("pairs[1].word", "Input should be a valid string"),
        ("pairs[1].score", "Field required"),
    ]
    dotted = [field for field, _ in validation_problems(err, dotted=True)]
    assert dotted == ["kind", "pairs.1.word", "pairs.1.score"]


def test_strip_keep_and_by_type():
    err = _err({"kind": "a", "pairs": [{"word": 1, "score": 0}]})
    assert validation_problems(err, strip=("pairs",)) == [
        ("[0].word", "Input should be a valid string")
    ]
    assert validation_problems(err, strip=("word",)) == [
        ("pairs[0].word", "Input should be a valid string")
    ]
    kept = validation_problems(err, keep=lambda part: part != "pairs")
    assert kept == [("[0].word", "Input should be a valid string")]
    by_type = {"string_type": lambda e: [("w", f"{e['input']!r} is no word"), ("", "two")]}
    assert validation_problems(err, by_type=by_type) == [("w", "1 is no word"), ("", "two")]


def test_a_whole_value_error_has_an_empty_field():
    assert validation_problems(_err([1])) == [
        ("", "Input should be a valid dictionary or instance of _Doc")
    ]
