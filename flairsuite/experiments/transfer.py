"""Training a transfer run (`transfer:` block, `transfer_settings.py`): the tagger of the grid corpus (the target) trained
on other labelled corpora first (sequential) or beside its own train split (joint).

- **Sources.** Each source's splits are read alone (GermEval's dev and test without its train: `GridData.source_splits`),
  their entity types mapped to the target's (`tagging.type_mapping`: a type not in `types` becomes `O`), and served
  from the embedding cache as every corpus is (`GridData.array`: a source is embedded once per embedding, whatever the
  grid). The tagger's dictionary is the target's. A mapped source type that no source sentence holds is a one-line error
  before any training.
- **Joint.** One training on the sources and the target's train split together (`JoinedFeatures`), the best epoch
  chosen on the target's dev, with the run's settings and its one checkpoint.
- **Sequential.** The source phase trains on the sources alone with `source_settings` (the run's, then
  `transfer.source_train`), the best epoch chosen on the target's dev, so the choice is still the target's; its own
  checkpoint (`source-checkpoint.pt`) resumes it. Its result (weights and progress) is written atomically to
  `source-phase.pt`, whose presence records that the run is in its target phase: a killed run continues there. The
  target phase then trains on the target's train split from those weights with a fresh optimizer and schedule and the
  run's own checkpoint, exactly as a run without transfer does from its initial weights.

`metrics.json` of a transfer run holds the transfer record of its fingerprint (`transfer`: mode, sources, mapping,
source settings) and what it read and did (`transfer_details`: each source's splits, sentences, tokens and entities
kept and dropped per source type, the sentences trained on, and for sequential runs the source phase's epochs, best
epoch, dev score, history and seconds). The runner removes `PHASE_FILES` with the run's checkpoint once its metrics are written.
"""

import logging
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional

import torch

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.grid import Run
from flairsuite.experiments.run_data import GridData
from flairsuite.experiments.transfer_settings import JOINT, KEY, TransferRun
from flairsuite.files import checkpoint as checkpoints
from flairsuite.tagging.cache import frozen
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.joined_features import JoinedFeatures
from flairsuite.tagging.tagger_training import TaggerProgress, train_tagger, trained_state
from flairsuite.tagging.type_mapping import map_types

log = logging.getLogger("flairsuite")

SOURCE_CHECKPOINT_FILE = "source-checkpoint.pt"  # the source phase's epoch checkpoint
SOURCE_PHASE_FILE = "source-phase.pt"  # the source phase's result: its presence means the run is in its target phase
PHASE_FILES = (SOURCE_CHECKPOINT_FILE, SOURCE_PHASE_FILE)


@dataclass(frozen=True)
class Sources:
    """The sources of a transfer run, mapped and embedded: one SplitFeatures per source split, and what they hold."""

    parts: list[SplitFeatures]
    details: dict[str, Any]


def _counts(counter: Counter) -> dict[str, int]:
    return dict(sorted(counter.items()))


def source_features(run: Run, modules: list[torch.nn.Module], data: GridData) -> Sources:
    """Every split of every source of `run`, its types mapped, under the run's stack (cached arrays, live modules)."""
    transfer: TransferRun = run.transfer  # type: ignore[assignment]
    mapping = transfer.transfer.mapping
    parts, listed = [], []
    kept_all: Counter = Counter()
    dropped_all: Counter = Counter()
    for source in transfer.transfer.sources:
        splits = data.source_splits(source.corpus, source.splits)
        kept: Counter = Counter()
        dropped: Counter = Counter()
        for name in source.splits:
            mapped = map_types(splits[name], mapping)
            kept.update(mapped.kept)
            dropped.update(mapped.dropped)
            vectors = [data.array(source.corpus, spec, name) if frozen(spec, run.fine_tune) else module
                       for spec, module in zip(run.embedding_specs, modules)]
            parts.append(SplitFeatures(mapped.split, vectors))
        chosen = [splits[name] for name in source.splits]
        listed.append({"source": source.label, "corpus": source.corpus.name, "splits": list(source.splits),
                       "sentences": sum(len(split) for split in chosen), "tokens": sum(split.tokens for split in chosen),
                       "entities_kept": _counts(kept), "entities_dropped": _counts(dropped)})
        kept_all.update(kept)
        dropped_all.update(dropped)
    absent = [source_type for source_type in mapping if not kept_all[source_type]]
    if absent:
        read = ", ".join(source["source"] for source in listed)
        raise FlairsuiteError(f"{run.run_id}: {KEY}.types: no entity of type '{absent[0]}' in the sources read ({read}): "
                              "remove it from transfer.types or add a source that has it")
    details = {"sources": listed, "source_sentences": sum(len(part) for part in parts),
               "entities_kept": _counts(kept_all), "entities_dropped": _counts(dropped_all)}
    for source in listed:
        log.info(f"{run.run_id}: source {source['source']}: {source['sentences']} sentences, entities kept {source['entities_kept']}, "
                 f"dropped {source['entities_dropped']}")
    return Sources(parts, details)


