"""Which reference tables exist: the experiments under a results folder, per language and corpus.

Read from the `metrics.json` files' `experiment` and `corpus` keys only (a file it cannot read is
left out: a listing never fails on one broken run); `flairsuite corpora list` prints it, with the
experiment files (`experiments/*.yaml`, their `name` and registered `corpora`) of each language that
have no runs yet.
"""

from pathlib import Path
from typing import Optional

from flairsuite.corpora.registry import dataset, names
from flairsuite.errors import FlairsuiteError
from flairsuite.files.yaml_file import read_yaml
from flairsuite.results.metrics_file import METRICS_FILE, read_metrics_json


def experiments_by_language(results: Path) -> dict[str, dict[str, list[str]]]:
    """language -> experiment -> the corpora it has finished runs on (registered datasets; others under 'own')."""
    known = set(names())
    found: dict[str, dict[str, set[str]]] = {}
    for path in sorted(results.rglob(METRICS_FILE)) if results.is_dir() else []:
        try:
            metrics = read_metrics_json(path)
            experiment, corpus = str(metrics["experiment"]), str(metrics["corpus"])
        except (FlairsuiteError, KeyError, TypeError):
            continue
        language = dataset(corpus).language if corpus in known else "own"
        found.setdefault(language, {}).setdefault(experiment, set()).add(corpus)
    return {language: {name: sorted(corpora) for name, corpora in sorted(experiments.items())} for language, experiments in sorted(found.items())}


def experiment_files_by_language(folder: Path) -> dict[str, dict[str, Path]]:
    """language -> experiment name -> its file, for the experiment files in `folder` (unreadable ones left out)."""
    known, found = set(names()), {}
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        try:
            data = read_yaml(path)
            name, corpora = str(data["name"]), list(data["corpora"])
        except (FlairsuiteError, KeyError, TypeError):
            continue
        for entry in corpora:
            corpus = entry.get("name") if isinstance(entry, dict) else entry
            if isinstance(corpus, str) and corpus in known:
                found.setdefault(dataset(corpus).language, {})[name] = path
    return found


def inventory_lines(results: Path, languages: list[str], experiments: Optional[Path] = None) -> list[str]:
    """`corpora list`'s closing lines: per language, the experiments with runs and their corpora, then the experiment
    files in `experiments` (a folder) of that language without runs."""
    found = experiments_by_language(results)
    files = experiment_files_by_language(experiments) if experiments is not None else {}
    lines = [f"reference tables in {results} (print one with `flairsuite results {results.name}/NAME`):"]
    for language in sorted(set(languages) | set(found)):
        run = found.get(language, {})
        listed = ", ".join(f"{name} ({' '.join(corpora)})" for name, corpora in run.items())
        waiting = sorted(f"{experiments.name}/{path.name}" for name, path in files.get(language, {}).items() if name not in run) if experiments else []
        lines.append(f"  {language}: {listed or 'none yet'}" + (f"; not run yet: {', '.join(waiting)}" if waiting else ""))
    return lines
