"""``VectorIndex``: inner-product search over the unit vectors of a vocabulary.

Kinds: ``numpy`` (a matrix product and ``argpartition``), and three FAISS indexes:
``flat`` (``IndexFlatIP``, exact), ``hnsw`` (``IndexHNSWFlat``, M = 32) and ``ivf``
(``IndexIVFFlat``, nlist ≈ 4·√n). ``auto`` picks by size from ``AUTO_RULE``.

On disk an index is a directory::

    meta.json     leakage.vocab/1: model, dimension, kind, count, word-list source, parameters
    words.txt     one word per line, in index order
    index.faiss   faiss.write_index (flat, hnsw, ivf)   |   vectors.npy (numpy)

FAISS is imported inside the functions that need it (the ``embedding`` extra).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, ValidationError

from leakage.errors import BackendUnavailable, InvalidInput, validation_problems

FORMAT = "leakage.vocab/1"
IndexKind = Literal["flat", "hnsw", "ivf", "numpy"]
INDEX_KINDS: tuple[str, ...] = ("auto", "flat", "hnsw", "ivf", "numpy")
INSTALL_HINT = "pip install 'leakage[embedding]'"

# The auto rule: (largest vocabulary size, kind), first match wins. From
# `python -m benchmarks faiss` (benchmarks/results/faiss.json; docs/benchmarks.md, "FAISS vs
# numpy"), 2-core Xeon, d = 384, top-10. An approximate kind is picked only when it reaches
# recall@10 >= 0.95 and beats the exact scan by >= 10% on a single query and on a batch of 64.
#   - 48k real MiniLM word vectors (wordfreq:50000): HNSW (efSearch 32) 0.10 ms per query,
#     3.1 ms per batch, built in 3 s, vs numpy 1.4 ms / 25 ms; IVF 0.55 ms / 18 ms.
#   - 185k real MiniLM word vectors (a one-off check, same code): HNSW (efSearch 256)
#     0.9 ms / 60 ms vs numpy 24 ms / 241 ms.
#   - 500k word-like synthetic vectors: HNSW never reaches recall 0.95 (0.92 at efSearch
#     2048); IVF needs 512 of 2828 lists, ties numpy on one query (28 ms) and is 2.7x slower
#     per batch, after a 54 s build. The exact numpy scan wins.
# FAISS's IndexFlatIP was 2-6x slower than numpy's matrix product at every size here.
AUTO_RULE: tuple[tuple[int, IndexKind], ...] = (
    (200_000, "hnsw"),
    (2**63, "numpy"),
)

HNSW_M = 32
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH: tuple[tuple[int, int], ...] = ((100_000, 128), (2**63, 512))
"""Default efSearch by size (first row whose limit >= n). Recall@10 reached 0.95 at efSearch
32 on 48k real MiniLM word vectors in the benchmark and needed 256 on 185k of them (a one-off
check); 128 and 512 leave a margin."""
IVF_NPROBE_SHARE = 0.15
"""Default nprobe as a share of the lists: real MiniLM word vectors needed 128 of 877 lists
(15%) for recall@10 >= 0.95 in the benchmark; word vectors do not fall into tight clusters."""
IVF_NITER = 10
IVF_MIN_POINTS_PER_LIST = 39  # FAISS warns when k-means gets fewer training points per list
DEFAULT_SEED = 1234


def choose_kind(count: int) -> IndexKind:
    """The index kind ``auto`` means for a vocabulary of ``count`` words."""
    for limit, kind in AUTO_RULE:
        if count <= limit:
            return kind
    return AUTO_RULE[-1][1]


def ivf_nlist(count: int) -> int:
    """Number of IVF lists: about 4·√n, and at most n / 39 so k-means has enough points."""
    return max(1, min(round(4 * math.sqrt(count)), count // IVF_MIN_POINTS_PER_LIST))


def hnsw_ef_search(count: int) -> int:
    """Default efSearch of an HNSW index over ``count`` vectors."""
    return next(ef for limit, ef in HNSW_EF_SEARCH if count <= limit)


def ivf_nprobe(nlist: int) -> int:
    """Default nprobe: 15% of the lists, at least 8 (all of them when there are fewer)."""
    return min(nlist, max(8, math.ceil(IVF_NPROBE_SHARE * nlist)))


def import_faiss() -> Any:
    try:
        import faiss
    except ImportError as err:
        raise BackendUnavailable(
            f"vocabulary indexes need FAISS (faiss-cpu): {INSTALL_HINT}"
        ) from err
    return faiss


@contextmanager
def faiss_threads(faiss: Any, threads: int | None) -> Iterator[None]:
    """Run FAISS with ``threads`` OpenMP threads inside the block (``None``: leave as is)."""
    if threads is None:
        yield
        return
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(threads)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class VocabMeta(BaseModel):
    """``meta.json`` of a vocabulary index directory."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["leakage.vocab/1"] = "leakage.vocab/1"
    model: str
    """Name of the encoder that made the vectors; a query must use the same model."""
    model_ref: str | None = None
    """What to pass to ``open_encoder`` to get that model back (a local path, say)."""
    dimension: int
    kind: IndexKind
    count: int
    source: str
    """Where the words came from: ``wordfreq:N``, ``file:PATH``, or ``words``."""
    params: dict[str, float | int | str] = {}
    """Index parameters: M, efConstruction, efSearch (hnsw); nlist, nprobe, seed (ivf)."""
    built_seconds: float | None = None
    faiss_version: str | None = None
    texts: Literal["word", "gloss"] = "word"
    """What text each word was embedded as: ``word`` (the bare word) or ``gloss`` (``"word:
    its first WordNet gloss"``; ``leakage.vocab.gloss_text``). A clue is then embedded as
    itself, never looked up in the index."""


