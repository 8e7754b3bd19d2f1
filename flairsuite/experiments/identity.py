"""What a run computes, as plain data, and the fingerprints that decide whether a finished run still counts.

`run_record` is a run's settings as JSON-able data (recorded in metrics.json); `run_fingerprint` adds
its embedding files' digests, `fingerprint` covers a whole experiment (the record `tag` keeps beside
the results, so a changed file is noticed). Key order never counts: digests are of canonical JSON.
"""

import hashlib
import json
from typing import Any, Optional

from flairsuite.corpora.own import corpus_record
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.grid import Run, runs
from flairsuite.models.settings import TrainSettings


def run_record(run: Run) -> dict[str, Any]:
    """What a run does, as plain data: id, corpus, options, subsample, embedding specs, tagger, seed, settings.

    The training settings leave out those that cannot change the model (`TrainSettings.fingerprinted`: `dev_every`).
    A fine-tuned run adds `fine_tune: true` (frozen runs add nothing, so their fingerprints stay as
    they were); a transfer run adds `transfer` (its mode, sources, type mapping and source-phase settings:
    `TransferRun.record`; runs without transfer add nothing). An own corpus adds `corpus_files` (`own.corpus_record`: format, scheme, labels, file checksums,
    dev_fraction); registered corpora add nothing, so their fingerprints stay as they were.
    """
    record = {
        "run": run.run_id,
        "corpus": run.corpus.name,
        "corpus_options": run.corpus.options,
        "subsample": run.corpus.subsample,
        **({"dev_fraction": run.corpus.dev_fraction} if run.corpus.dev_fraction is not None and run.corpus.own is None else {}),
        "embedding_specs": list(run.embedding_specs),
        "tagger": run.tagger,
        "seed": run.seed,
        "train": TrainSettings.fingerprinted(run.train_settings),
        "entity_fix": list(run.entity_fix),
        **({"fine_tune": True} if run.fine_tune else {}),
        **({"transfer": run.transfer.record()} if run.transfer is not None else {}),
    }
    if run.corpus.own is not None:
        record["corpus_files"] = corpus_record(run.corpus.own)
    return record


def digest(data: Any) -> str:
    """sha256 of `data` as canonical JSON (sorted keys), so key order does not count."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run_fingerprint(run: Run, artifacts: list[str], specs: Optional[list[str]] = None) -> str:
    """sha256 of what one run computes: its `run_record` and its embedding files' digests (`artifacts`, stack order).

    `specs`: other names for the same embeddings (the fingerprint the run had under them).
    """
    record = run_record(run) if specs is None else {**run_record(run), "embedding_specs": list(specs)}
    return digest({**record, "artifacts": artifacts})


def fingerprint(config: ExperimentConfig) -> str:
    """sha256 of what the experiment's runs do (sorted, so the order of keys and list items does not count).

    Every run contributes its `run_record`, complete training settings included, so a change of a
    tagger default in the suite also changes the fingerprint.
    """
    records = sorted((run_record(run) for run in runs(config)), key=lambda record: record["run"])
    return digest({"name": config.name, "runs": records})
