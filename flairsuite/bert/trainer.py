"""The pre-training loop of a small BERT: time- or token-boxed, checkpointed, exactly resumable.

A `flairsuite.training.TrainingLoop`: a step is one batch. The samples of an epoch come in the
order of a permutation drawn from (seed, epoch), their masks from (seed, epoch, sample index)
(`flairsuite.bert.masking`), so the data side of a run needs no state beyond (epoch, offset);
the checkpoint adds model, optimizer, counters and the random generators (dropout). The loss is
computed on the masked positions only: the vocabulary projection runs on 15 % of the tokens.

Learning rate: linear warm-up over `warmup_tokens` (at most a tenth of the horizon), then linear decay to 10 % at the decay
horizon (`--max-tokens` when given, else the preset's `decay_tokens`), constant after it. It is a
function of tokens seen, not of time, so the same run gives the same weights on any machine.
Validation (MLM loss and accuracy on the first `valid_samples` valid samples, fixed masks) comes
every `validate_tokens` tokens seen; the best model so far is the one in the folder.

Precision: `bfloat16` runs each training step's forward pass under torch's bfloat16 autocast (a CUDA GPU from Ampere
on, or a CPU with AVX-512 BF16 or AMX through oneDNN); weights, gradients, AdamW, the loss and validation stay float32,
so validation points compare across precisions. As for the language models it is a property of the invocation, not of
the run: a checkpoint resumes under either (bit-exact only under the same), and each validation point records
`precision` where it is not float32.
"""

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from transformers import PreTrainedTokenizerBase

from flairsuite.bert.build import EntityEntries, build_model, save_model
from flairsuite.bert.data import PackedSamples, TokenizedCorpus
from flairsuite.bert.masking import IGNORE, MaskingRule, training_batch
from flairsuite.bert.settings import BertSettings
from flairsuite.bert.vocabulary import continuation_ids, hf_tokenizer
from flairsuite.runtime.distributed import Ranks
from flairsuite.runtime.precision import autocast, require_precision
from flairsuite.training import Budget, StreamProgress, StreamTraining, renamed_setting


@dataclass
class BertProgress(StreamProgress):
    """Counters of a pre-training run that survive a resume: a `StreamProgress` counting tokens."""

    steps: int = 0
    tokens: int = 0

    @property
    def units(self) -> int:
        return self.tokens


def learning_rate(settings: BertSettings, tokens: int, horizon: int) -> float:
    """The learning rate after `tokens` (module docstring)."""
    warmup = max(1, min(settings.warmup_tokens, horizon // 10))
    if tokens < warmup:
        return settings.learning_rate * max(tokens, 1) / warmup
    span = max(horizon - warmup, 1)
    return settings.learning_rate * max(0.1, 1.0 - 0.9 * (tokens - warmup) / span)


def parameter_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """AdamW groups: no weight decay on biases and LayerNorm weights."""
    decay, plain = [], []
    for name, parameter in model.named_parameters():
        (plain if parameter.ndim < 2 or "LayerNorm" in name else decay).append(parameter)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": plain, "weight_decay": 0.0}]


class PretrainingPass(torch.nn.Module):
    """The forward pass of pre-training as one module (what DistributedDataParallel wraps).

    Returns the MLM logits at the chosen positions only, and the sentence-pair logits (NSP/SOP) or None.
    """

    def __init__(self, model: torch.nn.Module, pairs: bool) -> None:
        super().__init__()
        self.model, self.pairs = model, pairs

    def forward(self, batch: dict[str, torch.Tensor], chosen: torch.Tensor) -> tuple[torch.Tensor, Optional[torch.Tensor]]:
        output = self.model.bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], token_type_ids=batch["token_type_ids"])
        logits = self.model.cls.predictions(output[0][chosen])
        return logits, self.model.cls.seq_relationship(output[1]) if self.pairs else None


def training_device(ranks: Ranks) -> torch.device:
    """Where a pre-training run computes: the rank's device under torchrun, else a GPU if there is one, else the CPU."""
    return ranks.device or torch.device("cuda" if torch.cuda.is_available() else "cpu")


