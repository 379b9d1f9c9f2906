"""The Ray engine (``--engine ray``): the same job on a Ray cluster, or on Ray in local mode.

Ray Data spreads the input files over read tasks (``from_items``, one block per file), and
``flat_map`` reads each file with the same record readers as the local engine, each record
keeping its file and position, leaving out those the ledger has committed (on
``--resume``). Ray's own file reader (``read_binary_files``) is not used: it undoes gzip
itself and fails the whole dataset on one truncated file or one missing file, where the
record readers make that file an error line and the rest is scored. Then three stages,
each a ``map_batches``: CPU tasks parse batches of ``chunk_size`` records into the plain
values scoring needs (``Assembler.parse``); a pool of actors, each with the backend built
once (on a GPU of its own where there are GPUs, below), answers every question scoring
those games asks the backend (``_stages.answer``: likelihood rows, statement vectors); CPU
tasks compute the posteriors, step rows and reports from those answers (``_stages.replay``)
and put the chunk together. So the actors do only model work, and parsing and the
posterior engine never hold a GPU. Every batch comes back to the driver as one pickled
:class:`ChunkResult`, which the driver writes and commits as the local engine does: the
same Parquet schema, reports, errors and ledger.

**GPUs.** When the backend loads models and the device is ``auto`` or ``cuda``, each actor
asks Ray for one GPU (``num_gpus=1``: one model per GPU, Ray sets the actor's
``CUDA_VISIBLE_DEVICES``) wherever the cluster has GPUs, and the pool has one actor per GPU
unless ``--workers`` says otherwise; reading, parsing and posteriors stay on CPU tasks.
``--device cuda`` on a cluster without GPUs is ``DeviceUnavailable`` at once (an actor
asking for a GPU there would wait for ever), and ``cuda:N`` is refused: Ray, not the job,
picks an actor's GPU.

Ray is an optional extra (``pip install 'leakage[ray]'``), imported only here.
``address=None`` starts a local Ray with ``workers + 1`` CPUs (actors plus reading);
``address="auto"`` or ``ray://...`` joins a cluster, where the inputs, ``$LEAKAGE_HOME`` and,
for ``--resume``, the output directory must be readable at the same paths on every node.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import sqlite3
import warnings
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from leakage.batch._stages import Answers, answer, replay
from leakage.batch._worker import (
    Assembler,
    ChunkResult,
    Parsed,
    SafeScorer,
    Scorer,
    ScorerSpec,
    loads_models,
    tune_gc,
)
from leakage.errors import BackendUnavailable, DeviceUnavailable, InvalidInput, InvalidTranscript
from leakage.transcripts._files import RawRecord, iter_file


def _import_ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError:
        raise BackendUnavailable("--engine ray needs Ray: pip install 'leakage[ray]'") from None
    return ray


def _committed(ledger: Path | None, source: str) -> set[int]:
    if ledger is None or not ledger.is_file():
        return set()
    with sqlite3.connect(f"file:{ledger}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT c.record FROM committed c JOIN sources s ON s.id = c.source WHERE s.path = ?",
            (source,),
        )
        return {r for (r,) in rows}


def _explode(row: dict[str, Any], *, ledger: str | None) -> list[dict[str, Any]]:
    """A file row (its path) -> its records, as plain columns Arrow can carry."""
    path = Path(row["path"])
    done = _committed(Path(ledger) if ledger else None, str(path))
    out = []
    for rec in iter_file(path):
        if rec.record in done:
            continue
        payload, error = rec.payload, ""
        if isinstance(payload, InvalidInput):
            problems = payload.problems if isinstance(payload, InvalidTranscript) else []
            record = payload.record if isinstance(payload, InvalidTranscript) else None
            error = json.dumps({"problems": problems or [["", str(payload)]], "record": record})
            payload = ""
        elif not isinstance(payload, str):
            payload = json.dumps(payload, ensure_ascii=False)
        out.append(
            {
                "source": rec.source,
                "record": rec.record,
                "label": str(rec.label),
                "payload": payload,
                "error": error,
            }
        )
    return out


def _records(batch: dict[str, Any]) -> list[RawRecord]:
    """A batch of exploded rows back as the record readers' records."""
    records = []
    for source, record, label, payload, error in zip(
        batch["source"], batch["record"], batch["label"], batch["payload"], batch["error"],
        strict=True,
    ):  # fmt: skip
        item: Any = payload
        if error:
            doc = json.loads(error)
            problems = [tuple(p) for p in doc["problems"]]
            item = InvalidTranscript(problems, source=str(source), record=doc["record"])
        records.append(RawRecord(str(source), int(record), str(label), item))
    return records


def _parse(batch: dict[str, Any], *, spec: ScorerSpec) -> dict[str, Any]:
    """CPU stage: a chunk of records parsed into the plain values scoring needs."""
    import numpy as np

    parsed = Assembler(spec).parse(_records(batch))
    return {"parsed": np.array([pickle.dumps(parsed)], dtype=object)}


