"""The ensemble backend and its calibration: pooling, fitting, metrics, split, fallback, CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from leakage import ScoreOptions, create_backend, load_transcripts, score_transcript
from leakage.backends import SupportsEmbed, base
from leakage.backends.ensemble import (
    WEIGHTS_FORMAT,
    EnsembleBackend,
    centre_rows,
    default_weights_path,
    read_weights,
    route_options,
)
from leakage.calibration import (
    ENSEMBLE,
    ItemSet,
    PairedDifference,
    accuracy,
    build_item_set,
    calibrate,
    decide_fallback,
    expected_calibration_error,
    extract_items,
    fit_multipliers,
    fit_temperature,
    log_loss,
    member_rows,
    nll_and_grad,
    paired_bootstrap,
    pooled_probs,
    reliability_bins,
    split_games,
)
from leakage.errors import BackendUnavailable, InvalidInput
from leakage.posterior import normalize_log
from leakage.runtime import RuntimeChoice

from .conftest import EXAMPLES

CANDS = ["a", "b", "c"]


class MatrixBackend:
    """Deterministic: log P(clue | w) read from a per-clue row; records its hooks' calls."""

    def __init__(self, name: str, rows: dict[str, list[float]], *, embed: bool = False) -> None:
        self.name = name
        self.rows = rows
        self.prepared: list[list[tuple[Sequence[str], Sequence[str], str | None]]] = []
        if embed:
            self.embed = lambda texts: np.eye(len(texts), 4, dtype=np.float32)

    def info(self):
        return {"backend": self.name}

    def prepare(self, games):
        self.prepared.append(list(games))

    def loglik(self, clues, candidates, *, category=None):
        return np.array([self.rows[c][: len(candidates)] for c in clues], dtype=np.float64)


def _two_members() -> tuple[MatrixBackend, MatrixBackend]:
    x = MatrixBackend("x", {"r1": [-1.0, -2.0, -6.0], "r2": [-3.0, -3.0, -3.0]})
    y = MatrixBackend("y", {"r1": [0.5, 2.5, 0.0], "r2": [4.0, 1.0, 1.0]})
    return x, y


# -- pooling ---------------------------------------------------------------------------------


def test_ensemble_equals_the_hand_computation():
    x, y = _two_members()
    ens = EnsembleBackend(
        {"x": x, "y": y}, weights={"x": 2.0, "y": 0.5}, scales={"x": 3.0, "y": 1.5}
    )
    got = ens.loglik(["r1", "r2"], CANDS)
    # r1: x centred: mean -3 -> [2, 1, -3]; y centred: mean 1 -> [-0.5, 1.5, -1]
    # r2: x centred: [0, 0, 0];          y centred: mean 2 -> [2, -1, -1]
    want = np.array(
        [
            [
                2 / 3 * 2 + 0.5 / 1.5 * -0.5,
                2 / 3 * 1 + 0.5 / 1.5 * 1.5,
                2 / 3 * -3 + 0.5 / 1.5 * -1,
            ],
            [0.5 / 1.5 * 2, 0.5 / 1.5 * -1, 0.5 / 1.5 * -1],
        ]
    )
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got.sum(axis=1), 0.0, atol=1e-12)


def test_pool_ignores_per_clue_offsets_and_zero_weight_members():
    x, y = _two_members()
    shifted = MatrixBackend("x", {k: [v + 100.0 for v in r] for k, r in x.rows.items()})
    a = EnsembleBackend({"x": x, "y": y}, {"x": 1.0, "y": 1.0}, {"x": 1.0, "y": 2.0})
    b = EnsembleBackend({"x": shifted, "y": y}, {"x": 1.0, "y": 1.0}, {"x": 1.0, "y": 2.0})
    np.testing.assert_allclose(a.loglik(["r1", "r2"], CANDS), b.loglik(["r1", "r2"], CANDS))
    only_x = EnsembleBackend({"x": x, "y": y}, {"x": 1.0, "y": 0.0}, {"x": 1.0, "y": 1.0})
    np.testing.assert_allclose(only_x.loglik(["r1"], CANDS), [[2.0, 1.0, -3.0]])
    assert ens_empty_shape(only_x) == (0, 3)