def phase_record(progress: TaggerProgress) -> dict[str, Any]:
    """The source phase as metrics.json holds it."""
    return {"epochs": progress.epoch, "best_epoch": progress.best_epoch, "best_dev_score": progress.best_score,
            "history": progress.history, "seconds": round(progress.seconds, 1)}


def finished_source_phase(path: Path, key: str) -> Optional[dict[str, Any]]:
    """The source phase's result saved at `path` under `key` (the run's fingerprint), else None (none, or another run's)."""
    if not path.is_file():
        return None
    state = checkpoints.load(path)
    return state if state.get("key") == key else None


def train_with_transfer(run: Run, model: torch.nn.Module, modules: list[torch.nn.Module], data: GridData, train: SplitFeatures,
                        dev: SplitFeatures, run_dir: Path, checkpoint: Path, key: str) -> tuple[TaggerProgress, dict[str, Any]]:
    """Train `model` for the transfer run `run` (module docstring); the target training's progress (its `resumed_at` counting
    the seconds earlier processes spent on the run, both phases) and the run's `transfer_details`.

    `train`: the target's training split (train + dev with `train_with_dev`); `dev`: its dev split, which chooses the
    best epoch unless the settings train with dev; `checkpoint`: the run's checkpoint file; `key`: its fingerprint."""
    transfer: TransferRun = run.transfer  # type: ignore[assignment]
    sources = source_features(run, modules, data)
    task = run.corpus.task.name
    chooser = None if run.train_settings["train_with_dev"] else dev
    if transfer.mode == JOINT:
        joined = JoinedFeatures([*sources.parts, train])
        progress = train_tagger(model, joined, chooser, run.train_settings, run.seed, checkpoint, run.run_id, key=key, task=task)
        return progress, {"mode": transfer.mode, **sources.details, "training_sentences": len(joined)}
    settings = transfer.source_settings or run.train_settings
    phase_file = run_dir / SOURCE_PHASE_FILE
    saved = finished_source_phase(phase_file, key)
    if saved is None:
        source_progress = train_tagger(model, JoinedFeatures(sources.parts), None if settings["train_with_dev"] else dev, settings, run.seed,
                                       run_dir / SOURCE_CHECKPOINT_FILE, f"{run.run_id} sources", key=f"{key}:sources", task=task)
        checkpoints.save(phase_file, {"key": key, "model": trained_state(model), "progress": asdict(source_progress)})
        (run_dir / SOURCE_CHECKPOINT_FILE).unlink(missing_ok=True)
        earlier = source_progress.resumed_at  # seconds of the source phase spent by processes before this one
    else:
        model.load_state_dict(saved["model"], strict=False)
        source_progress = TaggerProgress(**saved["progress"])
        earlier = source_progress.seconds
        log.info(f"{run.run_id}: source phase finished before ({source_progress.epoch} epochs): continuing with the target phase")
    progress = train_tagger(model, train, chooser, run.train_settings, run.seed, checkpoint, run.run_id, key=key, task=task)
    progress.resumed_at += earlier
    return progress, {"mode": transfer.mode, **sources.details, "training_sentences": len(train), "source_phase": phase_record(source_progress)}
