"""Gu et al.'s Dynamic Cheatsheet: a memory of earlier games' lessons, put into an LLM
player's prompt.

Gu et al. (section 5.2, appendix F; after Suzgun et al.'s Dynamic Cheatsheet) give each
agent a persistent vector memory of short reusable strategy rules:

* **store**: each item is a one-line rule; rules are embedded and kept in a FAISS
  inner-product index; the pool holds at most 10 items; index and texts are saved to disk
  and reloaded across runs;
* **curation**: after every K = 5 games a curator reads the retrieved past strategies and
  the games' public logs, writes new rules, deduplicates them and adds them to the memory;
* **injection**: in every phase the agent retrieves the strategies most relevant to its
  current word and role and the prompt shows them under "Useful Strategies from Past Games".

Here, :class:`Cheatsheet` is the store (entries: the lesson, the situation it came from, the
game's outcome for the lesson's role, how many games support it), embedded with the
project's encoders (the bundled all-MiniLM-L6-v2 by default) into a ``faiss.IndexFlatIP``
over unit vectors (cosine similarity), saved as JSON (``leakage.cheatsheet/1``: entries,
their vectors, the lessons waiting for the next curation and the game count), so that a
memory carries across ``leakage play`` runs. :class:`CheatsheetAgent` wraps an LLM player
(:class:`~leakage.games.agents.llm.ChameleonLLMAgent` or ``SpyLLMAgent``): before each
move it retrieves the ``top_k`` entries nearest to the current situation (game, role, phase,
category, the word it holds) and prefixes the phase's prompt with them; after each game
(the game loop calls ``end_game`` with the transcript) it extracts a lesson for every seat
it played and, every ``curate_every`` games, curates.

Lessons come from the LLM (:class:`LLMLessons`: the public log and the outcome, "write one
reusable rule") or, for scripted and local runs, from :func:`rule_lessons`, which states what
happened from the outcome and the votes (which clue or description drew how many votes, who
was caught, what was guessed). Curation with an LLM (:class:`LLMCurator`) asks it to rewrite
the memory and the new lessons as at most ``capacity`` one-line rules; without one, and
after it, the deterministic rule (:meth:`Cheatsheet.curate`) applies: entries whose
embeddings have cosine similarity >= ``dedupe_at`` (0.9) are merged into the older one
(their game and win counts added), then, while over capacity, the entry supported by the
fewest games is dropped (ties: the one from the fewest won games, then the oldest).

Differences from the paper, on purpose: no PCA to 128 dimensions (with at most 10 + K
entries there are too few points to fit 128 components, and MiniLM's 384 dimensions are
small already); the entry's situation is embedded with its rule (the paper retrieves rules
by the current word and role; embedding the situation the rule came from is what makes that
query land on the rules of similar games); the cheatsheet is shown in the phase prompt, not
in a separate section of a JSON-output prompt.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.errors import InvalidInput
from leakage.games._types import ChameleonObservation, Observation
from leakage.llm import Message

FORMAT = "leakage.cheatsheet/1"
CAPACITY = 10
"""Gu et al.: "The memory pool is capped at 10 items"."""
CURATE_EVERY = 5
"""Gu et al.: "After every K = 5 games, a curator agent ..."."""
TOP_K = 3
DEDUPE_AT = 0.9
HEADER = "Useful strategies from past games:"


@dataclass
class Entry:
    """One cheatsheet item."""

    lesson: str
    """The rule, one line."""
    situation: str
    """Where it came from: game, role, category, word (the text a move's situation is
    compared with)."""
    outcome: str
    """``win`` or ``loss`` for the lesson's role in the game it came from (``mixed`` after
    merging lessons of both)."""
    games: int = 1
    """Games whose lessons were merged into this entry."""
    wins: int = 0
    """Of those, games the lesson's role won."""
    added: int = 0
    """The agent's game count when the entry was first made (age, for ties)."""

    @property
    def key(self) -> str:
        """The text that is embedded."""
        return f"{self.situation}\n{self.lesson}"


# -- the store --------------------------------------------------------------------------


def _import_faiss() -> Any:
    from leakage.vocab._index import import_faiss

    return import_faiss()


