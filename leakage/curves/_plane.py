"""The reveal-vs-conceal plane: each clue's leakage to the player without the secret against
its value to the players who share it.

Karabag & Topcu ("Do LLMs Strategically Reveal, Conceal, and Infer Information? A Theoretical
and Empirical Analysis in The Chameleon Game", section 4) show that a non-chameleon's clue
serves two observers at once: it must tell the other non-chameleons that its speaker knows
the secret (a *revealing* strategy, Definition 2) and tell the chameleon as little as possible
about the secret (a *concealing* strategy, Definition 1); no stationary strategy does both
well (Propositions 1-2), and the non-stationary π_amb (section 4.2) is their answer. The SNEAK
benchmark measures the same trade-off with two observers of each clue, an ally who knows the
secret and a chameleon who does not. Here both observers are the posterior engine's, per clue:

- **x, leakage (bits)** to the player who lacks the secret: the clue's information gain, the
  entropy drop of the posterior over the candidates that it causes (``information_gain_bits``
  of the step table; SpyGame: the entropy drop from uniform of the statement's own word
  posterior).
- **y, reveal value (bits)** to the players who share the secret: the log likelihood ratio
  that the speaker knows the secret, the evidence the identity posteriors add up.

  *The Chameleon*: with the backend's likelihood P(c | w),
  ``y = log2 [ P(c | s) / ((1/K) Σ_w P(c | w)) ] = log2 (K · P1(s | c))``,
  s the secret, P1 the posterior from this clue alone under a uniform prior. The denominator
  is the chameleon's clue model (it does not know s and speaks as for a uniformly drawn
  candidate: the marginal D^ch of the proof of Karabag & Topcu's Proposition 1), so 2^y is
  the factor by which the clue makes "the speaker knows s" likelier than "the speaker is the
  chameleon": the inverse of the ratio LR(c; s) that the PGM chameleon agent's posterior over
  who is the chameleon multiplies (:mod:`leakage.games.agents.pgm_chameleon`). y ≤ log2 K;
  0 means no evidence either way; negative, the clue fits the secret worse than a random
  candidate. From a step table, P(c | w) ∝ post_i(w) / post_{i-1}(w) (the Bayes update
  inverted), so y is defined for counted clues only: score with the chameleon's clues
  counted to place the chameleon.

  *SpyGame*: ``y = log2 [ P(c | civilian word) / P(c | spy word) ]``, the statement's
  evidence ``d`` that :func:`leakage.posterior.spy_posterior` sums per player (in bits): how
  much the statement says its speaker holds the civilians' word.

**SpyGame has two dimensions only from the spy's own seat.** From an outside seat each
statement is scored alone over the pair, so x = 1 - H(p) and y = log2 (p / (1 - p)) are both
functions of p = P(civilian word | statement): every statement lies on one curve. From the
spy's seat (``ScoreOptions.seat = "spy"``, :mod:`leakage.seats`) the step table's
``information_gain_bits`` is the spy's gain in bits about the civilians' word over an open
vocabulary, its own word known (the first spy in seat order, the statements before heard),
and its ``reveal_bits`` column holds y for every statement, read by the seat's reader
(:func:`leakage.seats.reveal_bits`: the same ratio over the pair, since the spy's posterior
holds none). x and y then answer two listeners with different knowledge: the spy, who must
find the civilians' word among tens of thousands, and the civilians, who need only tell it
from the spies'. A specific statement can give the civilians much and the spy little ("it
rests under your chin" against "a string instrument"), which is what the civilians' side
of the game asks of them. Only the civilians' statements are placed: a spy holds no
civilians' word to leak, and the seat hears only the other spy's statements, a biased half
(:func:`plane_axes` says how many were left out).

For one stationary strategy π, the expected y of a non-chameleon's clue and the expected x of
the first clue are both I(W; R): the two observers learn equally from the first clue, and
only later clues (whose x shrinks as the posterior sharpens, while y does not) separate them.

The reference strategies (:func:`reference_points`) are Karabag & Topcu's, from
:mod:`leakage.games.theory`, simulated with the strategy's own likelihood as the observers'.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.curves._data import NONE_GROUP, SPEAKER_SEP
from leakage.curves._stats import bootstrap_ratio

PLANE_COLUMNS = [
    "kind", "group", "model", "role", "clues", "games",
    "leakage_bits", "leakage_low", "leakage_high",
    "reveal_bits", "reveal_low", "reveal_high", "note",
]  # fmt: skip
CLUE_COLUMNS = ["game_id", "step", "model", "role", "text", "leakage_bits", "reveal_bits"]


def _entropy(p: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return np.asarray(t.sum(axis=-1))


def reveal_values(
    game: str,
    candidates: Sequence[str],
    posteriors: NDArray[np.float64],
    counted: Sequence[bool],
    *,
    secret: str | None,
    spy_word: str | None = None,
) -> NDArray[np.float64]:
    """y of every step of one game (bits; NaN where it is not defined), from the posteriors
    the engine recorded (steps x K, in the candidates' order).

    ``game`` is ``chameleon`` (posteriors accumulate from a uniform prior; uncounted steps
    leave them unchanged and have NaN) or ``spygame`` (each statement's posterior is from the
    statement alone; ``secret`` the civilians' word, ``spy_word`` the spy's). NaN too without
    a secret, or where a probability the ratio needs is 0 (underflow: the ratio is unknown).
    """
    post = np.asarray(posteriors, dtype=np.float64)
    m = post.shape[0]
    out = np.full(m, np.nan)
    names = list(candidates)
    if secret not in names or m == 0:
        return out
    s = names.index(secret)
    k = len(names)
    with np.errstate(divide="ignore", invalid="ignore"):
        if game == "spygame":
            if spy_word not in names:
                return out
            v = names.index(spy_word)
            ok = (post[:, s] > 0) & (post[:, v] > 0)
            out[ok] = np.log2(post[ok, s]) - np.log2(post[ok, v])
            return out
        prev = np.full(k, 1.0 / k)
        for i in range(m):
            if not counted[i]:
                continue
            cur = post[i]
            if np.all(prev > 0) and cur[s] > 0:
                ratio = cur / prev
                out[i] = math.log2(k * ratio[s] / ratio.sum())
            prev = cur
    return out


def group_of(model: Any, role: Any) -> str:
    return f"{model if model not in (None, '') else NONE_GROUP}{SPEAKER_SEP}{role}"


def plane_groups(
    game: NDArray[np.int64],
    group: NDArray[np.object_],
    x: NDArray[np.float64],
    y: NDArray[np.float64],
    *,
    replicates: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per group (``model · role``): mean x and mean y over its clues with both defined,
    each with a bootstrap 95% interval over games (a game's clues resampled together)."""
    ok = np.isfinite(x) & np.isfinite(y)
    out = []
    names = sorted(set(group[ok].tolist()))
    for name in names:
        rows = ok & (group == name)
        gi = np.unique(game[rows], return_inverse=True)[1].astype(np.int64)
        n = int(gi.max()) + 1
        num = np.stack([np.bincount(gi, x[rows], n), np.bincount(gi, y[rows], n)], axis=1).astype(
            np.float64
        )
        cnt = np.bincount(gi, minlength=n).astype(np.float64)
        est = bootstrap_ratio(num, np.stack([cnt, cnt], axis=1), replicates=replicates, seed=seed)
        model, _, role = str(name).partition(SPEAKER_SEP)
        out.append(
            {
                "kind": "data", "group": name, "model": model, "role": role,
                "clues": int(rows.sum()), "games": n,
                "leakage_bits": float(est.value[0]), "leakage_low": float(est.low[0]),
                "leakage_high": float(est.high[0]), "reveal_bits": float(est.value[1]),
                "reveal_low": float(est.low[1]), "reveal_high": float(est.high[1]), "note": "",
            }
        )  # fmt: skip
    out.sort(key=lambda r: (-r["clues"], r["group"]))
    return out


# -- Karabag & Topcu's reference strategies, simulated ------------------------------------


def _summary(
    name: str, role: str, xs: NDArray[np.float64], ys: NDArray[np.float64], note: str
) -> dict[str, Any]:
    def ci(v: NDArray[np.float64]) -> tuple[float, float]:
        se = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0
        return float(v.mean() - 1.96 * se), float(v.mean() + 1.96 * se)

    (xl, xh), (yl, yh) = ci(xs), ci(ys)
    return {
        "kind": "reference", "group": f"{name}{SPEAKER_SEP}{role}", "model": name,
        "role": role, "clues": len(xs), "games": 0,
        "leakage_bits": float(xs.mean()), "leakage_low": xl, "leakage_high": xh,
        "reveal_bits": float(ys.mean()), "reveal_low": yl, "reveal_high": yh, "note": note,
    }  # fmt: skip


def simulate_stationary(
    pi: NDArray[np.float64], n: int, games: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Clues of a stationary strategy ``pi[w, r]`` = P(r | w), N players, the chameleon first.

    Returns (x, y) of the N-1 non-chameleons' clues (x: entropy drop of the posterior over
    their clues so far, uniform prior, the chameleon's clue not counted as in the batch's
    default) and (x, y) of the chameleon's, drawn from the marginal D^ch = (1/K) Σ_w π(· | w)
    (x: its gain from the uniform prior, as if counted). Likelihoods are ``pi`` itself.
    """
    k, r = pi.shape
    q = pi.mean(axis=0)
    logpi = np.log(np.maximum(pi, 1e-300))
    with np.errstate(divide="ignore"):
        lr = np.log2(pi) - np.log2(np.maximum(q, 1e-300))[None, :]  # y of response r for w
    s = rng.integers(k, size=games)
    cdf = np.cumsum(pi, axis=1)
    u = rng.random((games, n - 1))
    resp = np.minimum((u[..., None] > cdf[s][:, None, :]).sum(axis=-1), r - 1)
    logpost = np.zeros((games, k))
    h_prev = np.full(games, math.log2(k))
    xs, ys = [], []
    for i in range(n - 1):
        logpost = logpost + logpi[:, resp[:, i]].T
        p = np.exp(logpost - logpost.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        h = _entropy(p)
        xs.append(h_prev - h)
        ys.append(lr[s, resp[:, i]])
        h_prev = h
    cham = np.minimum((rng.random(games)[:, None] > np.cumsum(q)[None, :]).sum(axis=1), r - 1)
    post1 = pi[:, cham].T
    post1 = post1 / post1.sum(axis=1, keepdims=True)
    cx = math.log2(k) - _entropy(post1)
    cy = lr[s, cham]
    return np.concatenate(xs), np.concatenate(ys), cx, cy


def simulate_amb_plane(
    n: int,
    l: int,  # noqa: E741 (the paper's l)
    games: int,
    rng: np.random.Generator,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(x, y) of π_amb's non-chameleon clues (Karabag & Topcu section 4.2; K = l(N+1)).

    Each response eliminates one of the g groups of l words still possible, never the
    secret's; the chameleon (a uniformly drawn seat) eliminates a uniformly drawn remaining
    group, and after it eliminated the secret's the others say null (no clue, no point).
    With the strategy's own history-conditioned likelihood: x = log2(g / (g-1)) (uniform
    posterior over the words left), and y = log2[P(r | s, h) / ((1/K) Σ_w P(r | w, h))]
    = log2((N+1) / (g-1)) (a word already eliminated answers null, so only the (g-1) l words
    outside r's group would have said r, each with probability 1/(g-1)).
    """
    xs, ys = [], []
    seat = rng.integers(n, size=games)
    secret_group = rng.integers(n + 1, size=games)
    for gi in range(games):
        remaining = list(range(n + 1))
        broken = False
        for i in range(n):
            g = len(remaining)
            if i == seat[gi]:
                pick = remaining[rng.integers(g)]
                broken |= pick == secret_group[gi]
                remaining.remove(pick)
                continue
            if broken:
                continue
            xs.append(math.log2(g / (g - 1)))
            ys.append(math.log2((n + 1) / (g - 1)))
            options = [x for x in remaining if x != secret_group[gi]]
            remaining.remove(options[rng.integers(len(options))])
    return np.asarray(xs), np.asarray(ys)


def reference_points(
    *, k: int = 16, n: int = 4, games: int = 4000, seed: int = 0
) -> list[dict[str, Any]]:
    """Karabag & Topcu's strategies on the plane (means with normal 95% intervals over the
    simulated clues): trivial (section 4.1), α-KL concealing (Definition 1, ε = 0.3),
    α-L1 revealing (Definition 2, reveal = κ = 0.9), each with K candidates and N players,
    the non-chameleons' clues and the chameleon's; π_amb (section 4.2), which needs
    K = l(N+1) with l >= 2, with the player count nearest N that allows it for this K (none
    for K = 2, 3, 5, 7, ...: then it is left out)."""
    from leakage.games import theory

    rng = np.random.default_rng(seed)
    out = []
    for strategy in (theory.trivial(k), theory.concealing(k, 0.3), theory.revealing(k, 0.9, 0.9)):
        x, y, cx, cy = simulate_stationary(strategy.pi, n, games, rng)
        mi = theory.mutual_information(strategy.pi) / math.log(2)
        note = f"K={k}, N={n}, I(W;R)={mi:.3f} bits"
        name = strategy.name.split("(")[0]
        out.append(_summary(name, "non-chameleon", x, y, f"{strategy.name}; {note}"))
        out.append(_summary(name, "chameleon", cx, cy, f"{strategy.name}; {note}"))
    # π_amb needs K = l(N+1), l >= 2: the N nearest the one asked for that divides K.
    fits = [p for p in range(2, k) if k % (p + 1) == 0 and k // (p + 1) >= 2]
    if fits:
        na = min(fits, key=lambda p: (abs(p - n), p))
        l = k // (na + 1)  # noqa: E741
        x, y = simulate_amb_plane(na, l, games, rng)
        out.append(_summary("pi_amb", "non-chameleon", x, y, f"l={l}, K={k}, N={na}"))
    return out


DEFAULT_K = 16
"""The candidates per game of the reference strategies when the Chameleon games' numbers
differ."""

NO_REFERENCES = (
    "No reference strategy is drawn: Karabag & Topcu's (trivial, concealing, revealing, "
    "pi_amb) are strategies of The Chameleon, one player without the secret among N with K "
    "candidates; SpyGame's players each hold a word of a pair and none is without one, so "
    "they have no counterpart there."
)


def per_statement(games: Iterable[Any], *, spy_seat: bool = False) -> bool:
    """Whether figures over games of these kinds (``chameleon``, ``spygame`` per game or per
    row; None and empty left out) read each clue on its own: True when every game is SpyGame
    (CK-Arena and SpyGame logs) scored from an outside seat, whose statements are each scored
    from the uniform prior (the m-th statement's posterior is its own: nothing accumulates,
    m numbers the statements); False as soon as one game is The Chameleon's, whose counted
    clues accumulate (the posterior after m clues), or when ``spy_seat`` (some games were
    scored from the spy's own seat, :func:`spy_seat_games`): the spy's posterior over the
    civilians' word accumulates over the statements it has heard. ``leakage report`` words
    its figures by it and the service says it with each job's curves."""
    kinds = {str(g) for g in games if g not in (None, "")}
    return kinds == {"spygame"} and not spy_seat


def spy_seat_games(steps: Any) -> int:
    """How many games of a step table (a ``pyarrow.Table`` or dataset, or a results
    directory / folder of Parquet parts) were scored from the spy's own seat: those with a
    ``reveal_bits`` value (:func:`seat_reveal`); 0 for a table without the column."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    if isinstance(steps, (str, Path)):
        where = Path(steps) / "steps" if (Path(steps) / "steps").is_dir() else Path(steps)
        parts = ds.dataset(where, format="parquet")
        if not any("reveal_bits" in f.physical_schema.names for f in parts.get_fragments()):
            return 0
        schema = pa.unify_schemas([f.physical_schema for f in parts.get_fragments()])
        steps = ds.dataset(where, format="parquet", schema=schema)
    if "reveal_bits" not in steps.schema.names:
        return 0
    cols = ["source", "record", "reveal_bits"]
    table = steps.to_table(columns=cols) if hasattr(steps, "to_table") else steps.select(cols)
    held = table.filter(pc.is_valid(table["reveal_bits"]))
    return held.group_by(["source", "record"]).aggregate([]).num_rows


def default_grouping(games: Iterable[Any]) -> str:
    """The grouping a viewer shows first for games of these kinds: ``speaker`` (each
    statement by its speaker's own model and role) when every game is SpyGame (a SpyGame's
    players are six models, and grouping the game by all of them names no one; from every
    seat), else ``model`` (the models of the counted speakers)."""
    return "speaker" if per_statement(games) else "model"


def plane_references(rows: Any, *, seed: int = 0, games: int = 4000) -> dict[str, Any]:
    """The reference strategies that belong to the games of a step table (a ``pyarrow``
    table or dataset with the columns ``game`` and ``candidates``): Karabag & Topcu's
    (:func:`reference_points`) for K the Chameleon games' number of candidates
    (:data:`DEFAULT_K` when it differs between them: ``mixed_k``), and none for a table
    without a Chameleon game (:data:`NO_REFERENCES` says why in ``note``). With Chameleon and
    SpyGame games together, the note says the references are the Chameleon's. One function
    for ``leakage report``'s plane and the service's."""
    import pyarrow.compute as pc

    table = (
        rows.to_table(columns=["game", "candidates"])
        if hasattr(rows, "to_table")
        else (rows.select(["game", "candidates"]))
    )
    cham = table.filter(pc.equal(table["game"], "chameleon"))
    if not cham.num_rows:
        return {"references": [], "k": None, "mixed_k": False,
                "note": NO_REFERENCES if table.num_rows else ""}  # fmt: skip
    ks = set(pc.unique(pc.list_value_length(cham["candidates"])).to_pylist())
    k = int(next(iter(ks))) if len(ks) == 1 else DEFAULT_K
    note = (
        "Black: Karabag & Topcu's strategies of The Chameleon (trivial, concealing, "
        f"revealing, pi_amb), K = {k} candidates, simulated with their own likelihoods"
    )
    if len(ks) > 1:
        note += f" (the Chameleon games have different numbers of candidates: K = {k} is used)"
    if cham.num_rows < table.num_rows:
        note += "; they belong to the Chameleon games: SpyGame has none"
    return {
        "references": reference_points(k=k, seed=seed, games=games),
        "k": k,
        "mixed_k": len(ks) > 1,
        "note": note + ".",
    }


# -- from a step table ----------------------------------------------------------------------

_TABLE_COLUMNS = [
    "source", "record", "game_id", "game", "step", "candidates", "probabilities", "counted",
    "secret", "pair", "information_gain_bits", "model", "role", "text",
]  # fmt: skip
_SEAT_COLUMNS = ["reveal_bits", "speaker_word"]  # read when the table has them


X_LABEL = "leakage to the player without the secret: information gain (bits)"
Y_LABEL = "reveal value to the players with it: log2 likelihood ratio (bits)"
SPY_X_LABEL = "leakage to the spy: its gain about the civilians' word (bits)"
SPY_Y_LABEL = "value to the civilians: log2 P(s | civilians' word) / P(s | spies' word) (bits)"


def plane_axes(points: dict[str, Any]) -> dict[str, Any]:
    """What the plane's axes are for the clues of :func:`clue_points`: ``two_dimensional``
    (a SpyGame game scored from the spy's seat is on it), the axis labels and ``note``, a
    sentence for a caption ("" for The Chameleon alone). SpyGame from an outside seat: with
    two candidates and each statement scored alone, x and y are both functions of its
    P(civilians' word), one curve; the note says that the spy's seat gives two dimensions.
    One function for ``leakage report``'s plane and the service's."""
    seat = int(points.get("spy_seat_games", 0))
    if seat:
        left = int(points.get("spies_left_out", 0))
        note = (
            f"SpyGame from the spy's own seat ({seat:,} game{'s' * (seat != 1)}): x, the "
            "spy's gain in bits "
            "about the civilians' word over an open vocabulary, its own word known (the "
            "first spy in seat order), from each civilian's statement; y, log2 "
            "P(statement | civilians' word) / P(statement | spies' word) by the same reader, "
            "the statement's value to the civilians. Two dimensions: a statement can tell "
            "the civilians much and the spy little."
        )
        if left:
            by = "statement by a spy is" if left == 1 else "statements by spies are"
            note += (
                f" {left:,} {by} left out: a spy holds no civilians' word to leak, and the "
                "seat hears only the other spy's."
            )
        return {"two_dimensional": True, "x_label": SPY_X_LABEL, "y_label": SPY_Y_LABEL,
                "note": note}  # fmt: skip
    note = ""
    if points.get("spygame"):
        note = (
            "SpyGame from an outside seat: with two candidates and each statement scored "
            "alone, x and y are both functions of the statement's P(civilians' word), so its "
            "points lie on one curve. Scored from the spy's seat (--seat spy; the service's "
            "seat=spy), "
            "x is the spy's gain about the civilians' word over an open vocabulary and the "
            "plane has two dimensions."
        )
    return {"two_dimensional": False, "x_label": X_LABEL, "y_label": Y_LABEL, "note": note}


def seat_reveal(table: Any) -> NDArray[np.float64] | None:
    """The step table's ``reveal_bits`` column (NaN where null), None when the table has no
    such column (written before it) or it is null throughout (no game scored from the
    spy's seat)."""
    if "reveal_bits" not in table.column_names or table["reveal_bits"].null_count == len(table):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    column = pc.cast(table["reveal_bits"], pa.float64()).fill_null(np.nan)
    return np.asarray(column.to_numpy(), dtype=np.float64)


def reveal_per_step(table: Any, game: NDArray[np.int64]) -> NDArray[np.float64]:
    """y of every row of a step table (a ``pyarrow.Table`` with the columns ``game``,
    ``candidates``, ``probabilities``, ``counted``, ``secret`` and ``pair``), ``game`` a
    number per game (rows of a game in step order); NaN where :func:`reveal_values` leaves it
    undefined. A game scored from the spy's seat (its ``reveal_bits`` set, when the table
    has that column) takes that column: its posteriors are the spy's, over an open
    vocabulary, and hold no ratio over the pair."""
    counted = table["counted"].to_numpy(zero_copy_only=False).astype(bool)
    cols = {c: table[c].to_pylist() for c in ("game", "candidates", "secret", "pair")}
    probs = table["probabilities"].to_pylist()
    stored = seat_reveal(table)
    y = np.full(len(game), np.nan)
    order = np.argsort(game, kind="stable")
    bounds = np.flatnonzero(np.diff(game[order])) + 1
    for rows in np.split(order, bounds):
        if rows.size == 0:
            continue
        if stored is not None and np.isfinite(stored[rows]).any():
            y[rows] = stored[rows]
            continue
        first = int(rows[0])
        pair = cols["pair"][first] or ""
        spy_word = pair.partition("|")[2] or None
        y[rows] = reveal_values(
            cols["game"][first],
            cols["candidates"][first],
            np.asarray([probs[i] for i in rows], dtype=np.float64),
            counted[rows].tolist(),
            secret=cols["secret"][first],
            spy_word=spy_word,
        )
    return y


def clue_points(dataset: Any) -> dict[str, Any]:
    """Every counted clue of a step table (a ``pyarrow.dataset``, or a ``pyarrow.Table``
    held in memory) with its x and y.

    Returns numpy arrays ``game`` (a number per source file and record), ``group``
    (``model · role``), ``x``, ``y``, ``index`` (each clue's row in the table) and the
    per-clue rows of :data:`CLUE_COLUMNS` (``rows``). y is NaN where :func:`reveal_values`
    leaves it undefined; the spy's word is the pair's (``pair`` column), never a position
    among the candidates.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    names = dataset.schema.names
    wanted = [*_TABLE_COLUMNS, *(c for c in _SEAT_COLUMNS if c in names)]
    if hasattr(dataset, "to_table"):
        table = dataset.to_table(columns=wanted)
    else:
        table = dataset.select(wanted)
    key = pc.binary_join_element_wise(
        table["source"], pc.cast(table["record"], pa.string()), "\x1f"
    )
    game = pc.dictionary_encode(key).combine_chunks().indices.to_numpy().astype(np.int64)
    counted = table["counted"].to_numpy(zero_copy_only=False).astype(bool)
    gain = table["information_gain_bits"].to_numpy()
    y = reveal_per_step(table, game)
    # Games scored from the spy's seat: only the civilians' statements are placed (a spy
    # holds no civilians' word to leak, and the seat hears the other spy alone).
    stored = seat_reveal(table)
    seat_game = np.zeros(len(game), dtype=bool)
    spies_left_out = 0
    if stored is not None:
        has = np.bincount(game, weights=np.isfinite(stored), minlength=int(game.max()) + 1)
        seat_game = has[game] > 0
        held = table["speaker_word"].to_pylist()
        secret = table["secret"].to_pylist()
        spy = seat_game & np.array([w != s for w, s in zip(held, secret, strict=True)], bool)
        spies_left_out = int((spy & counted).sum())
        counted = counted & ~spy
    keep = np.flatnonzero(counted & np.isfinite(gain) & np.isfinite(y))
    model = table["model"].to_pylist()
    role = table["role"].to_pylist()
    group = np.array([group_of(model[i], role[i]) for i in keep], dtype=object)
    ids, steps, texts = (table[c].to_pylist() for c in ("game_id", "step", "text"))
    rows_out = [
        {
            "game_id": ids[i],
            "step": steps[i],
            "model": model[i] or NONE_GROUP,
            "role": role[i],
            "text": texts[i],
            "leakage_bits": float(gain[i]),
            "reveal_bits": float(y[i]),
        }
        for i in keep
    ]
    return {
        "game": game[keep],
        "group": group,
        "x": gain[keep],
        "y": y[keep],
        "index": keep,
        "rows": rows_out,
        "undefined": int((counted & ~np.isfinite(y)).sum()),
        "spy_seat_games": len(np.unique(game[seat_game])),
        "spies_left_out": spies_left_out,
        "spygame": bool(pc.any(pc.equal(table["game"], "spygame")).as_py()),
    }