def ens_empty_shape(ens: EnsembleBackend) -> tuple[int, ...]:
    return ens.loglik([], CANDS).shape


def test_centre_rows_floors_non_finite_values():
    out = centre_rows(np.array([[0.0, -np.inf, np.nan]]))
    assert np.all(np.isfinite(out)) and abs(out.sum()) < 1e-9


def test_prepare_and_embed_are_forwarded_and_spygame_outliers_still_work():
    x, y = _two_members()
    y_embeds = MatrixBackend("y", y.rows, embed=True)
    ens = EnsembleBackend({"x": x, "y": y_embeds}, {"x": 1.0, "y": 1.0}, {"x": 1.0, "y": 1.0})
    ens.prepare(g for g in [(["r1"], CANDS, None)])  # a generator, as scoring passes one
    assert x.prepared == y_embeds.prepared == [[(["r1"], CANDS, None)]]
    assert isinstance(ens, SupportsEmbed)
    assert not isinstance(EnsembleBackend({"x": x}, {"x": 1.0}, {"x": 1.0}), SupportsEmbed)

    (t,), _ = load_transcripts([EXAMPLES / "spygame_fruit.json"])
    texts = {turn.text for turn in t.turns}
    rows = {s: [float(i % 3), 0.0, 1.0, 0.5, -1.0] for i, s in enumerate(sorted(texts))}
    spy = EnsembleBackend({"x": MatrixBackend("x", rows, embed=True)}, {"x": 1.0}, {"x": 1.0})
    report = score_transcript(t, spy, ScoreOptions())
    assert report.backend == "ensemble"
    assert all(s.outlier_scores for s in report.steps)
    assert report.backend_info["weights"] == {"x": 1.0}


def test_a_member_prepares_only_the_games_its_item_types_weigh():
    """A member with weight 0 on statements (but not on one-word clues) is not asked to
    prepare a batch of statements, only the games with a one-word clue on a board."""
    x, y = _two_members()
    ens = EnsembleBackend(
        {"x": x, "y": y},
        {"x": 1.0, "y": 0.0},  # the top-level fit (statements): y unused
        {"x": 1.0, "y": 1.0},
        item_types={"word": ({"x": 1.0, "y": 2.0}, {"x": 1.0, "y": 1.0})},
    )
    word = (["r1"], CANDS, None)
    statement = (["a sentence of several words"], ["u", "v"], None)
    ens.prepare([statement, word, statement])
    assert x.prepared == [[statement, word, statement]]
    assert y.prepared == [[word]]
    ens.prepare([statement])
    assert len(x.prepared) == 2 and len(y.prepared) == 1  # y: nothing to prepare, no call


# -- weights files and the factory -----------------------------------------------------------


def _weights_doc(**over) -> dict:
    doc = {
        "format": WEIGHTS_FORMAT,
        "members": ["fx", "fy"],
        "weights": {"fx": 2.0, "fy": 0.5},
        "scales": {"fx": 3.0, "fy": 1.5},
    }
    return {**doc, **over}


@pytest.fixture
def fake_members():
    """Register two fake member factories (and one that is unavailable) for the test."""
    x, y = _two_members()
    seen: dict[str, dict] = {}

    def fx(*, index=None):
        seen["fx"] = {"index": index}
        return MatrixBackend("fx", x.rows)

    def fy(*, model="m", **rest):
        seen["fy"] = {"model": model, **rest}
        return MatrixBackend("fy", y.rows)

    def gone():
        raise BackendUnavailable("judge extras missing: pip install 'leakage[judge]'")

    for name, f in [("fx", fx), ("fy", fy), ("fgone", gone)]:
        base.register_backend(name)(f)
    yield seen
    for name in ("fx", "fy", "fgone"):
        base.BACKENDS.pop(name, None)


def test_factory_reads_the_weights_file_and_routes_member_options(tmp_path, fake_members):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_weights_doc()))
    ens = create_backend("ensemble", weights_path=path, index="I", model="M", extra=1)
    assert fake_members == {"fx": {"index": "I"}, "fy": {"model": "M", "extra": 1}}
    x, y = _two_members()
    hand = EnsembleBackend({"x": x, "y": y}, {"x": 2.0, "y": 0.5}, {"x": 3.0, "y": 1.5})
    np.testing.assert_allclose(ens.loglik(["r1", "r2"], CANDS), hand.loglik(["r1", "r2"], CANDS))
    info = ens.info()
    assert info["weights_file"] == str(path)
    assert info["scales"] == {"fx": 3.0, "fy": 1.5}
    assert set(info["members"]) == {"fx", "fy"}

    only = create_backend("ensemble", weights_path=path, members="fy")
    assert list(only.members) == ["fy"] and any("not refitted" in n for n in only.notes)