class Cheatsheet:
    """Entries, their unit vectors and a FAISS inner-product index over them."""

    def __init__(
        self,
        encoder: Any,
        *,
        capacity: int = CAPACITY,
        dedupe_at: float = DEDUPE_AT,
    ) -> None:
        if capacity < 1:
            raise InvalidInput(f"cheatsheet capacity must be at least 1, not {capacity}")
        self.encoder = encoder
        self.capacity = capacity
        self.dedupe_at = dedupe_at
        self.entries: list[Entry] = []
        self.vectors = np.zeros((0, int(encoder.dimension)), np.float32)
        self._index: Any = None

    def __len__(self) -> int:
        return len(self.entries)

    def embed(self, entries: Sequence[Entry]) -> NDArray[np.float32]:
        if not entries:
            return np.zeros((0, self.vectors.shape[1]), np.float32)
        vecs = np.asarray(self.encoder.encode_batch([e.key for e in entries]), np.float32)
        return vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)

    def _set(self, entries: list[Entry], vectors: NDArray[np.float32]) -> None:
        self.entries = entries
        self.vectors = np.ascontiguousarray(vectors, np.float32)
        faiss = _import_faiss()
        self._index = faiss.IndexFlatIP(self.vectors.shape[1])
        if len(entries):
            self._index.add(self.vectors)

    def retrieve(self, situation: str, k: int = TOP_K) -> list[tuple[Entry, float]]:
        """The ``k`` entries most similar to ``situation`` (cosine), best first."""
        if not self.entries or k < 1:
            return []
        if self._index is None:
            self._set(self.entries, self.vectors)
        query = np.asarray(self.encoder.encode_batch([situation]), np.float32)
        query /= np.maximum(np.linalg.norm(query, axis=1, keepdims=True), 1e-12)
        scores, ids = self._index.search(query, min(k, len(self.entries)))
        return [(self.entries[i], float(s)) for s, i in zip(scores[0], ids[0], strict=True)]

    def curate(self, new: Sequence[Entry]) -> dict[str, int]:
        """Add ``new``, merge near-duplicates (cosine >= ``dedupe_at``) into the older entry,
        then drop the least supported entries down to ``capacity``. What happened, counted."""
        entries = [replace(e) for e in self.entries] + [replace(e) for e in new]
        vectors = np.concatenate([self.vectors, self.embed(new)]) if new else self.vectors
        keep: list[int] = []
        merged = 0
        for i in range(len(entries)):
            sims = vectors[keep] @ vectors[i] if keep else np.zeros(0)
            if sims.size and sims.max() >= self.dedupe_at:
                into = entries[keep[int(sims.argmax())]]
                e = entries[i]
                into.games += e.games
                into.wins += e.wins
                if into.outcome != e.outcome:
                    into.outcome = "mixed"
                merged += 1
            else:
                keep.append(i)
        dropped = 0
        while len(keep) > self.capacity:
            worst = min(keep, key=lambda j: (entries[j].games, entries[j].wins, j))
            keep.remove(worst)
            dropped += 1
        self._set([entries[j] for j in keep], vectors[keep])
        return {"added": len(new), "merged": merged, "dropped": dropped, "kept": len(keep)}

    def replace_all(self, entries: Sequence[Entry]) -> None:
        self._set(list(entries), self.embed(entries))

    # -- persistence ------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": getattr(self.encoder, "name", type(self.encoder).__name__),
            "dimension": int(self.vectors.shape[1]),
            "capacity": self.capacity,
            "entries": [
                {**asdict(e), "vector": [float(x) for x in v]}
                for e, v in zip(self.entries, self.vectors, strict=True)
            ],
        }

    def load_dict(self, data: dict[str, Any], source: str) -> None:
        """Entries (and their vectors when the same encoder made them) from ``to_dict``."""
        raw = data.get("entries")
        if not isinstance(raw, list):
            raise InvalidInput(f"{source}: 'entries' must be a list")
        entries, vectors = [], []
        for i, item in enumerate(raw):
            if not isinstance(item, dict):
                raise InvalidInput(f"{source}: entries[{i}] must be an object")
            vectors.append(item.get("vector"))
            entries.append(_entry(item, f"{source}: entries[{i}]"))
        same = data.get("model") == getattr(self.encoder, "name", None) and all(
            isinstance(v, list) and len(v) == self.vectors.shape[1] for v in vectors
        )
        if same and entries:
            self._set(entries, np.asarray(vectors, np.float32))
        else:  # another encoder made them: embed again
            self._set(entries, self.embed(entries))


