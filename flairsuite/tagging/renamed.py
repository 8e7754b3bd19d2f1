"""Finished runs whose embedding files only moved to new names: kept, not retrained.

A run's fingerprint (`digest` of its `run_record` and of its embedding files' digests, grid.py)
holds the embedding specs by name. When a file moves to a new name with its bytes unchanged (the
released `charlm:de-forward` pair becomes `charlm:de-1h-forward` when a longer-trained pair takes
its name) and the experiment file follows, the fingerprint changes though the run computes exactly
what it did. Putting the names its metrics recorded back into today's run record, with today's
artifact digests, then reproduces the recorded fingerprint exactly; any other change (a setting, a
file's bytes, the order of the stack) does not. Such runs are adopted: their metrics files are
rewritten under the new names and fingerprint.
"""

import json
from pathlib import Path

from flairsuite.atomic import write_json
from flairsuite.experiments.config import Run, digest, run_record


def fingerprint_under(run: Run, specs: list[str], artifacts: list[str]) -> str:
    """The fingerprint `run` would have had with its embeddings named `specs` (same files: `artifacts`)."""
    return digest({**run_record(run), "embedding_specs": list(specs), "artifacts": artifacts})


def adopt_renamed(run: Run, files: list[Path], run_digest: str, artifacts: list[str]) -> bool:
    """Whether every metrics file in `files` is `run` under older embedding names; if so, rewrite them to today's names.

    `run_digest`: the run's fingerprint today; `artifacts`: the digests of its embedding files, in stack order.
    """
    records = []
    for path in files:
        try:
            metrics = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        old = metrics.get("embedding_specs")
        if not isinstance(old, list) or len(old) != len(run.embedding_specs) or old == list(run.embedding_specs):
            return False
        if fingerprint_under(run, old, artifacts) != metrics.get("fingerprint"):
            return False
        records.append(metrics)
    for path, metrics in zip(files, records):
        names = dict(zip(metrics["embedding_specs"], run.embedding_specs))
        metrics["embedding_specs"], metrics["fingerprint"] = list(run.embedding_specs), run_digest
        for key in ("artifact_digests", "artifact_summaries"):
            if isinstance(metrics.get(key), dict):
                metrics[key] = {names.get(spec, spec): value for spec, value in metrics[key].items()}
        write_json(path, metrics)
    return bool(records)
