"""A seat's :class:`~leakage.seats._trace.SeatTrace` of one game from plain values: what
``leakage.scoring`` calls when ``ScoreOptions.seat`` names a player's seat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from leakage.seats._reader import SEAT_SHORTLIST, seat_reader
from leakage.seats._spygame import (
    _normalise,
    mix_own,
    pair_reveal_bits,
    refine,
    reveal_bits,
    seat_shortlist,
    spy_cheap_posteriors,
    spy_rho,
    spy_seat_steps,
    top_rows,
)
from leakage.seats._trace import SeatTrace, assemble, civilian_steps, non_chameleon_steps


def spygame_seat_trace(
    seat: str,
    *,
    texts: Sequence[str],
    speakers: Sequence[str],
    players: Sequence[str],
    player_words: Sequence[str],
    civilian_word: str,
    candidates: Sequence[str],
    backend: Any,
    vocabulary: str | None = None,
    shortlist: int | None = None,
    reader: Any | None = None,
) -> SeatTrace:
    """The ``spy`` or ``civilian`` seat of a SpyGame: every player who holds the spies'
    word (``spy``) or the civilians' (``civilian``) is a holder, in seat order."""
    if reader is None:
        reader = seat_reader(backend, vocabulary=vocabulary, shortlist=shortlist or SEAT_SHORTLIST)
    reader.vocab.add_candidates(candidates)  # ranked among V + the game's words
    word_of = dict(zip(players, player_words, strict=True))
    spies = [p for p in players if word_of[p] != civilian_word]
    if seat == "spy":
        return _spy_seat(
            reader, texts, speakers, players, spies, word_of, civilian_word, candidates
        )
    holders = [p for p in players if word_of[p] == civilian_word]
    search = reader.search
    vocab = reader.vocab
    backend_rows: Any = reader.fine if reader.fine is not None else search.backend
    plans = []
    words: dict[str, None] = {}
    for h in holders:
        own = word_of[h]
        heard = [x for x, who in zip(texts, speakers, strict=True) if who != h]
        log_prior = reader.prior.log_prior(vocab, own)
        short = seat_shortlist(search, heard, log_prior, np.isfinite(log_prior))
        listed = [vocab.index.words[r] for r in short]
        plans.append((h, own, log_prior, short, listed))
        words.update(dict.fromkeys([own, *listed]))
    column = {w: j for j, w in enumerate(words)}
    table = (
        np.asarray(backend_rows.loglik(list(texts), list(words)), dtype=np.float64)
        if texts
        else np.zeros((0, len(words)))
    )
    steps = []
    for h, own, log_prior, short, listed in plans:
        log_px = _normalise(np.asarray([log_prior[r] for r in short], dtype=np.float64))
        steps.append(
            civilian_steps(
                table[:, [column[w] for w in listed]],
                table[:, column[own]],
                log_px,
                speakers,
                players,
                h,
                spies,
            )
        )
    info = {**reader.info(), "seat_marginal_rows": _name(backend_rows)}
    return assemble(seat, holders, players, steps, info=info)


def _spy_seat(
    reader: Any,
    texts: Sequence[str],
    speakers: Sequence[str],
    players: Sequence[str],
    spies: Sequence[str],
    word_of: dict[str, str],
    civilian_word: str,
    candidates: Sequence[str],
) -> SeatTrace:
    """Every spy's seat: the cheap tier per spy, then the whole pool asked once about every
    statement and the best words of every spy's every step (one candidate set, so a
    backend's per-row constants are the same for every word a step compares). The same
    call reads the civilians' word for every statement's :func:`reveal_bits` (the trace's
    ``reveal_bits``; with one tier, its backend is asked about the pair)."""
    rho = spy_rho(len(players), len(spies))
    cheap = [spy_cheap_posteriors(reader, texts, speakers, h, word_of[h], rho) for h in spies]
    spy_word = word_of[spies[0]]
    if reader.fine is not None and texts:
        tops = [[top_rows(p, reader.fine_words) for p in posts] for _, _, posts in cheap]
        union = list(dict.fromkeys(int(r) for held in tops for top in held for r in top))
        owns = list(dict.fromkeys(word_of[h] for h in spies))
        words = [reader.vocab.index.words[r] for r in union]
        # the civilians' word too, in the same call: the plane's y (reveal_bits)
        asked = [*words, *owns, *([] if civilian_word in words else [civilian_word])]
        table = np.asarray(reader.fine.loglik(list(texts), asked), dtype=np.float64)
        y = reveal_bits(
            table[:, asked.index(civilian_word)], table[:, len(words) + owns.index(spy_word)]
        )
        col = {r: j for j, r in enumerate(union)}
        for h, (heard, log_prior, posts), held in zip(spies, cheap, tops, strict=True):
            own_col = table[heard, len(words) + owns.index(word_of[h])]
            rows = mix_own(table[heard][:, : len(words)], own_col, rho)
            refine(posts, held, log_prior, rows, col)
    elif reader.search.backend is not None:
        y = pair_reveal_bits(reader.search.backend, texts, civilian_word, spy_word)
    else:  # stage 1 alone reads no likelihood
        y = np.full(len(texts), np.nan)
    steps = [
        spy_seat_steps(
            reader, texts, heard, posts, log_prior, word_of[h], civilian_word, candidates
        )
        for h, (heard, log_prior, posts) in zip(spies, cheap, strict=True)
    ]
    return assemble("spy", spies, candidates, steps, info=reader.info(), reveal_bits=y)


def _name(backend: Any) -> str:
    members = getattr(backend, "members", None)
    return ", ".join(members) if members else str(getattr(backend, "name", "backend"))


def chameleon_seat_trace(
    *,
    loglik: Any,
    speakers: Sequence[str],
    players: Sequence[str],
    chameleons: Sequence[str],
    secret_index: int,
) -> SeatTrace:
    """The ``non-chameleon`` seat of a Chameleon game: every non-chameleon is a holder;
    ``loglik`` holds every turn's row over the card (the chameleon's turns too)."""
    rows = np.asarray(loglik, dtype=np.float64)
    holders = [p for p in players if p not in chameleons]
    steps = [
        non_chameleon_steps(rows, speakers, players, h, secret_index, chameleons) for h in holders
    ]
    return assemble("non-chameleon", holders, players, steps)