def test_route_options_shared_per_member_and_unknown(fake_members):
    assert route_options(["fx"], {"index": 1}) == {"fx": {"index": 1}}
    # fy takes **kwargs: it gets what no one names; a per-member dict wins over a shared one
    got = route_options(["fx", "fy"], {"index": 1, "model": "a", "fy": {"model": "b"}})
    assert got == {"fx": {"index": 1}, "fy": {"model": "b"}}
    # a per-member dict for a backend that is not a member is ignored
    assert route_options(["fx"], {"embedding": {"model": "m"}}) == {"fx": {}}
    with pytest.raises(InvalidInput, match="'colour'"):
        route_options(["fx"], {"colour": 1})


def test_unavailable_member_errors_with_its_message_and_names_the_way_out(tmp_path, fake_members):
    path = tmp_path / "w.json"
    doc = _weights_doc(
        members=["fx", "fgone"], weights={"fx": 1.0, "fgone": 1.0}, scales={"fx": 1, "fgone": 1}
    )
    path.write_text(json.dumps(doc))
    with pytest.raises(BackendUnavailable, match=r"judge extras missing.*--members fx"):
        create_backend("ensemble", weights_path=path)
    assert list(create_backend("ensemble", weights_path=path, members=["fx"]).members) == ["fx"]
    with pytest.raises(BackendUnavailable, match="no fitted weight"):
        create_backend("ensemble", weights_path=path, members="fy")


def test_zero_weight_members_are_not_built(tmp_path, fake_members):
    path = tmp_path / "w.json"
    doc = _weights_doc(
        members=["fx", "fgone"], weights={"fx": 1.0, "fgone": 0.0}, scales={"fx": 1, "fgone": 1}
    )
    path.write_text(json.dumps(doc))
    ens = create_backend("ensemble", weights_path=path)
    assert list(ens.members) == ["fx"]


def test_the_shipped_weights_are_package_data():
    import leakage

    shipped = default_weights_path()
    assert Path(str(shipped)) == Path(leakage.__file__).parent / "data" / "ensemble_weights.json"
    fitted = read_weights(shipped)
    four = ["cooccurrence", "embedding", "listener", "judge"]
    assert fitted.members == [*four, "answers"]
    # statements (the top-level fit): the listener reads them, the speaker judge is not run
    assert fitted.weights["judge"] == 0 and fitted.weights["listener"] > 0
    assert fitted.weights["answers"] == 0
    # one-word clues against a board: every member has a weight (the answers member none)
    assert all(fitted.item_types["word"].weights[n] > 0 for n in four)
    # sentences against a card: every member, the speaker judge included (it lowers the
    # frozen log loss there: docs/benchmarks.md, "The sentence_card fit")
    assert set(fitted.item_types) == {"word", "sentence_card", "question_answer"}
    assert all(fitted.item_types["sentence_card"].weights[n] > 0 for n in four)
    for kind in ("word", "sentence_card"):
        assert fitted.item_types[kind].weights["answers"] == 0
    # a question and its yes/no answer: the answers member alone (docs/benchmarks.md,
    # "Answers read as what they say")
    qa = fitted.item_types["question_answer"].weights
    assert qa["answers"] > 0 and all(qa[n] == 0 for n in four)


def test_a_type_no_chosen_member_is_fitted_for_uses_the_top_level_fit(tmp_path, fake_members):
    path = tmp_path / "w.json"
    fit = {"weights": {"fx": 0.0, "fy": 1.0}, "scales": {"fx": 1.0, "fy": 1.0}}
    path.write_text(json.dumps(_weights_doc(version=2, item_types={"question_answer": fit})))
    both = create_backend("ensemble", weights_path=path)
    assert set(both.item_types) == {"question_answer"}
    alone = create_backend("ensemble", weights_path=path, members="fx")
    assert alone.item_types == {}  # read with the top-level fit, and a note says so
    assert any("question_answer items: none of the chosen members" in n for n in alone.notes)


