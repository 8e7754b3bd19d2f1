"""How much a pre-trained small BERT uses word order: its MLM accuracy on the valid split of its pre-training corpus,
with the masks its training scored there, once in order and once with the words of every sample shuffled.

A word's pieces stay together and in order, and a mask moves with its token, so both passes predict the same tokens
from the same words; only their order differs. A model still on the bag-of-words plateau of early MLM training
predicts from which words occur, not from where, and scores about the same both ways; one that has learnt to use
positions loses accuracy when the order is gone. In order, the probe reproduces the trainer's validation (the
`valid_accuracy` of the history point whose model was kept). `train-bert` runs it on every MLM model it finishes
(`word_order` in summary.json); `experiments/bert_order_probe.py` prints it for models trained before that.
"""

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from flairsuite.bert.data import PackedSamples, TokenizedCorpus, data_key
from flairsuite.bert.masking import IGNORE, MaskingRule, training_batch
from flairsuite.bert.registration import register
from flairsuite.bert.trainer import PretrainingPass
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import bert_data_dir
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file
from flairsuite.settings_schema import FLAG, INTEGER, POSITIVE_INTEGER, TEXT

# what the probe reads from a train-bert summary.json
PROBED_VALUES = {
    "model": TEXT, "settings.objective": TEXT, "settings.wwm": FLAG, "settings.seq_len": POSITIVE_INTEGER,
    "settings.batch_size": POSITIVE_INTEGER, "settings.valid_samples": POSITIVE_INTEGER, "data.prepared": TEXT,
    "data.vocab_size": POSITIVE_INTEGER, "corpus.config.seed": INTEGER,
}


@dataclass(frozen=True)
class OrderProbe:
    """MLM accuracy of one model in order and with shuffled words, over `masked` positions of `samples` samples."""

    in_order: float
    shuffled: float
    masked: int
    samples: int


def word_order(ids: np.ndarray, starts_word: np.ndarray, length: int, rng: np.random.Generator) -> np.ndarray:
    """A permutation of the positions 0..length-1 of one sequence `[CLS] ... [SEP]`: both markers in place, the whole
    words between them (a word: a piece that starts one and the continuation pieces after it) in a random order."""
    inner = np.arange(1, length - 1)
    starts = inner[starts_word[ids[inner]]]
    if len(starts) == 0 or starts[0] != 1:  # a sample that opens inside a cut word: its first pieces are a word
        starts = np.concatenate([[1], starts])
    bounds = np.append(starts, length - 1)
    words = [np.arange(start, end) for start, end in zip(bounds[:-1], bounds[1:])]
    shuffled = [words[i] for i in rng.permutation(len(words))]
    return np.concatenate([[0], *shuffled, [length - 1]])


def shuffle_words(batch: dict[str, torch.Tensor], starts_word: np.ndarray, rng: np.random.Generator) -> dict[str, torch.Tensor]:
    """`batch` (of `masking.training_batch`) with the words of every row shuffled; inputs and labels move together."""
    inputs, labels = batch["input_ids"].numpy().copy(), batch["labels"].numpy().copy()
    for row in range(len(inputs)):
        length = int(batch["attention_mask"][row].sum())
        original = np.where(labels[row] != IGNORE, labels[row], inputs[row])  # the text before masking
        order = word_order(original, starts_word, length, rng)
        inputs[row, :length], labels[row, :length] = inputs[row, order], labels[row, order]
    return {**batch, "input_ids": torch.from_numpy(inputs), "labels": torch.from_numpy(labels)}


def correct_and_masked(forward: PretrainingPass, batch: dict[str, torch.Tensor]) -> tuple[int, int]:
    device = next(forward.parameters()).device
    batch = {name: tensor.to(device) for name, tensor in batch.items()}
    chosen = batch["labels"] != IGNORE
    logits, _ = forward(batch, chosen)
    targets = batch["labels"][chosen]
    return int((logits.argmax(-1) == targets).sum()), int(targets.numel())


def order_accuracies(forward: PretrainingPass, samples: PackedSamples, rule: MaskingRule, batch_size: int, size: int, seed: int = 0) -> OrderProbe:
    """The probe of an MLM model (`forward`: its pre-training pass) on the first `size` of `samples`, batched as its
    trainer validates; `seed` draws the word orders. Float32, in eval mode."""
    was_training = forward.training
    forward.eval()
    rng = np.random.default_rng(seed)
    in_order = shuffled = masked = 0
    with torch.no_grad():
        for start in range(0, size, batch_size):
            batch = training_batch(samples, list(range(start, min(start + batch_size, size))), 0, rule)
            correct, count = correct_and_masked(forward, batch)
            in_order, masked = in_order + correct, masked + count
            shuffled += correct_and_masked(forward, shuffle_words(batch, samples.word_start, rng))[0]
    forward.train(was_training)
    return OrderProbe(in_order / max(masked, 1), shuffled / max(masked, 1), masked, size)


def verdict(probe: OrderProbe) -> str:
    """The report line of a probe, with what a drop under one point means."""
    line = (f"word order: valid MLM accuracy {100 * probe.in_order:.2f} % in order, {100 * probe.shuffled:.2f} % with each "
            f"sample's words shuffled ({probe.masked:,} masked tokens)")
    if probe.in_order - probe.shuffled < 0.01:
        line += ("; the model does not use word order yet (the bag-of-words plateau of early MLM training): train longer "
                 "(relative positions left it sooner on the German text, results/README.md)")
    return line


def valid_samples(summary: dict, rule: MaskingRule) -> PackedSamples:
    """The valid samples the model was scored on: its tokenized pre-training corpus, found in this home's cache."""
    folder = bert_data_dir() / data_key(Path(summary["data"]["prepared"]).name, summary["data"]["vocab_size"])
    if not (folder / "meta.json").is_file():
        raise FlairsuiteError(f"{folder}: the tokenized pre-training corpus of {summary['model']} is not here "
                              "(run the probe where the model was trained, or train-bert once more on the same corpus to rebuild it)")
    return TokenizedCorpus(folder, json.loads((folder / "meta.json").read_text(encoding="utf-8"))).samples("valid", rule.content)


def probe_order(model_folder: Path, seed: int = 0) -> OrderProbe:
    """The probe of the trained model in `model_folder` (a `train-bert` folder with its summary.json); `seed` draws the
    word orders."""
    summary_path = model_folder / SUMMARY_FILE
    if not summary_path.is_file():
        raise FlairsuiteError(f"{summary_path}: missing (not a finished train-bert model folder)")
    summary = read_summary_file(summary_path, PROBED_VALUES, kind="a train-bert summary")
    settings = summary["settings"]
    if settings["objective"] != "mlm":
        raise FlairsuiteError(f"{model_folder}: objective {settings['objective']}; the probe reads MLM-only models")
    rule = MaskingRule(settings["objective"], settings["wwm"], summary["data"]["vocab_size"], settings["seq_len"], summary["corpus"]["config"]["seed"])
    samples = valid_samples(summary, rule)
    register()
    from transformers import AutoModelForMaskedLM

    forward = PretrainingPass(AutoModelForMaskedLM.from_pretrained(model_folder), pairs=False)
    return order_accuracies(forward, samples, rule, settings["batch_size"], min(settings["valid_samples"], len(samples)), seed)