def _entry(item: dict[str, Any], where: str) -> Entry:
    fields = {k: item[k] for k in ("lesson", "situation", "outcome") if k in item}
    missing = {"lesson", "situation", "outcome"} - fields.keys()
    if missing:
        raise InvalidInput(f"{where}: missing field {', '.join(sorted(missing))}")
    bad: list[str] = [k for k, v in fields.items() if not isinstance(v, str)]
    counts = {k: item.get(k, d) for k, d in (("games", 1), ("wins", 0), ("added", 0))}
    bad += [k for k, v in counts.items() if not isinstance(v, int) or v < 0]
    if bad:
        raise InvalidInput(f"{where}: field {bad[0]} has the wrong type")
    return Entry(**fields, **counts)


# -- situations and lessons -----------------------------------------------------------


def situation(obs: Observation) -> str:
    """What a move is about, in the words the entries' situations use."""
    if isinstance(obs, ChameleonObservation):
        held = f"secret {obs.secret}" if obs.secret is not None else "secret unknown"
        return f"chameleon game; role {obs.role}; category {obs.category}; {held}; {obs.phase}"
    role = obs.role or "unknown"
    category = f"; category {obs.category}" if obs.category else ""
    return f"spygame; role {role}; word {obs.word}{category}; {obs.phase}"


def _counts(votes: Sequence[Any], rnd: int | None = None) -> Counter[str]:
    return Counter(v.target for v in votes if rnd is None or v.round == rnd)


def rule_lessons(transcript: Any, players: Sequence[str]) -> list[Entry]:
    """One lesson per seat in ``players``, stated from the outcome and the votes (no LLM)."""
    winner = transcript.meta.get("winner_role")
    out = []
    for pid in players:
        role = transcript.player(pid).role
        won = winner == role
        if transcript.game == "chameleon":
            lesson, where = (
                _chameleon_lesson(transcript, pid, role),
                (f"chameleon game; role {role}; category {transcript.category}"),
            )
        else:
            lesson, where = _spy_lesson(transcript, pid, role)
        if lesson:
            out.append(Entry(lesson, where, "win" if won else "loss", 1, int(won)))
    return out


def _chameleon_lesson(t: Any, pid: str, role: str) -> str:
    said = {x.player: x.text for x in t.turns}
    counts = _counts(t.votes)
    n = len(t.votes)
    chameleon = next(iter(t.chameleons()))
    accused = t.meta.get("accused")
    outcome = t.meta.get("outcome")
    if outcome == "invalid" or chameleon not in said:
        why = (t.meta.get("invalid") or {}).get("reason", "no clue")
        return f"A game was lost to an invalid move ({why}); answer exactly as the rules ask."
    clue = said[chameleon]
    others = ", ".join(f"'{said[p]}'" for p in said if p != chameleon) or "none"
    if role == "chameleon":
        if accused != chameleon:
            return (
                f"As the chameleon in {t.category}, the clue '{clue}' next to {others} drew "
                f"{counts[chameleon]} of {n} votes and was not caught: clues like it blend in."
            )
        guess = t.chameleon_guess
        tail = (
            f"then guessed the secret {t.secret} from the clues"
            if outcome == "chameleon_guessed"
            else f"and guessed {guess or 'nothing'} while the secret was {t.secret}"
        )
        return (
            f"As the chameleon in {t.category}, the clue '{clue}' next to {others} drew "
            f"{counts[chameleon]} of {n} votes and was caught, {tail}."
        )
    ours = others
    if accused == chameleon and outcome == "chameleon_caught":
        return (
            f"With secret {t.secret} in {t.category}, the clues {ours} exposed the chameleon's "
            f"clue '{clue}' ({counts[chameleon]} of {n} votes) without giving the secret away."
        )
    if accused == chameleon:
        return (
            f"With secret {t.secret} in {t.category}, the chameleon (clue '{clue}') was caught "
            f"but guessed the secret from the clues {ours}: they pointed too plainly at it."
        )
    return (
        f"With secret {t.secret} in {t.category}, the chameleon's clue '{clue}' drew only "
        f"{counts[chameleon]} of {n} votes and {accused} was accused: the clues {ours} "
        "did not set the non-chameleons apart from the chameleon."
    )