@pytest.mark.parametrize("content", [None, "{", json.dumps(_weights_doc(weights={"fx": 1.0}))])
def test_missing_or_bad_shipped_weights_are_an_error_not_equal_weights(
    monkeypatch, tmp_path, fake_members, content
):
    """A broken installation must not quietly score with unfitted equal weights."""
    import leakage.backends.ensemble as mod

    shipped = tmp_path / "ensemble_weights.json"
    if content is not None:
        shipped.write_text(content)
    monkeypatch.setattr(mod, "default_weights_path", lambda rows="": shipped)
    with pytest.raises(BackendUnavailable, match="shipped weights cannot be used") as err:
        create_backend("ensemble", members="fx,fy")
    assert str(shipped) in str(err.value) and "reinstall" in str(err.value)


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        (_weights_doc(format="other/1"), "format"),
        (_weights_doc(weights={"fx": 1.0}), "weights: keys"),
        (_weights_doc(scales={"fx": 0.0, "fy": 1.0}), "scales.fx"),
        (_weights_doc(weights={"fx": 0.0, "fy": 0.0}), "at least one weight"),
        (_weights_doc(colour="red"), "colour"),
    ],
)
def test_bad_weights_files_name_the_file_and_field(tmp_path, doc, match):
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InvalidInput, match=match) as err:
        read_weights(path)
    assert str(path) in str(err.value)


def test_an_explicit_missing_weights_file_is_an_error(tmp_path):
    with pytest.raises(InvalidInput, match="cannot read") as err:
        create_backend("ensemble", weights_path=tmp_path / "nope.json")
    assert str(tmp_path / "nope.json") in str(err.value)


# -- fitting -----------------------------------------------------------------------------------


def _synthetic(n: int, k: int, temperature: float, seed: int) -> ItemSet:
    """Items whose truth is drawn from softmax(c / T) of a known member c, plus a noise member."""
    rng = np.random.default_rng(seed)
    c = centre_rows(rng.normal(size=(n, k)))
    noise = centre_rows(rng.normal(size=(n, k)))
    p = normalize_log(c / temperature)
    truth = np.array([rng.choice(k, p=row) for row in p])
    rows = np.stack([c, noise])
    return ItemSet(
        ("truth", "noise"),
        rows,
        np.ones((n, k), bool),
        truth.astype(np.int64),
        np.arange(n, dtype=np.int64),
        tuple(f"g{i}" for i in range(n)),
    )


def test_gradient_matches_finite_differences():
    items = _synthetic(200, 4, 0.7, seed=1)
    a = np.array([0.8, 0.3])
    _, grad = nll_and_grad(a, items.rows, items.mask, items.truth)
    eps = 1e-6
    for b in range(2):
        d = np.zeros(2)
        d[b] = eps
        up, _ = nll_and_grad(a + d, items.rows, items.mask, items.truth)
        down, _ = nll_and_grad(a - d, items.rows, items.mask, items.truth)
        assert grad[b] == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-8)


def test_fit_recovers_a_known_temperature_and_the_copy_of_the_truth_gets_the_weight():
    items = _synthetic(4000, 4, 0.5, seed=7)
    assert fit_temperature(items.member("truth"), items.mask, items.truth) == pytest.approx(
        0.5, rel=0.08
    )
    assert fit_temperature(items.member("noise"), items.mask, items.truth) is None or (
        fit_temperature(items.member("noise"), items.mask, items.truth) > 10
    )
    a_truth, a_noise = fit_multipliers(items.rows, items.mask, items.truth)
    assert a_truth == pytest.approx(2.0, rel=0.08)
    assert a_noise < 0.1


def test_calibrate_gives_the_weight_to_the_informative_member():
    result = calibrate(_synthetic(3000, 4, 0.5, seed=3), seed=0)
    assert result.temperatures["truth"] == pytest.approx(0.5, rel=0.1)
    assert result.fitted_weights["truth"] == pytest.approx(1.0, rel=0.1)
    # The noise member's weight is relative to its own (large) temperature: its multiplier
    # on the centred rows is what must be small.
    assert result.fitted_weights["noise"] / result.scales["noise"] < 0.05
    assert result.best_member == "truth" and not result.ensemble_worse
    assert result.weights == result.fitted_weights and result.fallback is None
    assert set(result.metrics) == {"truth", "noise", "equal_pool", ENSEMBLE}


