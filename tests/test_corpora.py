"""The data the project ships: the card set (package data in leakage/data/), the example
transcripts and the deliberately bad examples in corpora/."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leakage.errors import CorpusError, InvalidTranscript
from leakage.games import load_cards
from leakage.transcripts import ChameleonTranscript, SpyGameTranscript, load_transcripts

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "corpora"
DATA = ROOT / "leakage" / "data"
CARDS = DATA / "chameleon_cards.json"
EXAMPLES = CORPORA / "examples"
BAD = EXAMPLES / "bad"

GOOD_EXAMPLES = sorted(p for p in EXAMPLES.glob("*.json*") if p.is_file())


def _cards() -> dict[str, list[str]]:
    data = json.loads(CARDS.read_text(encoding="utf-8"))
    return {card["category"]: card["words"] for card in data}


# --- card set ------------------------------------------------------------------------------


def test_card_set_shape() -> None:
    data = json.loads(CARDS.read_text(encoding="utf-8"))
    assert isinstance(data, list)
    assert len(data) >= 20
    categories = [card["category"] for card in data]
    assert len(set(categories)) == len(categories), "a category appears twice"
    for card in data:
        assert set(card) == {"category", "words"}, card["category"]
        words = card["words"]
        assert len(words) == 16, card["category"]
        assert len({w.casefold() for w in words}) == 16, f"duplicate word in {card['category']}"
        for w in words:
            assert w == w.strip() and w, (card["category"], w)
            assert w[0].isupper(), f"{card['category']}: {w!r} is not in title case"


def test_card_set_has_multi_word_and_rare_sports() -> None:
    sports = _cards()["Sports"]
    for word in ("Ice Hockey", "Motor Racing", "Triathlon", "Table Tennis"):
        assert word in sports


def test_load_cards_reads_the_package_data() -> None:
    import leakage
    from leakage.games._cards import shipped_cards_file

    assert Path(str(shipped_cards_file())) == Path(leakage.__file__).parent / "data" / CARDS.name
    cards = load_cards()
    assert {c.category: list(c.words) for c in cards} == _cards()


@pytest.mark.parametrize("content", [None, "[", "[]"])
def test_missing_or_bad_shipped_cards_are_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: str | None
) -> None:
    import leakage.games._cards as mod

    shipped = tmp_path / "chameleon_cards.json"
    if content is not None:
        shipped.write_text(content)
    monkeypatch.setattr(mod, "shipped_cards_file", lambda: shipped)
    load_cards.cache_clear()
    try:
        with pytest.raises(CorpusError, match="shipped card set") as err:
            load_cards()
    finally:
        load_cards.cache_clear()
    assert str(shipped) in str(err.value) and "reinstall" in str(err.value)


def test_card_readme_states_origin_and_licence() -> None:
    text = " ".join((DATA / "README.md").read_text(encoding="utf-8").split())
    assert "written for this project" in text
    assert "MIT" in text


# --- good examples -------------------------------------------------------------------------


def test_expected_example_files_exist() -> None:
    names = {p.name for p in GOOD_EXAMPLES}
    assert names == {
        "chameleon_sports.json",
        "chameleon_batch.jsonl",
        "spygame_fruit.json",
        "spygame_two_spies.json",
    }


@pytest.mark.parametrize("path", GOOD_EXAMPLES, ids=lambda p: p.name)
def test_example_loads_without_errors(path: Path) -> None:
    good, errors = load_transcripts([path])
    assert errors == []
    assert good


def test_example_counts_and_ids() -> None:
    good, errors = load_transcripts([EXAMPLES])  # the directory: recurses into bad/ too
    good = [t for t in good if not t.id.startswith(("mixed-", "bad-"))]
    chameleon = [t for t in good if isinstance(t, ChameleonTranscript)]
    spygame = [t for t in good if isinstance(t, SpyGameTranscript)]
    assert len(chameleon) == 7
    assert len(spygame) == 2
    ids = [t.id for t in good]
    assert len(set(ids)) == len(ids)
    assert any(t.secret is None for t in chameleon)
    assert any(len({turn.round for turn in t.turns}) == 2 for t in chameleon)
    # every error comes from bad/
    assert errors and all(BAD.name in Path(e.source).parts for e in errors)


def test_chameleon_candidates_come_from_the_card_set() -> None:
    cards = _cards()
    good, _ = load_transcripts(GOOD_EXAMPLES)
    chameleon = [t for t in good if isinstance(t, ChameleonTranscript)]
    assert chameleon
    for t in chameleon:
        assert t.category in cards, t.id
        assert t.candidates == cards[t.category], t.id
        assert len(t.chameleons()) == 1, t.id
        if t.secret is not None:
            assert t.secret in t.candidates
        if t.chameleon_guess is not None:
            assert t.chameleon_guess in t.candidates, t.id


def test_sports_example() -> None:
    [game], errors = load_transcripts([EXAMPLES / "chameleon_sports.json"])
    assert errors == []
    assert isinstance(game, ChameleonTranscript)
    assert game.category == "Sports"
    assert len(game.candidates) == 16
    assert game.secret in game.candidates
    assert [p.id for p in game.players] == ["p1", "p2", "p3", "p4"]
    assert len(game.turns) == 4
    assert len(game.votes) == 4


def test_spygame_examples() -> None:
    [fruit], errors = load_transcripts([EXAMPLES / "spygame_fruit.json"])
    assert errors == []
    assert isinstance(fruit, SpyGameTranscript)
    assert (fruit.words.civilian, fruit.words.spy) == ("Mango", "Papaya")
    assert len(fruit.players) == 5
    assert len(fruit.spies()) == 1
    assert {t.round for t in fruit.turns} == {1, 2}
    assert fruit.eliminations

    [strings], errors = load_transcripts([EXAMPLES / "spygame_two_spies.json"])
    assert errors == []
    assert isinstance(strings, SpyGameTranscript)
    assert (strings.words.civilian, strings.words.spy) == ("Violin", "Cello")
    assert len(strings.players) == 6
    assert len(strings.spies()) == 2
    assert {t.round for t in strings.turns} == {1, 2}


# --- bad examples --------------------------------------------------------------------------


def _only_error(name: str) -> InvalidTranscript:
    path = BAD / name
    good, errors = load_transcripts([path])
    assert good == []
    assert len(errors) == 1, [str(e) for e in errors]
    [err] = errors
    assert isinstance(err, InvalidTranscript)
    assert err.source == str(path)
    assert str(path) in str(err)
    return err


def test_bad_malformed() -> None:
    err = _only_error("malformed.json")
    assert len(err.problems) == 1
    assert err.problems[0][1].startswith("malformed JSON")


def test_bad_unknown_player() -> None:
    err = _only_error("unknown_player.json")
    assert err.record == 0
    assert err.problems == [("turns[3].player", "unknown player 'p5'")]
    assert "record 0" in str(err)


def test_bad_mixed_jsonl_keeps_the_good_lines() -> None:
    path = BAD / "mixed.jsonl"
    good, errors = load_transcripts([path])
    assert [t.id for t in good] == ["mixed-good-1", "mixed-good-2"]
    assert len(errors) == 1
    [err] = errors
    assert isinstance(err, InvalidTranscript)
    assert err.source == str(path)
    assert err.record == "line 2"
    assert [field for field, _ in err.problems] == ["secret"]
    assert "not among the candidates" in err.problems[0][1]
    assert f"{path}, record line 2" in str(err)


def test_bad_latin1() -> None:
    raw = (BAD / "latin1.json").read_bytes()
    assert "Crème Brûlée".encode("latin-1") in raw  # really Latin-1, really not UTF-8
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    err = _only_error("latin1.json")
    assert len(err.problems) == 1
    assert "not UTF-8" in err.problems[0][1]


def test_bad_empty() -> None:
    assert (BAD / "empty.json").read_bytes() == b""
    err = _only_error("empty.json")
    assert err.problems == [("", "empty file")]
