"""Training inputs of the pre-training objectives: masked LM (by token or by whole word) and sentence pairs.

Everything random about a sample (which positions are masked, how, the NSP partner, the SOP swap)
comes from a generator seeded with (seed, epoch, sample index), never from a running random
state: a resumed run, or another rank of a distributed one, builds exactly the same inputs.

Masking as in BERT and the small-BERT paper (§3.1, §3.3): 15 % of the (non-special) tokens are
chosen for prediction; 80 % of them become [MASK], 10 % a random piece, 10 % stay. With whole-word
masking, whole words are chosen (in random order, each taken if it still fits in the 15 %), and
the 80/10/10 decision is made once per word, so all pieces of a word are treated alike. The loss
is taken on the chosen positions only (label -100 elsewhere).
"""

from dataclasses import dataclass

import numpy as np
import torch

from flairsuite.bert.data import PackedSamples
from flairsuite.bert.settings import SPECIAL_TOKENS
from flairsuite.bert.vocabulary import CLS, MASK, PAD, SEP

IGNORE = -100


@dataclass(frozen=True)
class MaskingRule:
    """How samples are turned into training inputs."""

    objective: str
    whole_words: bool
    vocab_size: int
    seq_len: int
    seed: int
    rate: float = 0.15
    mask_share: float = 0.8
    random_share: float = 0.1

    @property
    def pairs(self) -> bool:
        return self.objective != "mlm"

    @property
    def content(self) -> int:
        """Tokens of text per sample: the sequence minus [CLS] and one [SEP] (two for a pair)."""
        return self.seq_len - (3 if self.pairs else 2)


def sample_generator(seed: int, epoch: int, index: int) -> np.random.Generator:
    """The random generator of sample `index` in `epoch`."""
    return np.random.default_rng([seed, epoch, index])


def choose_units(word_start: np.ndarray, maskable: np.ndarray, rule: MaskingRule, rng: np.random.Generator) -> list[np.ndarray]:
    """The groups of positions chosen for prediction: single tokens, or the pieces of whole words."""
    candidates = np.flatnonzero(maskable)
    if len(candidates) == 0:
        return []
    wanted = max(1, round(rule.rate * len(candidates)))
    if not rule.whole_words:
        return [np.array([p]) for p in np.sort(rng.choice(candidates, size=wanted, replace=False))]
    words = np.split(candidates, np.flatnonzero(word_start[candidates][1:] | (np.diff(candidates) != 1)) + 1)
    chosen, total = [], 0
    for w in rng.permutation(len(words)):
        if total + len(words[w]) <= wanted:
            chosen.append(words[w])
            total += len(words[w])
        if total == wanted:
            break
    return chosen


def mask(ids: np.ndarray, word_start: np.ndarray, rule: MaskingRule, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(inputs, labels) of one sequence `ids` ([CLS] ... [SEP]); `word_start` per position."""
    inputs, labels = ids.copy(), np.full_like(ids, IGNORE)
    maskable = ~np.isin(ids, (PAD, CLS, SEP))
    for unit in choose_units(word_start, maskable, rule, rng):
        labels[unit] = ids[unit]
        draw = rng.random()
        if draw < rule.mask_share:
            inputs[unit] = MASK
        elif draw < rule.mask_share + rule.random_share:
            inputs[unit] = rng.integers(len(SPECIAL_TOKENS), rule.vocab_size, size=len(unit))
    return inputs, labels


def sequence(samples: PackedSamples, index: int, rule: MaskingRule, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """(ids, token types, pair label) of sample `index`: [CLS] text [SEP], or [CLS] A [SEP] B [SEP] for pairs.

    NSP: with probability 1/2 B is replaced by as many tokens from the start of another sample (label 1).
    SOP: with probability 1/2 A and B swap places (label 1).
    """
    tokens = samples.tokens(index)
    if not rule.pairs:
        return np.concatenate([[CLS], tokens, [SEP]]), np.zeros(len(tokens) + 2, dtype=np.int64), IGNORE
    cut = samples.split_point(index)
    first, second = tokens[:cut], tokens[cut:]
    label = int(rng.random() < 0.5)
    if label and rule.objective == "mlm+nsp" and len(samples) > 1:
        other = int(rng.integers(len(samples) - 1))
        other += other >= index
        second = samples.tokens(other)[: len(second)]
    elif label:
        first, second = second, first
    ids = np.concatenate([[CLS], first, [SEP], second, [SEP]])
    types = np.concatenate([np.zeros(len(first) + 2, dtype=np.int64), np.ones(len(second) + 1, dtype=np.int64)])
    return ids, types, label


def training_batch(samples: PackedSamples, indices: list[int], epoch: int, rule: MaskingRule) -> dict[str, torch.Tensor]:
    """The padded batch of samples `indices` in `epoch`: input_ids, attention_mask, token_type_ids, labels (and pair_labels)."""
    size = len(indices)
    batch = {name: np.full((size, rule.seq_len), fill, dtype=np.int64) for name, fill in (("input_ids", PAD), ("labels", IGNORE))}
    batch["attention_mask"] = np.zeros((size, rule.seq_len), dtype=np.int64)
    batch["token_type_ids"] = np.zeros((size, rule.seq_len), dtype=np.int64)
    pair_labels = np.zeros(size, dtype=np.int64)
    for row, index in enumerate(indices):
        rng = sample_generator(rule.seed, epoch, index)
        ids, types, pair_labels[row] = sequence(samples, index, rule, rng)
        inputs, labels = mask(ids, samples.word_start[ids], rule, rng)
        n = len(ids)
        batch["input_ids"][row, :n], batch["labels"][row, :n] = inputs, labels
        batch["attention_mask"][row, :n] = 1
        batch["token_type_ids"][row, :n] = types
    tensors = {name: torch.from_numpy(array) for name, array in batch.items()}
    if rule.pairs:
        tensors["pair_labels"] = torch.from_numpy(pair_labels)
    return tensors