def test_fitted_model_and_ensemble_backend_agree():
    """What calibration fits (softmax of Σ w/T · centred rows) is what the backend computes."""
    x, y = _two_members()
    (game,), _ = extract_items(
        [
            _chameleon("g", ["r1", "r2"], secret="b"),
        ]
    )
    rows = {"x": member_rows(x, [game]), "y": member_rows(y, [game])}
    items = build_item_set([game], rows)
    w, s = {"x": 2.0, "y": 0.5}, {"x": 3.0, "y": 1.5}
    fitted = pooled_probs(items.rows, items.mask, np.array([w[n] / s[n] for n in ("x", "y")]))
    ens = EnsembleBackend({"x": x, "y": y}, w, s)
    np.testing.assert_allclose(fitted, normalize_log(ens.loglik(["r1", "r2"], CANDS)))
    assert items.truth.tolist() == [1, 1]
    assert x.prepared  # member_rows used the bulk hook


def _chameleon(gid: str, clues: list[str], *, secret: str | None):
    from leakage import parse_transcript

    return parse_transcript(
        {
            "format": "leakage.transcript/1",
            "game": "chameleon",
            "id": gid,
            "category": "Test",
            "candidates": CANDS,
            "secret": secret,
            "players": [{"id": f"p{i}", "role": "non-chameleon"} for i in range(len(clues))]
            + [{"id": "ch", "role": "chameleon"}],
            "turns": [{"player": f"p{i}", "text": c} for i, c in enumerate(clues)]
            + [{"player": "ch", "text": "r1"}],
        }
    )


def test_items_count_non_chameleon_turns_and_speakers_words():
    games, skipped = extract_items(
        [
            _chameleon("g1", ["r1", "r2"], secret="c"),
            _chameleon("g2", ["r1"], secret=None),
            *load_transcripts([EXAMPLES / "spygame_fruit.json"])[0],
        ]
    )
    assert skipped == {"chameleon game without a secret": 1}
    cham, spy = games
    assert cham.clues == ["r1", "r2"] and cham.truth == [2, 2]
    (t,), _ = load_transcripts([EXAMPLES / "spygame_fruit.json"])
    assert spy.truth == [t.candidates.index(t.word_of(turn.player)) for turn in t.turns]
    assert spy.candidates == t.candidates and len(spy.candidates) > 2
    assert set(spy.truth) == {0, 1}


# -- metrics -----------------------------------------------------------------------------------

PROBS = np.array([[0.8, 0.2], [0.6, 0.4], [0.5, 0.5], [0.3, 0.7]])
TRUTH = np.array([0, 1, 0, 1])


def test_log_loss_and_accuracy_by_hand():
    assert log_loss(PROBS, TRUTH) == pytest.approx(
        -(np.log(0.8) + np.log(0.4) + np.log(0.5) + np.log(0.7)) / 4
    )
    # hits: 1, 0, a tie of two that holds the truth (1/2), 1
    assert accuracy(PROBS, TRUTH) == pytest.approx(2.5 / 4)


def test_ece_by_hand():
    # four items, four different bins of 1/15: |1-.8| + |0-.6| + |.5-.5| + |1-.7|, over 4
    assert expected_calibration_error(PROBS, TRUTH) == pytest.approx((0.2 + 0.6 + 0 + 0.3) / 4)
    # two items in one bin (0.61 and 0.65 are both in [9/15, 10/15)), one right, one wrong
    probs = np.array([[0.61, 0.39], [0.35, 0.65]])
    assert expected_calibration_error(probs, np.array([0, 0])) == pytest.approx(abs(0.5 - 0.63))
    bins = reliability_bins(probs, np.array([0, 0]))
    assert len(bins) == 15 and sum(b.count for b in bins) == 2
    (full,) = [b for b in bins if b.count]
    assert full.count == 2 and full.accuracy == 0.5 and full.confidence == pytest.approx(0.63)
    # perfectly calibrated: confidence 1 and always right
    assert expected_calibration_error(np.array([[1.0, 0.0]]), np.array([0])) == 0.0


