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

from pathlib import Path

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.grid import Run
from flairsuite.experiments.identity import run_fingerprint
from flairsuite.results.metrics_file import read_metrics_json, write_metrics


def adopt_renamed(run: Run, files: list[Path], run_digest: str, artifacts: list[str]) -> bool:
    """Whether every metrics file in `files` is `run`, today or under older embedding names; if so, rewrite the older ones.

    `run_digest`: the run's fingerprint today; `artifacts`: the digests of its embedding files, in stack
    order. A file already under today's fingerprint (a rewrite cut short between the Entity-Fix
    variants) counts as adopted, so a kill never turns a finished run stale.
    """
    renamed = []
    for path in files:
        try:
            metrics = read_metrics_json(path)
        except FlairsuiteError:
            return False
        if metrics.get("fingerprint") == run_digest:
            continue
        old = metrics.get("embedding_specs")
        if not isinstance(old, list) or len(old) != len(run.embedding_specs) or old == list(run.embedding_specs):
            return False
        if run_fingerprint(run, artifacts, old) != metrics.get("fingerprint"):
            return False
        renamed.append((path, metrics))
    for path, metrics in renamed:
        names = dict(zip(metrics["embedding_specs"], run.embedding_specs))
        metrics["embedding_specs"], metrics["fingerprint"] = list(run.embedding_specs), run_digest
        for key in ("artifact_digests", "artifact_summaries"):
            if isinstance(metrics.get(key), dict):
                metrics[key] = {names.get(spec, spec): value for spec, value in metrics[key].items()}
        write_metrics(path, metrics)  # atomic, file by file
    return bool(renamed)
