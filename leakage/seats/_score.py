"""A seat's :class:`~leakage.seats._trace.SeatTrace` of one game from plain values: what
``leakage.scoring`` calls when ``ScoreOptions.seat`` names a player's seat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from leakage.seats._reader import SEAT_SHORTLIST, seat_reader
from leakage.seats._spygame import _normalise, seat_shortlist, spy_rho, spy_seat_steps
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
        holders = spies
        rho = spy_rho(len(players), len(spies))
        steps = [
            spy_seat_steps(reader, texts, speakers, h, word_of[h], civilian_word, candidates, rho)
            for h in holders
        ]
        return assemble(seat, holders, candidates, steps, info=reader.info())
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
