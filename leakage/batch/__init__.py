"""Batch scoring at scale: many transcripts in, a Parquet step table and reports out.

``run_batch(BatchJob(...))`` reads files, directories and globs of JSON / JSONL / Parquet
(gzip too), scores them in parallel (a process pool on this machine, or Ray), and writes a
results directory that a killed run can resume without losing or repeating a game
(``leakage.batch._output`` describes the commit protocol). Importing this package imports
neither pyarrow nor Ray; writing and the Ray engine do.
"""

from leakage.batch._difficulty import load_difficulty
from leakage.batch._manifest import BATCH_FORMAT
from leakage.batch._rows import COLUMNS, STEPS_FORMAT, steps_schema
from leakage.batch._runner import BatchJob, BatchStats, run_batch
from leakage.transcripts._files import RawRecord, expand_inputs, iter_records, to_transcript

__all__ = [
    "BATCH_FORMAT",
    "COLUMNS",
    "STEPS_FORMAT",
    "BatchJob",
    "BatchStats",
    "RawRecord",
    "expand_inputs",
    "iter_records",
    "load_difficulty",
    "run_batch",
    "steps_schema",
    "to_transcript",
]
