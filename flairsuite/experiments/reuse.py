"""Runs finished under another experiment: copied, not trained again.

Experiments overlap: Table 8's `proposed+word` BiLSTM-CRF on Sturm is also a cell of Table 3. A
run's fingerprint (`run_fingerprint`: its `run_record` and its embedding files' digests) does not
hold the experiment's name, so a run folder of the same id below another experiment, whose
fingerprint is this run's, trained exactly this model. The Entity-Fix variants are part of the
record but not of the training (they re-decode the trained model), so a source that decoded a
superset of the variants this run asks for serves too. Each variant's metrics file is copied with
this experiment's name and fingerprint and a `copied_from` note; the saved model and predictions come along.
"""

import itertools
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.grid import Run
from flairsuite.experiments.identity import run_fingerprint
from flairsuite.files.atomic import atomic_file
from flairsuite.results.metrics_file import METRICS_FILE, read_metrics_json, variant_metrics_file, write_metrics


def _read(path: Path) -> Optional[dict[str, Any]]:
    try:
        data = read_metrics_json(path)
    except FlairsuiteError:
        return None
    return data if isinstance(data, dict) else None


def same_run_elsewhere(run: Run, results: Path, artifacts: list[str]) -> Optional[tuple[Path, dict[bool, dict[str, Any]]]]:
    """A run folder below another experiment in `results` that trained exactly `run`, with the metrics of each variant `run` needs.

    `artifacts`: the digests of the run's embedding files, in stack order.
    """
    own = results / run.experiment / run.run_id
    for source in sorted(path for path in results.glob(f"*/{run.run_id}") if path != own and path.is_dir()):
        found = {fix: _read(variant_metrics_file(source, fix)) for fix in (False, True)}
        present = tuple(fix for fix, metrics in found.items() if metrics is not None)
        if not present or not set(run.entity_fix) <= set(present):
            continue
        recorded = {metrics.get("fingerprint") for metrics in found.values() if metrics is not None}
        orders = itertools.permutations(present)  # the source experiment's entity_fix list, in its file's order
        if len(recorded) == 1 and any(run_fingerprint(replace(run, entity_fix=order), artifacts) in recorded for order in orders):
            return source, {fix: found[fix] for fix in run.entity_fix}
    return None


def copy_run(run: Run, out: Path, run_digest: str, source: Path, variants: dict[bool, dict[str, Any]]) -> None:
    """Copy the run folder `source` (model, predictions) to `out`/<run id> and write each variant's metrics as this experiment's.

    Every file is written atomically and the metrics last, so a kill midway leaves an unfinished run that is copied again.
    """
    target = out / run.run_id
    for path in source.iterdir():  # the model and predictions; not the lock file or a leftover temporary (hidden)
        if path.is_file() and path.name != METRICS_FILE and not path.name.startswith("."):
            with atomic_file(target / path.name) as temp:
                shutil.copy2(path, temp)
    origin = source.relative_to(out.parent).as_posix()  # <experiment>/<run id>
    for fix, metrics in variants.items():
        write_metrics(variant_metrics_file(target, fix), {**metrics, "experiment": run.experiment, "fingerprint": run_digest, "copied_from": origin})
