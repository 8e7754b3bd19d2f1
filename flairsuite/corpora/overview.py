"""The `corpora list` table: every registered dataset and what of it is present locally."""

from pathlib import Path

import pandas as pd

from flairsuite.corpora.registry import dataset, names


def _presence(entries: dict, spec, root: Path) -> str:
    present = [name for name, entry in entries.items() if spec.locate(entry, root)]
    missing = [name for name in entries if name not in present]
    text = " ".join(present) or "-"
    return f"{text} (missing: {' '.join(missing)})" if present and missing else text


def registry_table(root: Path) -> pd.DataFrame:
    """One row per dataset: name, language, task, types, license, splits (or sources) present under `root`."""
    rows = []
    for name in names():
        spec = dataset(name)
        rows.append(
            {
                "name": name,
                "lang": spec.language,
                "task": spec.task,
                "types": len(spec.output_types) if spec.types else "-",
                "license": spec.license,
                "present locally": _presence(spec.entries, spec, root),
            }
        )
    return pd.DataFrame(rows)