def _spy_lesson(t: Any, pid: str, role: str) -> tuple[str, str]:
    word = t.words.spy if role == "spy" else t.words.civilian
    category = t.meta.get("category")
    where = f"spygame; role {role}; word {word}" + (f"; category {category}" if category else "")
    spies = {p.id for p in t.players if p.role == "spy"}
    out = {e.player: e.round for e in t.eliminations}
    rounds = t.meta.get("rounds_played", 0)
    said = [x.text for x in t.turns if x.player in spies][:2]
    desc = " / ".join(f"'{s}'" for s in said) or "nothing"
    votes_at = _counts([v for v in t.votes if v.target in spies])
    got = sum(votes_at.values())
    if t.meta.get("outcome") == "invalid":
        why = (t.meta.get("invalid") or {}).get("reason", "")
        return (f"A game was lost to an invalid move ({why}); answer as the rules ask.", where)
    caught = [p for p in spies if p in out]
    if role == "spy":
        fate = (
            f"was voted out in round {out[pid]}" if pid in out else f"survived all {rounds} rounds"
        )
        return (
            f"As the spy with '{t.words.spy}' against '{t.words.civilian}', describing it as "
            f"{desc} drew {got} votes in all and {fate}.",
            where,
        )
    wrong = [e.player for e in t.eliminations if e.player not in spies]
    fate = (
        f"the spy was voted out in round {min(out[p] for p in caught)}"
        if caught
        else "the spy survived"
    )
    return (
        f"As a civilian with '{t.words.civilian}', the spy's word was '{t.words.spy}' "
        f"(it said {desc}); {fate}"
        + (f" after {len(wrong)} civilian(s) were voted out." if wrong else "."),
        where,
    )


def _public_log(t: Any) -> str:
    lines = [f"{x.player}{f' (round {x.round})' if x.round else ''}: {x.text}" for x in t.turns]
    lines += [f"{v.voter} voted {v.target}" for v in t.votes]
    if t.game == "chameleon":
        lines.append(
            f"The chameleon was {next(iter(t.chameleons()))}; the secret was {t.secret}; "
            f"outcome: {t.meta.get('outcome')}"
        )
    else:
        spies = ", ".join(p.id for p in t.players if p.role == "spy")
        lines.append(
            f"Spy: {spies} (word {t.words.spy}); civilians' word {t.words.civilian}; "
            f"outcome: {t.meta.get('outcome')}"
        )
    return "\n".join(lines)


_ANSWER = re.compile(r"answer\s*:", re.IGNORECASE)


def _rules_from(text: str) -> list[str]:
    """One-line rules from a reply: the lines after the last ``Answer:`` (the whole reply
    when there is none), bullets stripped, lines of fewer than four words dropped."""
    out: list[str] = []
    for line in _ANSWER.split(text)[-1].splitlines():
        rule = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", line).strip().strip('"')
        if len(rule.split()) >= 4 and rule not in out:
            out.append(rule[:300])
    return out


@dataclass
class LLMLessons:
    """Lessons written by an LLM from the game's public log and outcome (falls back on
    :func:`rule_lessons` for a seat whose reply holds no rule)."""

    client: Any
    max_tokens: int = 80

    def __call__(self, transcript: Any, players: Sequence[str]) -> list[Entry]:
        fallback = {e.situation: e for e in rule_lessons(transcript, players)}
        out = []
        for entry in fallback.values():
            role = entry.situation.split("; role ")[1].split(";")[0]
            prompt = (
                f"Here is the public log of a finished {transcript.game} game in which you "
                f"played the {role}:\n{_public_log(transcript)}\nYour side "
                f"{'won' if entry.outcome == 'win' else 'lost'}. Write one short reusable "
                f"rule (one sentence) for playing the {role} in later games. "
                "Reply in the form 'Answer: <rule>'."
            )
            reply = self.client.generate([Message("user", prompt)], max_tokens=self.max_tokens)
            rules = _rules_from(reply.text)
            out.append(replace(entry, lesson=rules[0]) if rules else entry)
        return out


