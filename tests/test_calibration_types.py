"""Calibration per item type: the frozen split, the item-type rule, typed weights files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from leakage import create_backend, load_transcripts
from leakage.backends import base
from leakage.backends.ensemble import (
    WEIGHTS_FORMAT,
    EnsembleWeights,
    default_weights_path,
    item_type,
    read_weights,
)
from leakage.calibration import (
    FROZEN_SHARE,
    GameItems,
    build_item_set,
    calibrate_on,
    dev_frozen_split,
    extract_items,
    item_types,
    split_side,
    with_type_fit,
)
from leakage.errors import InvalidInput

# -- the frozen split ------------------------------------------------------------------------


def test_split_side_is_the_documented_hash():
    """SHA-256 of the id, first 8 bytes big-endian, / 2**64 < 1/3: frozen. Worked by hand."""
    for item_id in ("codenames-guess-val-0", "codenames-guess-val-4", "é-ü", ""):
        digest = hashlib.sha256(item_id.encode("utf-8")).hexdigest()
        u = int(digest[:16], 16)
        assert split_side(item_id) == ("frozen" if u < 2**64 / 3 else "dev")
    # fixed values, so that a change of the rule cannot pass unnoticed
    assert split_side("codenames-guess-val-0") == "dev"
    assert split_side("codenames-guess-val-4") == "frozen"


def test_split_is_deterministic_disjoint_and_about_a_third():
    ids = [f"game-{i}" for i in range(3000)]
    dev, frozen = dev_frozen_split(ids)
    assert set(dev).isdisjoint(frozen) and set(dev) | set(frozen) == set(ids)
    assert dev == [i for i in ids if i in set(dev)]  # input order kept
    # order and company do not move an item
    dev_r, frozen_r = dev_frozen_split(reversed(ids))
    assert set(dev_r) == set(dev) and set(frozen_r) == set(frozen)
    alone = {i for i in ids[:50] if split_side(i) == "frozen"}
    assert alone == set(frozen) & set(ids[:50])
    assert abs(len(frozen) / len(ids) - FROZEN_SHARE) < 0.03


def test_split_refuses_duplicate_ids_and_bad_shares():
    with pytest.raises(ValueError, match="listed twice"):
        dev_frozen_split(["a", "b", "a"])
    with pytest.raises(ValueError, match="frozen_share"):
        split_side("a", frozen_share=1.0)


def test_codenames_split_counts(shared_data: Path):
    """The split of the 377 real items, as docs/benchmarks.md reports it."""
    path = shared_data / "codenames-guess-val" / "games.jsonl"
    ids = [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]
    dev, frozen = dev_frozen_split(ids)
    assert (len(dev), len(frozen)) == (253, 124)


# -- the item-type rule and per-type weights ------------------------------------------------

SENTENCE = "A sport played with an oval-shaped ball."


@pytest.mark.parametrize(
    ("clue", "k", "kind"),
    [
        ("circle", 25, "word"),
        ("circle", 3, "word"),
        ("  ice cream ", 16, "word"),
        ("circle", 2, "statement"),
        (SENTENCE, 2, "statement"),
        ("  ice cream ", 2, "statement"),
        (SENTENCE, 16, "sentence_card"),
        (SENTENCE, 3, "sentence_card"),
        ("three word clue", 8, "sentence_card"),
    ],
)
def test_item_type_rule(clue, k, kind):
    assert item_type(clue, k) == kind


class RowsBackend:
    """log P(clue | candidate) read from a per-clue row (first k entries)."""

    def __init__(self, name: str, rows: dict[str, list[float]]) -> None:
        self.name = name
        self.rows = rows

    def info(self):
        return {"backend": self.name}

    def loglik(self, clues, candidates, *, category=None):
        return np.array([self.rows[c][: len(candidates)] for c in clues], dtype=np.float64)


ROWS_X = {"bat": [0.0, -1.0, -5.0], SENTENCE: [-2.0, 0.0, -1.0]}
ROWS_Y = {"bat": [1.0, 4.0, 1.0], SENTENCE: [0.0, 3.0, 0.0]}


def _doc(**over) -> dict:
    doc = {
        "format": WEIGHTS_FORMAT,
        "version": 2,
        "members": ["tx", "ty"],
        "weights": {"tx": 1.0, "ty": 0.5},
        "scales": {"tx": 2.0, "ty": 1.0},
        "item_types": {
            "word": {"weights": {"tx": 3.0, "ty": 0.0}, "scales": {"tx": 0.5, "ty": 1.0}}
        },
    }
    return {**doc, **over}


@pytest.fixture
def typed_members():
    for name, rows in (("tx", ROWS_X), ("ty", ROWS_Y)):
        base.register_backend(name)(lambda rows=rows, name=name: RowsBackend(name, rows))
    yield
    for name in ("tx", "ty"):
        base.BACKENDS.pop(name, None)


def _centred(row: list[float]) -> np.ndarray:
    a = np.array(row)
    return a - a.mean()


def test_each_clue_gets_its_types_weights(tmp_path, typed_members):
    """In one call, a word clue uses item_types.word, a sentence the top-level fit."""
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_doc()))
    ens = create_backend("ensemble", weights_path=path)
    got = ens.loglik(["bat", SENTENCE], ["a", "b", "c"])
    word = 3.0 / 0.5 * _centred(ROWS_X["bat"])  # ty has weight 0 for words
    statement = 1.0 / 2.0 * _centred(ROWS_X[SENTENCE]) + 0.5 / 1.0 * _centred(ROWS_Y[SENTENCE])
    np.testing.assert_allclose(got[0], word)
    np.testing.assert_allclose(got[1], statement)
    # against a pair the one-word clue is a statement: the top-level fit
    pair = ens.loglik(["bat"], ["a", "b"])
    want = 0.5 * _centred(ROWS_X["bat"][:2]) + 0.5 * _centred(ROWS_Y["bat"][:2])
    np.testing.assert_allclose(pair[0], want)
    info = ens.info()
    assert info["weights"] == {"tx": 1.0, "ty": 0.5}
    assert info["item_types"]["word"]["weights"] == {"tx": 3.0, "ty": 0.0}


def test_a_sentence_on_a_card_gets_its_own_fit(tmp_path, typed_members):
    """Worked by hand: in one call against a card of 3, a one-word clue uses item_types.word
    and a sentence item_types.sentence_card; the same sentence against a pair the top-level
    (statement) fit; a file without a sentence_card entry serves it with the top-level fit."""
    card_fit = {"weights": {"tx": 0.0, "ty": 2.0}, "scales": {"tx": 1.0, "ty": 4.0}}
    doc = _doc(item_types={**_doc()["item_types"], "sentence_card": card_fit})
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    ens = create_backend("ensemble", weights_path=path)
    got = ens.loglik(["bat", SENTENCE], ["a", "b", "c"])
    np.testing.assert_allclose(got[0], 3.0 / 0.5 * _centred(ROWS_X["bat"]))
    np.testing.assert_allclose(got[1], 2.0 / 4.0 * _centred(ROWS_Y[SENTENCE]))  # tx: weight 0
    pair = ens.loglik([SENTENCE], ["a", "b"])
    statement = 0.5 * _centred(ROWS_X[SENTENCE][:2]) + 0.5 * _centred(ROWS_Y[SENTENCE][:2])
    np.testing.assert_allclose(pair[0], statement)
    assert ens.info()["item_types"]["sentence_card"]["scales"] == {"tx": 1.0, "ty": 4.0}
    assert "sentence_card" in ens.info()["item_type_rule"]
    # without its own entry, a sentence on a card is pooled as a statement (files before it)
    path.write_text(json.dumps(_doc()))
    old = create_backend("ensemble", weights_path=path).loglik([SENTENCE], ["a", "b", "c"])
    np.testing.assert_allclose(
        old[0], 0.5 * _centred(ROWS_X[SENTENCE]) + 0.5 * _centred(ROWS_Y[SENTENCE])
    )


def test_calibration_items_are_grouped_by_the_three_types():
    """``item_types`` gives every clue of a calibration set its type, in the stacking order of
    ``build_item_set``; ``with_type_fit`` takes the new type."""
    games = [
        GameItems("card", "chameleon", ["bat", SENTENCE], ["a", "b", "c"], None, [0, 0]),
        GameItems("pair", "spygame", [SENTENCE, "bat"], ["a", "b"], None, [0, 1]),
    ]
    assert item_types(games).tolist() == ["word", "sentence_card", "statement", "statement"]
    rows = {"x": [np.zeros((2, 3)), np.zeros((2, 2))]}
    assert build_item_set(games, rows).n_items == 4
    _, items = _items(60, seed=2)
    result = calibrate_on(items, np.arange(items.n_items) % 3 != 0, split="dev/frozen")
    base = EnsembleWeights.model_validate(
        {"members": ["x", "y"], "weights": {"x": 1.0, "y": 1.0}, "scales": {"x": 1, "y": 1}}
    )
    doc = with_type_fit(base, "sentence_card", result, fitted_on={"games": 60})
    assert set(doc.item_types) == {"sentence_card"}
    assert doc.fit_for("sentence_card") == (result.weights, result.scales)
    assert doc.fit_for("statement") == (base.weights, base.scales)


def test_an_old_weights_file_loads_and_serves_every_item(tmp_path, typed_members):
    """A leakage.ensemble-weights/1 file (no version, no item_types): one fit for all items."""
    old = {
        "format": "leakage.ensemble-weights/1",
        "members": ["tx", "ty"],
        "weights": {"tx": 1.0, "ty": 0.5},
        "scales": {"tx": 2.0, "ty": 1.0},
        "note": None,
        "fallback": None,
        "member_info": {},
        "fitted_on": {"games": 3},
        "metrics": {},
        "created": "2026-11-22T01:44:15+00:00",
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old))
    fitted = read_weights(path)
    assert fitted.version == 1 and fitted.item_types == {}
    ens = create_backend("ensemble", weights_path=path)
    got = ens.loglik(["bat"], ["a", "b", "c"])
    want = 0.5 * _centred(ROWS_X["bat"]) + 0.5 * _centred(ROWS_Y["bat"])
    np.testing.assert_allclose(got[0], want)


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"format": "leakage.ensemble-weights/1", "version": None}, "item_types: not part of"),
        ({"version": 1}, "version: 1 does not match"),
        ({"item_types": {"sentence": _doc()["item_types"]["word"]}}, "item_types.sentence"),
        (
            {"item_types": {"word": {"weights": {"tx": 1.0}, "scales": {"tx": 1, "ty": 1}}}},
            "item_types.word.weights: keys",
        ),
        (
            {"item_types": {"word": {"weights": {"tx": 0, "ty": 0}, "scales": {"tx": 1, "ty": 1}}}},
            "item_types.word.weights: at least one",
        ),
    ],
)
def test_bad_typed_files_name_the_field(tmp_path, over, match):
    doc = _doc(**over)
    doc = {k: v for k, v in doc.items() if v is not None}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInput, match=match) as err:
        read_weights(path)
    assert str(path) in str(err.value)


def test_the_shipped_file_keeps_the_statement_fit_and_fits_words():
    shipped = read_weights(default_weights_path())
    assert shipped.format == WEIGHTS_FORMAT and shipped.version == 2
    # statements against a pair: the top-level CK-Arena fit
    assert set(shipped.item_types) == {"word", "sentence_card", "question_answer"}
    assert shipped.fitted_on["input_format"] == "ck-arena"
    word = shipped.item_types["word"]
    assert word.fitted_on["split"].startswith("dev/frozen")
    assert word.fallback is None

    # fitted on one-word clues against boards: the pool is far sharper than the sentence fit
    # (the sum of the members' multipliers weight / scale), and every member is used there
    def sharpness(weights, scales):
        return sum(weights[n] / scales[n] for n in shipped.members)

    assert sharpness(word.weights, word.scales) > 1.5 * sharpness(shipped.weights, shipped.scales)
    four = [n for n in shipped.members if n != "answers"]  # answers: question_answer only
    assert all(word.weights[n] > 0 for n in four) and word.weights["answers"] == 0
    # a question with its yes/no answer: fitted on the dev clembench instances
    qa = shipped.item_types["question_answer"]
    assert qa.fitted_on["split"].startswith("dev/frozen") and qa.fitted_on["input_format"] == (
        "clembench-guesswhat"
    )
    # sentences on a card (dev words of benchmarks.studies.chameleon_cards): sharper than against
    # a pair
    card = shipped.item_types["sentence_card"]
    assert card.fitted_on["split"].startswith("dev/frozen") and card.fallback is None
    assert card.fitted_on["train_items"] < card.fitted_on["items"]  # the frozen words held out
    assert sharpness(card.weights, card.scales) > 1.5 * sharpness(shipped.weights, shipped.scales)


def test_real_items_get_the_expected_types(shared_data: Path):
    """Every CK-Arena and Liang SpyGame statement is a statement; every Codenames item a word."""
    for folder, fmt, n in (
        ("ck-arena-dev/logs", "ck-arena", 2976),
        ("spygame-liang/benchmark", "spygame-liang", 44),
    ):
        logs, _ = load_transcripts([shared_data / folder], input_format=fmt)
        games, _ = extract_items(logs)
        kinds = item_types(games)
        assert kinds.size == n and set(kinds) == {"statement"}
    path = shared_data / "codenames-guess-val" / "games.jsonl"
    cn, errors = load_transcripts([path], input_format="leakage")
    assert not errors
    games, _ = extract_items(cn)
    kinds = item_types(games)
    assert kinds.size == 377 and set(kinds) == {"word"}


# -- fitting on a given split and writing a type's fit ---------------------------------------


def _items(n_games: int, seed: int = 0):
    """Items whose truth is drawn from a known softmax of member rows (multiplier 2 on x)."""
    rng = np.random.default_rng(seed)
    games, rows = [], {"x": [], "y": []}
    for g in range(n_games):
        k = 5
        rx = rng.normal(size=(1, k))
        ry = rng.normal(size=(1, k))
        p = np.exp(2 * rx[0]) / np.exp(2 * rx[0]).sum()
        truth = int(rng.choice(k, p=p))
        games.append(
            GameItems(f"g{g}", "chameleon", ["clue"], [f"w{j}" for j in range(k)], None, [truth])
        )
        rows["x"].append(rx - rx.mean())
        rows["y"].append(ry - ry.mean())
    return games, build_item_set(games, rows)


def test_calibrate_on_uses_the_given_split_and_refuses_a_split_game():
    games, items = _items(400)
    ids = [g.game_id for g in games]
    _, frozen = dev_frozen_split(ids)
    in_train = ~np.isin(np.array(ids)[items.game], frozen)
    result = calibrate_on(items, in_train, split="dev/frozen")
    assert set(result.test_games) == set(frozen) and result.split == "dev/frozen"
    assert result.temperatures["x"] == pytest.approx(0.5, rel=0.25)  # the true multiplier 2
    assert result.test_fraction == pytest.approx(len(frozen) / 400)
    two = build_item_set(
        [GameItems("g", "spygame", ["a", "b"], ["u", "v"], None, [0, 1])],
        {"x": [np.array([[1.0, -1.0], [1.0, -1.0]])]},
    )
    with pytest.raises(ValueError, match="both sides"):
        calibrate_on(two, np.array([True, False]))


def test_with_type_fit_adds_a_type_and_keeps_the_rest(tmp_path):
    _, items = _items(120, seed=1)
    result = calibrate_on(items, np.arange(items.n_items) % 3 != 0, split="dev/frozen")
    v1 = EnsembleWeights.model_validate(
        {
            "format": "leakage.ensemble-weights/1",
            "members": ["x", "y"],
            "weights": {"x": 1.0, "y": 0.5},
            "scales": {"x": 2.0, "y": 1.0},
            "fitted_on": {"input_format": "ck-arena"},
        }
    )
    doc = with_type_fit(v1, "word", result, fitted_on={"games": 120})
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc.model_dump(mode="json")))
    back = read_weights(path)
    assert back.format == WEIGHTS_FORMAT and back.version == 2
    assert (back.weights, back.scales, back.fitted_on) == (v1.weights, v1.scales, v1.fitted_on)
    assert back.item_types["word"].weights == result.weights
    assert back.item_types["word"].fitted_on["games"] == 120

    # a fit with a member the file lacks (and without one it has): weight 0 where not fitted
    one = v1.model_copy(update={"members": ["x", "z"], "weights": {"x": 1.0, "z": 2.0},
                                "scales": {"x": 2.0, "z": 3.0}})  # fmt: skip
    doc = with_type_fit(one, "word", result, fitted_on={}, member_info={"y": {"backend": "y"}})
    assert doc.members == ["x", "z", "y"]
    assert doc.weights == {"x": 1.0, "z": 2.0, "y": 0.0}
    assert doc.scales == {"x": 2.0, "z": 3.0, "y": 1.0}
    assert doc.item_types["word"].weights == {**result.weights, "z": 0.0}
    assert doc.item_types["word"].scales["z"] == 1.0
    assert doc.member_info == {"y": {"backend": "y"}}


# -- the adversary benchmark's new figures, worked by hand ------------------------------------


def test_rank_figures_split_ties_by_hand():
    from benchmarks.adversary import rank_figures

    probs = np.array(
        [
            [0.5, 0.3, 0.2, 0.0],  # truth 0: alone on top
            [0.25, 0.25, 0.25, 0.25],  # truth 2: a 4-way tie, rank uniform on 1..4
            [0.4, 0.3, 0.3, 0.0],  # truth 1: tied with candidate 2 behind one, rank 2 or 3
        ]
    )
    truth = np.array([0, 2, 1])
    got = rank_figures(probs, truth)
    np.testing.assert_allclose(got["top1"], [1.0, 0.25, 0.0])
    np.testing.assert_allclose(got["top3"], [1.0, 0.75, 1.0])
    np.testing.assert_allclose(
        got["rr"], [1.0, (1 + 1 / 2 + 1 / 3 + 1 / 4) / 4, (1 / 2 + 1 / 3) / 2]
    )


def test_sharpening_recovers_a_known_temperature():
    """Posteriors made twice too flat (log p halved) need a multiplier of about 2; the true
    ones about 1."""
    from benchmarks.adversary import sharpening
    from leakage.posterior import normalize_log

    rng = np.random.default_rng(3)
    logits = rng.normal(scale=2.0, size=(3000, 6))
    p_true = normalize_log(logits)
    truth = np.array([rng.choice(6, p=p) for p in p_true])
    a, (lo, hi) = sharpening(p_true, truth, resamples=20)
    assert lo < 1.0 < hi and a == pytest.approx(1.0, abs=0.08)
    a_flat, _ = sharpening(normalize_log(logits / 2), truth, resamples=20)
    assert a_flat == pytest.approx(2.0, abs=0.16)


def test_the_ece_floor_is_the_ece_of_a_calibrated_predictor():
    """Confidence 0.5 on two candidates for n items: a calibrated predictor's accuracy in the
    one bin is Binomial(n, 1/2) / n, so its ECE is E|X/n - 1/2|, worked out exactly."""
    from math import comb

    from benchmarks.adversary import calibrated_ece_floor

    n = 40
    probs = np.full((n, 2), 0.5)
    # ties split: every item counts 1/2 whatever its truth, so the ECE is exactly 0
    assert calibrated_ece_floor(probs, draws=50) == 0.0
    probs = np.tile([0.6, 0.4], (n, 1))  # one bin at confidence 0.6
    exact = sum(comb(n, k) * 0.6**k * 0.4 ** (n - k) * abs(k / n - 0.6) for k in range(n + 1))
    assert calibrated_ece_floor(probs, draws=4000) == pytest.approx(exact, abs=0.004)


def test_row_memo_scores_each_clue_once_and_gives_the_same_rows():
    """The adversary benchmark's CK-Arena part reads every row four times (statements, known
    and marginalised spy hunt, the ensemble): each (clue, candidates) row is computed once,
    and the rows are the backend's."""
    from benchmarks.adversary import RowMemo

    class Counting:
        name = "counting"

        def __init__(self):
            self.asked: list[list[str]] = []
            self.prepared: list[list] = []

        def info(self):
            return {"backend": self.name}

        def prepare(self, games):
            self.prepared.append(list(games))

        def loglik(self, clues, candidates, *, category=None):
            self.asked.append(list(clues))
            return np.array([[len(c) * (j + 1.0) for j in range(len(candidates))] for c in clues])

    inner = Counting()
    memo = RowMemo(inner)
    first = memo.loglik(["ab", "abc", "ab"], ["x", "y"])
    np.testing.assert_array_equal(first, inner.loglik(["ab", "abc", "ab"], ["x", "y"]))
    inner.asked.clear()
    again = memo.loglik(["abc", "abcd"], ["x", "y"])
    assert inner.asked == [["abcd"]]  # only the new clue
    np.testing.assert_array_equal(again, [[3.0, 6.0], [4.0, 8.0]])
    assert memo.loglik(["ab"], ["y", "x"]).tolist() == [[2.0, 4.0]]  # other candidates: new row
    memo.prepare([(["ab"], ["x", "y"], None), (["zz"], ["x", "y"], None)])
    assert inner.prepared == [[(["zz"], ["x", "y"], None)]]  # games with a row to compute
    assert memo.loglik([], ["x", "y"]).shape == (0, 2)
