"""Batch scoring at scale: many transcripts in, a Parquet step table and reports out.

``run_batch(BatchJob(...))`` reads files, directories and globs of JSON / JSONL / Parquet
(gzip too), scores them in parallel (a process pool on this machine, or Ray), and writes a
results directory that a killed run can resume without losing or repeating a game
(``leakage.batch._output`` describes the commit protocol). Importing this package imports
neither pyarrow nor Ray; writing and the Ray engine do.
"""

from leakage.batch._difficulty import load_difficulty
from leakage.batch._games import (
    GAME_COLUMN_NAMES,
    GAME_COLUMNS,
    GAMES_FORMAT,
    StoredReport,
    game_records,
    games_schema,
    report_steps,
)
from leakage.batch._manifest import BATCH_FORMAT
from leakage.batch._output import checkpoints, commit_steps, compact_steps
from leakage.batch._rows import (
    COLUMN_NAMES,
    COLUMNS,
    STEPS_FORMAT,
    StepColumns,
    StepNumbers,
    player_models,
    row_context,
    steps_schema,
)
from leakage.batch._runner import BatchJob, BatchStats, run_batch
from leakage.batch._worker import (
    ChunkResult,
    PrepareGame,
    RecordOutcome,
    fewer_collections,
    peak_rss_mb,
    report_json,
)
from leakage.transcripts import RawRecord, expand_inputs, iter_records, to_transcript

__all__ = [
    "BATCH_FORMAT",
    "COLUMNS",
    "COLUMN_NAMES",
    "GAMES_FORMAT",
    "GAME_COLUMNS",
    "GAME_COLUMN_NAMES",
    "STEPS_FORMAT",
    "BatchJob",
    "BatchStats",
    "ChunkResult",
    "PrepareGame",
    "RawRecord",
    "RecordOutcome",
    "StepColumns",
    "StepNumbers",
    "StoredReport",
    "checkpoints",
    "commit_steps",
    "compact_steps",
    "expand_inputs",
    "fewer_collections",
    "game_records",
    "games_schema",
    "iter_records",
    "load_difficulty",
    "peak_rss_mb",
    "player_models",
    "report_json",
    "report_steps",
    "row_context",
    "run_batch",
    "steps_schema",
    "to_transcript",
]
