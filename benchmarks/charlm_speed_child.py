"""One training run of `charlm_speed.py`, in its own process: `python charlm_speed_child.py SPEC.json`.

SPEC names the trainer (`flair` or `flairsuite`) and everything it needs. The Flair run never
ends by itself: it writes `started.json` (the wall-clock time `t0` just before
`LanguageModelTrainer.train` is called) and `events.jsonl` (one line per finished validation and
per new best model, seconds since `t0`), and the parent kills it when the budget is spent.
"""

import json
import logging
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

from flairsuite.charlm.run import train_direction
from flairsuite.charlm.settings import Hyper
from flairsuite.files.atomic import atomic_file, write_json
from flairsuite.rawtext.prepare import PreparedCorpus, char_dictionary
from flairsuite.training import Budget


class EventLog(logging.Handler):
    """Times Flair's log lines: each finished validation (numbered) and each new best model saved."""

    def __init__(self, path: Path, t0: float) -> None:
        super().__init__()
        self.sink = path.open("a", encoding="utf-8")
        self.t0 = t0
        self.validations = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("best split so far"):  # logged right after best-lm.pt is saved
            event = {"event": "best"}
        elif message.startswith("best loss so far"):  # logged after every split's validation
            self.validations += 1
            event = {"event": "validated", "splits": self.validations}
        else:
            return
        self.sink.write(json.dumps({**event, "seconds": round(time.time() - self.t0, 3)}) + "\n")
        self.sink.flush()


def atomic_language_model_saves() -> None:
    """Make `LanguageModel.save` write through a temporary file, so a kill never leaves half a best-lm.pt."""
    from flair.models import LanguageModel

    plain_save = LanguageModel.save

    def save(self: LanguageModel, file: Any) -> None:
        with atomic_file(Path(file)) as temp:
            plain_save(self, temp)

    LanguageModel.save = save


def train_flair(spec: dict[str, Any], hyper: Hyper) -> None:
    """Plain Flair: TextCorpus over split files, LanguageModelTrainer.train with Flair's defaults otherwise."""
    from flair.models import LanguageModel
    from flair.trainers.language_model_trainer import LanguageModelTrainer, TextCorpus

    out = Path(spec["out"])
    dictionary = char_dictionary(PreparedCorpus(Path(spec["prepared"])).chars)
    model = LanguageModel(
        dictionary,
        is_forward_lm=True,
        hidden_size=hyper.hidden_size,
        nlayers=hyper.nlayers,
        embedding_size=hyper.embedding_size,
        dropout=hyper.dropout,
    )
    corpus = TextCorpus(Path(spec["flair_corpus"]), dictionary, forward=True, character_level=True)
    trainer = LanguageModelTrainer(model, corpus)
    atomic_language_model_saves()
    t0 = time.time()
    logging.getLogger("flair").addHandler(EventLog(out / "events.jsonl", t0))
    write_json(out / "started.json", {"t0": t0})
    trainer.train(
        out,
        sequence_length=hyper.sequence_length,
        learning_rate=hyper.learning_rate,
        mini_batch_size=hyper.batch_size,
        anneal_factor=hyper.anneal_factor,
        patience=hyper.patience,
        clip=hyper.clip,
        max_epochs=1000,
    )


def train_flairsuite(spec: dict[str, Any], hyper: Hyper) -> None:
    """flairsuite's `train_direction` (forward), time-boxed by its own clock; writes summary.json."""
    prepared = Path(spec["prepared"])
    corpus = PreparedCorpus(prepared, json.loads((prepared / "meta.json").read_text(encoding="utf-8")))
    budget = Budget(max_hours=spec["budget"] / 3600)
    train_direction(corpus, Path(spec["out"]), hyper, True, budget, resume=False, force=True, seed=spec["seed"])


def main(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    torch.set_num_threads(spec["threads"])
    torch.manual_seed(spec["seed"])
    random.seed(spec["seed"])
    hyper = Hyper(**spec["hyper"])
    if spec["trainer"] == "flair":
        train_flair(spec, hyper)
    else:
        train_flairsuite(spec, hyper)


if __name__ == "__main__":
    main(sys.argv[1])