@dataclass
class LLMCurator:
    """Rewrites the memory and the new lessons as at most ``capacity`` one-line rules (Gu et
    al.'s curator); each rule keeps the situation and counts of the nearest source entry."""

    client: Any
    max_tokens: int = 400

    def __call__(self, store: Cheatsheet, new: Sequence[Entry]) -> list[Entry] | None:
        sources = list(store.entries) + list(new)
        if not sources:
            return None
        listing = "\n".join(f"- {e.lesson} ({e.outcome})" for e in sources)
        prompt = (
            f"These are strategy notes from earlier games:\n{listing}\nMerge duplicates, drop "
            f"notes of little use, and write at most {store.capacity} short reusable rules, "
            "one per line. Reply in the form 'Answer:' followed by the rules, one per line."
        )
        reply = self.client.generate([Message("user", prompt)], max_tokens=self.max_tokens)
        rules = _rules_from(reply.text)[: store.capacity]
        if not rules:
            return None
        rule_vecs = store.embed([Entry(r, "", "") for r in rules])
        src_vecs = store.embed(sources)
        out = []
        for rule, v in zip(rules, rule_vecs, strict=True):
            near = sources[int((src_vecs @ v).argmax())]
            out.append(replace(near, lesson=rule))
        return out


LessonSource = Callable[[Any, Sequence[str]], list[Entry]]
Curator = Callable[[Cheatsheet, Sequence[Entry]], "list[Entry] | None"]


# -- the agent --------------------------------------------------------------------------


@dataclass
class CheatsheetAgent:
    """An LLM player with a Dynamic Cheatsheet (see the module doc)."""

    inner: Any
    """The LLM player: anything with a ``prompts`` dataclass whose phase templates are
    ``str.format`` strings (``ChameleonLLMAgent``, ``SpyLLMAgent``)."""
    store: Cheatsheet
    lessons: LessonSource = rule_lessons
    curator: Curator | None = None
    curate_every: int = CURATE_EVERY
    top_k: int = TOP_K
    path: Path | None = None
    """Where the memory is saved after every game (and loaded from at construction)."""
    pending: list[Entry] = field(default_factory=list)
    games: int = 0
    last_retrieved: list[tuple[Entry, float]] = field(default_factory=list)
    last_curation: dict[str, Any] | None = None
    curations: list[dict[str, Any]] = field(default_factory=list)
    """What each curation of this run did (``by``: llm or rule; added, merged, dropped)."""
    _seats: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.curate_every < 1:
            raise InvalidInput(f"curate_every must be at least 1, not {self.curate_every}")
        if not hasattr(self.inner, "prompts"):
            raise InvalidInput(
                f"a cheatsheet wraps an LLM player (llm or local); {type(self.inner).__name__} "
                "has no prompts"
            )
        if self.path is not None and self.path.exists():
            self.load(self.path)

    @property
    def name(self) -> str:
        return f"cheatsheet+{getattr(self.inner, 'name', type(self.inner).__name__)}"

    @property
    def last_move(self) -> Any:
        return getattr(self.inner, "last_move", None)

    def __call__(self, obs: Observation, /) -> str:
        if obs.player not in self._seats:
            self._seats.append(obs.player)
        self.last_retrieved = self.store.retrieve(situation(obs), self.top_k)
        if not self.last_retrieved:
            return str(self.inner(obs))
        notes = "\n".join(f"- {e.lesson}" for e, _ in self.last_retrieved)
        block = f"{HEADER}\n{notes}\n\n".replace("{", "{{").replace("}", "}}")
        base = self.inner.prompts
        template = getattr(base, obs.phase)
        self.inner.prompts = replace(base, **{obs.phase: block + template})
        try:
            return str(self.inner(obs))
        finally:
            self.inner.prompts = base

    def end_game(self, transcript: Any) -> None:
        """Learn from a finished game: lessons now, curation every ``curate_every`` games."""
        seats, self._seats = self._seats, []
        if not seats:
            return
        self.pending.extend(replace(e, added=self.games) for e in self.lessons(transcript, seats))
        self.games += 1
        if self.games % self.curate_every == 0:
            self.curate()
        if self.path is not None:
            self.save(self.path)

    def curate(self) -> dict[str, Any]:
        new, self.pending = self.pending, []
        rewritten = self.curator(self.store, new) if self.curator is not None else None
        if rewritten is not None:
            self.store.replace_all([])
            info = {"by": "llm", **self.store.curate(rewritten)}
        else:
            info = {"by": "rule", **self.store.curate(new)}
        self.last_curation = {"game": self.games, **info}
        self.curations.append(self.last_curation)
        return self.last_curation

    # -- persistence ------------------------------------------------------------------

    def save(self, path: Path) -> None:
        doc = {
            "format": FORMAT,
            "games": self.games,
            "curate_every": self.curate_every,
            **self.store.to_dict(),
            "pending": [asdict(e) for e in self.pending],
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def load(self, path: Path) -> None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise InvalidInput(f"{path}: not a readable cheatsheet ({err})") from err
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InvalidInput(f"{path}: not a {FORMAT} file (field 'format')")
        games = data.get("games", 0)
        pending = data.get("pending", [])
        if not isinstance(games, int) or games < 0:
            raise InvalidInput(f"{path}: field 'games' must be a count")
        if not isinstance(pending, list):
            raise InvalidInput(f"{path}: field 'pending' must be a list")
        self.store.load_dict(data, str(path))
        self.pending = [
            _entry(p if isinstance(p, dict) else {}, f"{path}: pending[{i}]")
            for i, p in enumerate(pending)
        ]
        self.games = games


# -- the tournament ---------------------------------------------------------------------


@dataclass(frozen=True)
class TournamentResult:
    """Paired games: the same seeds with the role's LLM player without and with a cheatsheet."""

    role: str
    base: str
    seeds: list[int]
    wins_without: list[int]
    wins_with: list[int]
    curations: list[dict[str, Any]]
    memory: list[str]
    """The cheatsheet's lessons at the end."""

    @property
    def games(self) -> int:
        return len(self.seeds)

    def rate(self, wins: Sequence[int]) -> float:
        return float(np.mean(wins)) if wins else float("nan")

    @property
    def difference(self) -> float:
        return self.rate(self.wins_with) - self.rate(self.wins_without)

    @property
    def stderr(self) -> float:
        """Standard error of the mean paired difference (per-seed with - without)."""
        d = np.asarray(self.wins_with, float) - np.asarray(self.wins_without, float)
        return float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "agent": self.base,
            "games": self.games,
            "win_rate_without": self.rate(self.wins_without),
            "win_rate_with": self.rate(self.wins_with),
            "difference": self.difference,
            "stderr": self.stderr,
            "seeds": self.seeds,
            "wins_without": self.wins_without,
            "wins_with": self.wins_with,
            "curations": self.curations,
            "memory": self.memory,
        }


