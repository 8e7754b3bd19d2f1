"""Which reference tables exist: the experiments under a results folder, per language and corpus.

Read from the `metrics.json` files' `experiment` and `corpus` keys only (a file it cannot read is
left out: a listing never fails on one broken run); `flairsuite corpora list` prints it.
"""

import json
from pathlib import Path

from flairsuite.corpora.registry import dataset, names

METRICS_FILE = "metrics.json"


def experiments_by_language(results: Path) -> dict[str, dict[str, list[str]]]:
    """language -> experiment -> the corpora it has finished runs on (registered datasets; others under 'own')."""
    known = set(names())
    found: dict[str, dict[str, set[str]]] = {}
    for path in sorted(results.rglob(METRICS_FILE)) if results.is_dir() else []:
        try:
            metrics = json.loads(path.read_text(encoding="utf-8"))
            experiment, corpus = str(metrics["experiment"]), str(metrics["corpus"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        language = dataset(corpus).language if corpus in known else "own"
        found.setdefault(language, {}).setdefault(experiment, set()).add(corpus)
    return {language: {name: sorted(corpora) for name, corpora in sorted(experiments.items())} for language, experiments in sorted(found.items())}


def inventory_lines(results: Path, languages: list[str]) -> list[str]:
    """`corpora list`'s closing lines: per language, the experiments with runs and their corpora."""
    found = experiments_by_language(results)
    lines = [f"reference tables in {results} (print one with `flairsuite results {results.name}/NAME`):"]
    for language in sorted(set(languages) | set(found)):
        experiments = found.get(language, {})
        listed = ", ".join(f"{name} ({' '.join(corpora)})" for name, corpora in experiments.items())
        lines.append(f"  {language}: {listed or 'none yet'}")
    return lines