class _ModelActor:
    """The model stage, a Ray actor (on a GPU where there is one): one backend, built once,
    answering each parsed chunk's questions (``_stages.answer``); closed when the actor is
    let go (Ray Data drops its callable then, which runs ``__del__``)."""

    def __init__(self, spec: ScorerSpec) -> None:
        from leakage._runtime import prepare_model_runtime

        prepare_model_runtime()
        self.scorer = SafeScorer(spec)
        tune_gc()

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        out = []
        for blob in batch["parsed"]:
            parsed: Parsed = pickle.loads(blob)
            if self.scorer.scorer is None:
                answers = Answers(fatal=self.scorer.failed, pid=os.getpid())
            else:
                answers = answer(
                    self.scorer.scorer.backend, parsed.inputs,
                    record_errors=self.scorer.scorer.spec.record_errors,
                )  # fmt: skip
            out.append(pickle.dumps(answers))
        return {"parsed": batch["parsed"], "answers": np.array(out, dtype=object)}

    def __del__(self) -> None:
        scorer = getattr(self, "scorer", None)  # absent if __init__ failed
        if scorer is not None:
            scorer.close()


def _finish(batch: dict[str, Any], *, spec: ScorerSpec) -> dict[str, Any]:
    """CPU stage: the posteriors, step rows and reports of a chunk from the model stage's
    answers (``_stages.replay``), put together as the local engine does."""
    import numpy as np

    out = []
    for blob, answered in zip(batch["parsed"], batch["answers"], strict=True):
        parsed: Parsed = pickle.loads(blob)
        answers: Answers = pickle.loads(answered)
        if answers.fatal is not None:
            result = ChunkResult(keys=[], fatal=answers.fatal, pid=answers.pid)
        else:
            scorer = Scorer(spec, backend=replay(answers))  # type: ignore[arg-type]
            scored = scorer.score_inputs(parsed.inputs, parsed.report_contexts)
            scored.pid, scored.peak_rss_mb = answers.pid, answers.peak_rss_mb
            result = scorer.assembler.assemble(parsed, scored)
        out.append(pickle.dumps(result))
    return {"result": np.array(out, dtype=object)}


def gpu_plan(spec: ScorerSpec, cluster_gpus: float, workers: int | None) -> tuple[int, float]:
    """(actors, GPUs per actor) for a cluster with ``cluster_gpus`` GPUs: one actor per GPU
    (``workers`` if given) each holding one, when the backend loads models on ``auto`` or
    ``cuda``; else ``workers`` (default 1) actors on CPUs."""
    if spec.device.startswith("cuda:"):
        raise InvalidInput(
            f"--device {spec.device} with --engine ray: Ray assigns each actor its GPU; "
            "use --device cuda (or auto)"
        )
    gpus = int(cluster_gpus) if loads_models(spec.backend) else 0
    if spec.device == "cuda" and gpus == 0:
        raise DeviceUnavailable(
            "--device cuda was asked for, but the Ray cluster has no GPU "
            f"(ray.cluster_resources() GPU: {cluster_gpus:g}); device cpu or auto runs there"
        )
    if spec.device in ("auto", "cuda") and gpus > 0:
        return (workers or gpus), 1.0
    return (workers or 1), 0.0


def _env_vars() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith("LEAKAGE_")}


def ray_results(
    spec: ScorerSpec,
    files: list[Path],
    *,
    ledger: Path | None,
    workers: int | None,
    chunk_size: int,
    address: str | None = None,
) -> Iterator[ChunkResult]:
    """Score ``files`` on Ray; yields one :class:`ChunkResult` per batch as they finish.
    ``workers``: the actors (``None``: one per GPU where the models run on GPUs, else 1)."""
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        local = address is None
        ray.init(
            address=address,
            num_cpus=(workers or 1) + 1 if local else None,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
            runtime_env={"env_vars": _env_vars()} if local else None,
        )
        started = True
    # Ray Data logs every execution plan at INFO on standard error, over our progress bar.
    logging.getLogger("ray.data").setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            # Ray 2.60 warns about its own deprecated fields while building its default
            # DataContext (not about anything we set); pytest turns warnings into errors.
            warnings.filterwarnings(
                "ignore", category=DeprecationWarning, module=r"ray\.data\.context"
            )
            ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        actors, gpus_each = gpu_plan(spec, ray.cluster_resources().get("GPU", 0), workers)
        actor_spec = spec
        if gpus_each:  # the actor's GPU is cuda:0 under the CUDA_VISIBLE_DEVICES Ray sets
            from dataclasses import replace

            actor_spec = replace(spec, device="cuda")
        ds = ray.data.from_items(
            [{"path": str(f)} for f in files], override_num_blocks=max(1, len(files))
        )
        ds = ds.flat_map(partial(_explode, ledger=str(ledger) if ledger else None))
        ds = ds.map_batches(partial(_parse, spec=spec), batch_size=chunk_size, batch_format="numpy")
        ds = ds.map_batches(
            _ModelActor,
            fn_constructor_args=(actor_spec,),
            compute=ray.data.ActorPoolStrategy(size=actors),
            batch_size=1,
            batch_format="numpy",
            **({"num_gpus": gpus_each} if gpus_each else {}),
        )
        ds = ds.map_batches(partial(_finish, spec=spec), batch_size=1, batch_format="numpy")
        for row in ds.iter_rows():
            result: ChunkResult = pickle.loads(row["result"])
            yield result
            if result.fatal is not None:
                return
    finally:
        if started:
            ray.shutdown()