def tournament(
    factory: Any,
    engine: Any,
    spec: dict[str, str],
    role: str,
    seeds: Sequence[int],
    *,
    game_id: str = "game",
) -> TournamentResult:
    """Play ``seeds`` with ``spec`` as it is, then again with ``spec[role]`` (an ``llm`` or
    ``local`` player) wrapped in a fresh cheatsheet that learns over the games in order; a
    game counts as a win when the transcript's ``winner_role`` is ``role``."""
    from leakage.games._loop import run

    base = spec[role]
    if base.partition(":")[0] not in ("llm", "local"):
        raise InvalidInput(f"the cheatsheet tournament needs an llm or local {role}, not {base!r}")
    results = []
    learner: Any = None
    for wrap in (False, True):
        roster: dict[str, Any] = {}
        for r, name in sorted(spec.items(), key=lambda x: x[0] == "chameleon"):
            if r == role and wrap:
                roster[r] = learner = factory.build(
                    engine_game(engine), f"cheatsheet:{name}", role=r
                )
            else:
                roster[r] = factory.build(
                    engine_game(engine), name, partner=roster.get("non-chameleon"), role=r
                )
        wins = []
        for i, s in enumerate(seeds):
            engine.reset(s, game_id=f"{game_id}-{i}")
            run(engine, roster)
            wins.append(int(engine.transcript().meta.get("winner_role") == role))
        results.append(wins)
    return TournamentResult(
        role,
        base,
        list(seeds),
        results[0],
        results[1],
        list(learner.curations) if learner is not None else [],
        [e.lesson for e in learner.store.entries] if learner is not None else [],
    )


def engine_game(engine: Any) -> str:
    from leakage.games.chameleon import ChameleonGame

    return "chameleon" if isinstance(engine, ChameleonGame) else "spygame"