class BertTrainer(StreamTraining[BertProgress]):
    """Pre-trains one small BERT from a tokenized corpus into the model folder `out`.

    Data-parallel (`ranks`): each global batch of `batch_size` samples is split into consecutive
    blocks, one per rank, with the masks a single process would draw; each rank's loss is weighted by
    its share of the batch's masked positions (and pairs), so the averaged gradient is the single
    process's (see `next_batch` for an epoch's last batch with fewer samples than ranks).
    """

    def __init__(
        self, data: TokenizedCorpus, out: Path, settings: BertSettings, seed: int = 1, ranks: Ranks = Ranks(),
        lexicon: Optional[Callable[[PreTrainedTokenizerBase], EntityEntries]] = None, precision: str = "float32",
    ) -> None:
        self.data, self.out, self.settings, self.seed, self.ranks = data, out, settings, seed, ranks
        self.checkpoint_path = out / "checkpoint.pt"
        vocab_size = data.meta["vocab_size"]
        self.rule = MaskingRule(settings.objective, settings.wwm, vocab_size, settings.seq_len, seed)
        self.train_samples = data.samples("train", self.rule.content)
        self.valid_samples = data.samples("valid", self.rule.content)
        self.device = training_device(ranks)
        require_precision(precision, self.device, "train-bert --precision", "--precision float32 (or auto)")
        self.precision = self.checkpoint_precision = precision  # the latter: what a resumed checkpoint was trained in
        torch.manual_seed(seed)
        tokenizer = data.tokenizer()
        self.tokenizer = hf_tokenizer(tokenizer, settings.seq_len)
        self.entities = lexicon(self.tokenizer) if lexicon is not None else None  # Char-Entity attention over these entries
        self.model = build_model(settings, vocab_size, continuation_ids(tokenizer), self.entities).to(self.device)
        self.forward_pass = PretrainingPass(self.model, self.rule.pairs)
        self.parallel_pass = DistributedDataParallel(self.forward_pass, broadcast_buffers=False) if ranks.parallel else self.forward_pass
        self.seed_rank()
        self.optimizer = torch.optim.AdamW(parameter_groups(self.model, settings.weight_decay), lr=settings.learning_rate, eps=1e-6,
                                           fused=True)  # torch's fused kernel: ~5x the default loop's step (models/settings.py, FUSED)
        self.progress = BertProgress()
        self.unit, self.validate_every, self.checkpoint_minutes = "tok", settings.validate_tokens, settings.checkpoint_minutes
        self._order: tuple[int, np.ndarray] = (-1, np.empty(0, dtype=np.int64))

    def release_ranks(self) -> None:
        """Drop the data-parallel wrapper once training is over, before `flairsuite.runtime.distributed.leave` (which says why)."""
        self.parallel_pass = self.forward_pass

    # -- checkpoint -------------------------------------------------------------------------------

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must match to be resumed by this trainer."""
        lexicon = {"lexicon": self.entities.digest} if self.entities is not None else {}  # runs without one keep their identity
        return {"settings": asdict(self.settings), "data": self.data.path.name, "seed": self.seed, **lexicon}

    def state(self) -> dict[str, Any]:
        return {
            **self.identity(),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "progress": asdict(self.progress),
            "precision": self.precision,  # not part of the identity: a resume may change it (then it is not bit-exact)
        }

    def load_state(self, state: dict[str, Any]) -> None:
        self.check_identity(renamed_setting(state, "settings", "validate_minutes", "validate_tokens", self.settings.validate_tokens))
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.progress = BertProgress(**state["progress"])
        self.checkpoint_precision = state.get("precision", "float32")

    # -- data and loss ----------------------------------------------------------------------------

    def epoch_order(self, epoch: int) -> np.ndarray:
        """The order of the training samples in `epoch`, a permutation drawn from (seed, epoch)."""
        if self._order[0] != epoch:
            self._order = (epoch, np.random.default_rng([self.seed, epoch]).permutation(len(self.train_samples)))
        return self._order[1]

    def next_batch(self) -> tuple[dict[str, torch.Tensor], bool]:
        """This rank's part of the next training batch, and whether it is empty; advances epoch and offset.

        An epoch's last batch may be smaller; when it has fewer samples than there are ranks, a rank
        left without one gets the batch's first sample to run (all ranks must take part in the
        gradient all-reduce), which `step()` weights with 0.
        """
        progress = self.progress
        if progress.offset >= len(self.train_samples):
            progress.epoch, progress.offset = progress.epoch + 1, 0
        indices = self.epoch_order(progress.epoch)[progress.offset : progress.offset + self.settings.batch_size]
        progress.offset += len(indices)
        start, stop = self.ranks.share(len(indices))
        empty = start == stop
        chosen = indices[:1] if empty else indices[start:stop]
        return training_batch(self.train_samples, chosen.tolist(), progress.epoch, self.rule), empty

    def losses(self, batch: dict[str, torch.Tensor], training: bool = False) -> tuple[torch.Tensor, Optional[torch.Tensor], int, int]:
        """(MLM loss, sentence-pair loss or None, correct MLM predictions, masked positions) of a batch.

        `training`: through the data-parallel wrapper (gradients averaged over ranks) in the run's precision; else the
        plain pass in float32.
        """
        batch = {name: tensor.to(self.device, non_blocking=True) for name, tensor in batch.items()}
        chosen = batch["labels"] != IGNORE
        with autocast(self.device, self.precision if training else "float32"):
            logits, pair_logits = (self.parallel_pass if training else self.forward_pass)(batch, chosen)
            targets = batch["labels"][chosen]
            loss = F.cross_entropy(logits.float(), targets)
            pair_loss = F.cross_entropy(pair_logits.float(), batch["pair_labels"]) if pair_logits is not None else None
        correct = int((logits.argmax(-1) == targets).sum())
        return loss, pair_loss, correct, int(targets.numel())

    def evaluate(self, samples: PackedSamples) -> tuple[float, float]:
        """(MLM loss per masked token, MLM accuracy) on the first `valid_samples` samples, with fixed masks."""
        was_training = self.model.training
        self.model.eval()
        total = correct = count = 0.0
        size = min(self.settings.valid_samples, len(samples))
        with torch.no_grad():
            for start in range(0, size, self.settings.batch_size):
                indices = list(range(start, min(start + self.settings.batch_size, size)))
                batch = training_batch(samples, indices, 0, self.rule)
                loss, pair_loss, right, masked = self.losses(batch)
                loss = loss + pair_loss if pair_loss is not None else loss
                total, correct, count = total + loss.item() * masked, correct + right, count + masked
        self.model.train(was_training)
        return total / max(count, 1), correct / max(count, 1)

    # -- the phases of TrainingLoop.run() -----------------------------------------------------------

    def train(self, budget: Budget, desc: str = "train-bert") -> BertProgress:
        return super().train(budget, desc)

    def begin(self) -> None:
        super().begin()
        self._window = {"loss": 0.0, "correct": 0, "masked": 0}

    def step(self) -> None:
        batch, empty = self.next_batch()
        horizon = self.budget.max_units or self.settings.decay_tokens
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate(self.settings, self.progress.tokens, horizon)
        counts = (int((batch["labels"] != IGNORE).sum()), int(batch["attention_mask"].sum()), len(batch["input_ids"]))
        masked, tokens, pairs = (0, 0, 0) if empty else counts
        all_masked, all_tokens, all_pairs = self.ranks.all_sum(masked, tokens, pairs)
        mlm_loss, pair_loss, correct, _ = self.losses(batch, training=True)
        correct = 0 if empty else correct
        # weighted by this rank's share, so that the mean over ranks is the loss of the whole batch (factors 1 for one rank)
        loss = mlm_loss * (masked * self.ranks.world / all_masked)
        if pair_loss is not None:
            loss = loss + pair_loss * (pairs * self.ranks.world / all_pairs)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.settings.clip)
        self.optimizer.step()
        self.progress.steps += 1
        self.progress.tokens += int(all_tokens)
        window = self._window
        window["loss"] += (mlm_loss.item() + (pair_loss.item() if pair_loss is not None else 0.0)) * masked
        window["correct"] += correct
        window["masked"] += masked
        self.clock()
        self.bar.update(int(all_tokens))
        if self.progress.steps % 5 == 0:
            self.bar.set_postfix(loss=f"{window['loss'] / max(window['masked'], 1):.3f}", acc=f"{window['correct'] / max(window['masked'], 1):.3f}")

    def validate(self) -> None:
        """Rank 0 validates and keeps the best model; every rank records the same point."""
        valid_loss, valid_accuracy = self.evaluate(self.valid_samples) if self.ranks.main else (0.0, 0.0)
        valid_loss, valid_accuracy = self.ranks.broadcast_value(valid_loss), self.ranks.broadcast_value(valid_accuracy)
        loss, correct, masked = self.ranks.all_sum(self._window["loss"], self._window["correct"], self._window["masked"])
        window = {"loss": loss, "correct": correct, "masked": masked}
        if valid_loss < self.progress.best_valid_loss:
            self.progress.best_valid_loss = valid_loss
            if self.ranks.main:
                save_model(self.model, self.tokenizer, self.out)
        self.progress.history.append(
            {
                "tokens": self.progress.tokens,
                "seconds": round(self.progress.seconds, 1),
                "train_loss": window["loss"] / max(window["masked"], 1),
                "train_accuracy": window["correct"] / max(window["masked"], 1),
                "valid_loss": valid_loss,
                "valid_accuracy": valid_accuracy,
                "lr": self.optimizer.param_groups[0]["lr"],
                **({"precision": self.precision} if self.precision != "float32" else {}),
            }
        )
        self._window = {"loss": 0.0, "correct": 0, "masked": 0}
        self.validated()