def test_paired_bootstrap_resamples_games():
    a = np.array([1.0, 1.0, 2.0, 2.0, 3.0])
    b = np.zeros(5)
    game = np.array([0, 0, 1, 1, 2])
    d = paired_bootstrap(a, b, game, resamples=500, seed=0)
    assert d.mean == pytest.approx(9 / 5)
    assert 1.0 <= d.low <= d.mean <= d.high <= 3.0
    assert paired_bootstrap(a, b, game, resamples=500, seed=0) == d


# -- split and fallback ------------------------------------------------------------------------


def test_game_split_is_disjoint_complete_and_seeded():
    train, test = split_games(50, test_fraction=0.3, seed=4)
    assert len(test) == 15 and len(train) == 35
    assert not set(train) & set(test) and set(train) | set(test) == set(range(50))
    again = split_games(50, test_fraction=0.3, seed=4)
    assert all(np.array_equal(u, v) for u, v in zip(again, (train, test), strict=True))
    assert not np.array_equal(split_games(50, test_fraction=0.3, seed=5)[1], test)
    assert [len(x) for x in split_games(2, test_fraction=0.01)] == [1, 1]
    with pytest.raises(ValueError):
        split_games(1)


def test_calibrate_keeps_each_games_items_on_one_side():
    items = _synthetic(600, 3, 1.0, seed=2)
    games = np.repeat(np.arange(100), 6)  # six items per game
    items = ItemSet(
        items.members, items.rows, items.mask, items.truth, games, tuple(map(str, range(100)))
    )
    result = calibrate(items, seed=9, test_fraction=0.25)
    assert not set(result.train_games) & set(result.test_games)
    assert len(result.test_games) == 25 and result.test_items == 150


def test_fallback_rule_decision():
    fitted = {"a": 0.7, "b": 0.9}
    worse = PairedDifference(0.05, 0.01, 0.09, 0.95, 1000)
    noise = PairedDifference(0.01, -0.02, 0.04, 0.95, 1000)
    assert decide_fallback(("a", "b"), fitted, "b", noise) == (False, fitted, None)
    flag, weights, note = decide_fallback(("a", "b"), fitted, "b", worse)
    assert flag and weights == {"a": 0.0, "b": 1.0}
    assert note is not None and "worse than b alone" in note


def test_an_ensemble_that_overfits_falls_back_to_its_best_member():
    """Member 'flip' tells the truth on training games and lies on the held-out ones: the fit
    trusts it, the held-out games punish it, and the weights fall back to 'steady'."""
    n_games, per, k = 120, 5, 3
    rng = np.random.default_rng(11)
    train_idx, _ = split_games(n_games, test_fraction=0.3, seed=0)
    game = np.repeat(np.arange(n_games), per)
    n = n_games * per
    truth = rng.integers(0, k, size=n)
    onehot = np.eye(k)[truth]
    steady = centre_rows(onehot * 1.0 + rng.normal(scale=1.0, size=(n, k)))
    sign = np.where(np.isin(game, train_idx), 1.0, -1.0)[:, None]
    flip = centre_rows(sign * onehot * 3.0 + rng.normal(scale=0.5, size=(n, k)))
    items = ItemSet(
        ("steady", "flip"),
        np.stack([steady, flip]),
        np.ones((n, k), bool),
        truth.astype(np.int64),
        game.astype(np.int64),
        tuple(f"g{i}" for i in range(n_games)),
    )
    result = calibrate(items, seed=0, test_fraction=0.3, resamples=500)
    assert result.best_member == "steady"
    assert result.ensemble_worse and result.comparison.low > 0
    assert result.weights == {"steady": 1.0, "flip": 0.0}
    assert result.fitted_weights["flip"] > 0.5
    assert result.fallback and "WORSE" in result.verdict()
    doc = result.weights_document(fitted_on={"games": n_games})
    assert doc.weights == {"steady": 1.0, "flip": 0.0} and doc.fallback == result.fallback


# -- the command line, end to end on the shipped examples --------------------------------------