def _unit_rows(vectors: Any, dimension: int | None = None) -> NDArray[np.float32]:
    arr = np.ascontiguousarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2 or (dimension is not None and arr.shape[1] != dimension):
        want = f"(n, {dimension})" if dimension is not None else "(n, dimension)"
        raise InvalidInput(f"vectors must have shape {want}, got {arr.shape}")
    return arr


def _normalised(arr: NDArray[np.float32]) -> NDArray[np.float32]:
    # Encoders promise unit vectors, but one that normalises in bf16 is off by up to 0.4%;
    # renormalising in float32 makes every inner product a cosine.
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise InvalidInput("vectors must be finite and non-zero")
    return np.ascontiguousarray(arr / norms, dtype=np.float32)


def _check_words(words: Sequence[str]) -> list[str]:
    words = list(words)
    for i, w in enumerate(words):
        if not w or w != w.strip() or "\n" in w or "\r" in w:
            raise InvalidInput(f"word {i} ({w!r}): words must be non-empty single-line text")
    seen: set[str] = set()
    for w in words:
        if w in seen:
            raise InvalidInput(f"word {w!r} appears twice; a vocabulary holds each word once")
        seen.add(w)
    return words


class VectorIndex:
    """Words and their unit vectors, searchable by inner product (cosine similarity)."""

    def __init__(
        self, words: list[str], meta: VocabMeta, index: Any, vectors: NDArray[np.float32] | None
    ) -> None:
        self.words = words
        self.meta = meta
        self._index = index  # the FAISS index, or None for kind "numpy"
        self._vectors = vectors
        self._position: dict[str, int] | None = None
        self._folded: dict[str, list[int]] | None = None

    # -- building ---------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        words: Sequence[str],
        vectors: Any,
        *,
        model: str,
        kind: str = "auto",
        source: str = "words",
        model_ref: str | None = None,
        seed: int = DEFAULT_SEED,
        threads: int | None = None,
        deterministic: bool = True,
        texts: Literal["word", "gloss"] = "word",
    ) -> VectorIndex:
        """Index ``words`` with their unit ``vectors`` (row i belongs to word i).

        ``kind``: ``auto`` (by size, ``AUTO_RULE``), ``flat``, ``hnsw``, ``ivf`` or ``numpy``.
        Builds are deterministic: IVF k-means is seeded with ``seed``; an HNSW graph is
        built on one thread when ``deterministic`` (parallel insertion order varies between
        runs), otherwise on ``threads`` (default: FAISS's choice).
        """
        words = _check_words(words)
        arr = _normalised(_unit_rows(vectors))
        if arr.shape[0] != len(words):
            raise InvalidInput(f"{len(words)} words but {arr.shape[0]} vectors")
        if not words:
            raise InvalidInput("cannot index an empty vocabulary")
        if kind not in INDEX_KINDS:
            raise InvalidInput(f"unknown index kind {kind!r}; choose from {', '.join(INDEX_KINDS)}")
        chosen = choose_kind(len(words)) if kind == "auto" else cast(IndexKind, kind)
        n, dim = arr.shape
        start = time.perf_counter()
        params: dict[str, float | int | str] = {}
        index: Any = None
        version = None
        if chosen != "numpy":
            faiss = import_faiss()
            version = faiss.__version__
            if chosen == "flat":
                index = faiss.IndexFlatIP(dim)
                index.add(arr)
            elif chosen == "hnsw":
                index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
                index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
                index.hnsw.efSearch = hnsw_ef_search(n)
                with faiss_threads(faiss, 1 if deterministic else threads):
                    index.add(arr)
                params = {"M": HNSW_M, "efConstruction": HNSW_EF_CONSTRUCTION}
                params["efSearch"] = index.hnsw.efSearch
            else:
                nlist = ivf_nlist(n)
                quantizer = faiss.IndexFlatIP(dim)
                index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
                # Seeded k-means on a sample of 39 points per list, 10 iterations: what the
                # benchmark measured (a full 25-iteration k-means on 500k points takes minutes).
                index.cp.seed = seed
                index.cp.niter = IVF_NITER
                index.cp.max_points_per_centroid = IVF_MIN_POINTS_PER_LIST
                index.nprobe = ivf_nprobe(nlist)
                with faiss_threads(faiss, threads):
                    index.train(arr)
                    index.add(arr)
                params = {"nlist": nlist, "nprobe": index.nprobe, "seed": seed}
        meta = VocabMeta(
            model=model,
            model_ref=model_ref,
            dimension=dim,
            kind=chosen,
            count=n,
            source=source,
            params=params,
            built_seconds=round(time.perf_counter() - start, 3),
            faiss_version=version,
            texts=texts,
        )
        return cls(words, meta, index, arr)

    # -- properties -------------------------------------------------------------------------

    @property
    def kind(self) -> IndexKind:
        return self.meta.kind

    @property
    def model(self) -> str:
        return self.meta.model

    @property
    def dimension(self) -> int:
        return self.meta.dimension

    def __len__(self) -> int:
        return len(self.words)

    @property
    def vectors(self) -> NDArray[np.float32]:
        """All vectors, (count, dimension), in word order (rebuilt from FAISS after ``load``)."""
        if self._vectors is None:
            index = self._index
            if self.kind == "ivf":
                import_faiss().extract_index_ivf(index).make_direct_map()
            self._vectors = np.ascontiguousarray(index.reconstruct_n(0, index.ntotal), np.float32)
        return self._vectors

    def position(self, word: str) -> int | None:
        """Row of ``word``: an exact match, else the first that differs only in case; else None."""
        if self._position is None:
            self._index_words()
        assert self._position is not None
        pos = self._position.get(word)
        if pos is None:
            rows = self.positions(word)
            pos = rows[0] if rows else None
        return pos

    def positions(self, word: str) -> list[int]:
        """Every row whose word equals ``word`` ignoring case."""
        if self._folded is None:
            self._index_words()
        assert self._folded is not None
        return self._folded.get(word.casefold(), [])

    def _index_words(self) -> None:
        self._position = {w: i for i, w in enumerate(self.words)}
        folded: dict[str, list[int]] = {}
        for i, w in enumerate(self.words):
            folded.setdefault(w.casefold(), []).append(i)
        self._folded = folded

    def set_search_params(self, *, ef_search: int | None = None, nprobe: int | None = None) -> None:
        """Speed/recall knobs: efSearch of an HNSW index, nprobe of an IVF index."""
        if ef_search is not None and self.kind == "hnsw":
            self._index.hnsw.efSearch = int(ef_search)
            self.meta.params["efSearch"] = int(ef_search)
        if nprobe is not None and self.kind == "ivf":
            self._index.nprobe = int(nprobe)
            self.meta.params["nprobe"] = int(nprobe)

    # -- searching --------------------------------------------------------------------------

    def search(self, query_vectors: Any, k: int) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        """The ``k`` rows with the largest inner product with each query, best first.

        Returns ``(scores, indices)``, each of shape (queries, min(k, count)). An approximate
        index (hnsw, ivf) may find fewer than k: the missing places hold index -1.
        """
        queries = _unit_rows(query_vectors, self.dimension)
        k = min(int(k), len(self.words))
        if k < 1:
            raise InvalidInput("k must be at least 1")
        if self._index is not None:
            scores, indices = self._index.search(queries, k)
            return scores.astype(np.float32, copy=False), indices.astype(np.int64, copy=False)
        return exact_top_k(self.vectors, queries, k)

    # -- growing ----------------------------------------------------------------------------

    def add(self, words: Sequence[str], vectors: Any) -> int:
        """Append the words (with their vectors) not already present, ignoring case.

        For adding a game's candidates to an open vocabulary. Returns how many were added.
        """
        arr = _normalised(_unit_rows(vectors, self.dimension))
        if arr.shape[0] != len(words):
            raise InvalidInput(f"{len(words)} words but {arr.shape[0]} vectors")
        keep: dict[str, int] = {}
        for i, word in enumerate(words):
            if self.position(word) is None:
                keep.setdefault(word.casefold(), i)
        if not keep:
            return 0
        rows = list(keep.values())
        new_words = _check_words([words[i] for i in rows])
        new = arr[rows]
        if self._index is not None:
            self._index.add(new)
            if self._vectors is not None:
                self._vectors = np.concatenate([self._vectors, new])
        else:
            self._vectors = np.concatenate([self.vectors, new])
        self.words.extend(new_words)
        self.meta.count = len(self.words)
        self._position = self._folded = None
        return len(new_words)

    # -- disk -------------------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write the index to ``directory``, replacing an older index there only on success."""
        target = Path(directory).expanduser()
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            (tmp / "words.txt").write_text("".join(w + "\n" for w in self.words), "utf-8")
            if self._index is not None:
                import_faiss().write_index(self._index, str(tmp / "index.faiss"))
            else:
                np.save(tmp / "vectors.npy", self.vectors)
            (tmp / "meta.json").write_text(self.meta.model_dump_json(indent=2) + "\n", "utf-8")
            if target.exists():
                if not (target / "meta.json").is_file():
                    raise InvalidInput(
                        f"{target}: exists and is not a vocabulary index; choose another folder"
                    )
                shutil.rmtree(target)
            tmp.rename(target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return target

    @classmethod
    def load(
        cls,
        directory: str | Path,
        *,
        encoder: Any | None = None,
        model: str | None = None,
        dimension: int | None = None,
    ) -> VectorIndex:
        """Read an index written by ``save``.

        With ``encoder`` (or ``model`` / ``dimension``), check that the index was built with
        the same model: vectors of another model live in another space and would give
        meaningless similarities. Raises ``InvalidInput`` when they differ or the folder is
        not an index, ``BackendUnavailable`` when FAISS is missing.
        """
        path = Path(directory).expanduser()
        meta = read_meta(path)
        if encoder is not None:
            model = model or encoder.name
            dimension = dimension or encoder.dimension
        if model is not None and model != meta.model:
            raise InvalidInput(
                f"{path}: this vocabulary index was built with the model {meta.model!r}, but "
                f"the encoder in use is {model!r}; use --model {meta.model_ref or meta.model} "
                f"or rebuild it with `leakage vocab build --model {model} --out {path}`"
            )
        if dimension is not None and dimension != meta.dimension:
            raise InvalidInput(
                f"{path}: the index holds {meta.dimension}-dimensional vectors but the encoder "
                f"makes {dimension}-dimensional ones; rebuild it with `leakage vocab build`"
            )
        # split("\n"), not splitlines(): a word may hold U+2028 and other line breaks.
        words = (path / "words.txt").read_text("utf-8").split("\n")[:-1]
        vectors = None
        index = None
        if meta.kind == "numpy":
            vectors = np.load(path / "vectors.npy")
            total, dim = vectors.shape
        else:
            faiss = import_faiss()
            try:
                index = faiss.read_index(str(path / "index.faiss"))
            except RuntimeError as err:
                raise InvalidInput(f"{path / 'index.faiss'}: unreadable FAISS index") from err
            total, dim = index.ntotal, index.d
        if total != len(words) or total != meta.count or dim != meta.dimension:
            raise InvalidInput(
                f"{path}: inconsistent index ({len(words)} words, {total} vectors of dimension "
                f"{dim}, metadata says {meta.count} x {meta.dimension}); rebuild it"
            )
        return cls(words, meta, index, vectors)


def read_meta(directory: str | Path) -> VocabMeta:
    """The metadata of an index directory; ``InvalidInput`` when it is not one."""
    path = Path(directory).expanduser()
    meta_file = path / "meta.json"
    hint = "build one with `leakage vocab build --out DIR`"
    if not path.is_dir():
        raise InvalidInput(f"{path}: no vocabulary index here (not a folder); {hint}")
    data_file = "vectors.npy" if "numpy" in _peek_kind(meta_file) else "index.faiss"
    missing = [n for n in ("meta.json", "words.txt", data_file) if not (path / n).is_file()]
    if missing:
        raise InvalidInput(f"{path}: not a vocabulary index (missing {', '.join(missing)}); {hint}")
    try:
        return VocabMeta.model_validate_json(meta_file.read_bytes())
    except ValidationError as err:
        where, msg = validation_problems(err, dotted=True)[0]
        raise InvalidInput(f"{meta_file}: {where or '(root)'}: {msg}; rebuild the index") from err


def _peek_kind(meta_file: Path) -> str:
    try:
        return str(json.loads(meta_file.read_bytes()).get("kind", ""))
    except (OSError, ValueError, AttributeError):
        return ""


def exact_top_k(
    vectors: NDArray[np.float32], queries: NDArray[np.float32], k: int
) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
    """Exact top-k by inner product: one matrix product, ``argpartition``, sort of k."""
    scores = queries @ vectors.T  # (queries, n)
    k = min(k, scores.shape[1])
    if k < scores.shape[1]:
        part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    else:
        part = np.broadcast_to(np.arange(scores.shape[1]), scores.shape).copy()
    top = np.take_along_axis(scores, part, axis=1)
    order = np.argsort(-top, axis=1, kind="stable")
    return (
        np.take_along_axis(top, order, axis=1).astype(np.float32, copy=False),
        np.take_along_axis(part, order, axis=1).astype(np.int64, copy=False),
    )