def test_cli_calibrate_end_to_end(leakage_home: Path, default_index: Path, minilm, tmp_path: Path):
    out, rep = tmp_path / "w.json", tmp_path / "report"
    files = [
        EXAMPLES / "chameleon_sports.json",
        EXAMPLES / "chameleon_batch.jsonl",
        EXAMPLES / "spygame_fruit.json",
        EXAMPLES / "spygame_two_spies.json",
    ]
    env = {**os.environ, "LEAKAGE_HOME": str(leakage_home), "COLUMNS": "200"}
    p = subprocess.run(
        [sys.executable, "-m", "leakage", "calibrate", *map(str, files),
         "--members", "cooccurrence,embedding", "--out", str(out), "--report", str(rep),
         "--seed", "1", "--resamples", "200"],
        capture_output=True, text=True, env=env, timeout=180,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "ensemble" in p.stdout and "log loss" in p.stdout
    assert "skipped: 1 game(s): chameleon game without a secret" in p.stderr

    doc = read_weights(out)  # validates the format
    assert doc.members == ["cooccurrence", "embedding"]
    assert doc.fitted_on["games"] == 8 and doc.fitted_on["files"] == 4
    assert doc.fitted_on["train_games"] + doc.fitted_on["test_games"] == 8
    assert set(doc.metrics["held_out"]) == {"cooccurrence", "embedding", "equal_pool", "ensemble"}
    assert doc.member_info["embedding"]["model"].endswith("all-MiniLM-L6-v2")
    assert (rep / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    cal = json.loads((rep / "calibration.json").read_text())
    assert cal["split"]["test_games"] == len(cal["split"]["test_game_ids"]) == 2

    # What `leakage score --backend ensemble --weights FILE` will do, through the library.
    ens = create_backend("ensemble", weights_path=out, index=default_index, encoder=minilm)
    assert ens.weights == {n: w for n, w in doc.weights.items() if w > 0}
    (t,), _ = load_transcripts([EXAMPLES / "chameleon_sports.json"])
    report = score_transcript(t, ens, ScoreOptions())
    assert report.backend == "ensemble" and report.backend_info["weights_file"] == str(out)
    for step in report.steps:
        assert sum(step.posterior.values()) == pytest.approx(1.0)


def test_calibrate_defaults_to_the_listener_not_the_speaker():
    """Without --members: co-occurrence, embedding and the LLM as the listener (one prompt
    per clue), not the speaker judge (one per candidate)."""
    from leakage.cli.calibrate import _members

    assert _members(None) == ["cooccurrence", "embedding", "listener"]
    assert _members("judge, listener") == ["judge", "listener"]


def test_cli_rejects_the_ensemble_as_its_own_member(tmp_path: Path):
    p = subprocess.run(
        [sys.executable, "-m", "leakage", "calibrate", str(EXAMPLES / "spygame_fruit.json"),
         "--members", "embedding,ensemble", "--out", str(tmp_path / "w.json")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert p.returncode == 2 and "cannot be its own member" in p.stderr
    assert not (tmp_path / "w.json").exists()


def test_the_shipped_fit_is_the_one_for_the_members_rows(monkeypatch, tmp_path, fake_members):
    """Members whose LLM runs CTranslate2 int8 pool with the int8 fit, each member built once;
    others with the torch fit."""
    import leakage.backends.ensemble as mod

    files = {"": tmp_path / "torch.json", "int8": tmp_path / "int8.json"}
    files[""].write_text(json.dumps(_weights_doc()))
    files["int8"].write_text(json.dumps(_weights_doc(weights={"fx": 1.0, "fy": 0.25})))
    monkeypatch.setattr(mod, "default_weights_path", lambda rows="": files[rows])
    ens = create_backend("ensemble")
    assert ens.weights == {"fx": 2.0, "fy": 0.5} and ens.weights_file == str(files[""])

    int8 = RuntimeChoice("ctranslate2", "cpu", "int8")
    monkeypatch.setattr(MatrixBackend, "runtime", int8, raising=False)
    ens = create_backend("ensemble", model="M")
    assert ens.weights == {"fx": 1.0, "fy": 0.25} and ens.weights_file == str(files["int8"])
    assert fake_members["fy"] == {"model": "M"}
    files["int8"].write_text("{")
    with pytest.raises(BackendUnavailable, match="shipped weights cannot be used"):
        create_backend("ensemble")
