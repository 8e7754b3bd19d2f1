"""The training loop over cached embeddings: Flair's recipe (summed loss, clipping at 5, annealing on a
dev plateau, best-on-dev model) without Flair's per-token data path, with a checkpoint after every epoch.

Flair's `ModelTrainer` iterates `Sentence` objects and rebuilds each batch tensor token by token;
here a batch is gathered from memory-mapped rows (`features.py`), so the loop is short enough to
keep in mind. What it keeps from Flair: the loss summed over a batch's tokens, gradient-norm
clipping at 5.0, the learning rate multiplied by `anneal_factor` when dev F1 has not improved for
more than `patience` epochs (training loss with `train_with_dev`), a stop when it falls below 1e-4,
and the model of the best dev epoch as the result (the last epoch with `train_with_dev`).

Fine-tuning settings (`schedule: linear`, flairsuite/models/settings.py) change three things, as
Flair's `ModelTrainer.fine_tune`: the learning rate follows Flair's `LinearSchedulerWithWarmup`,
stepped after every batch over all the run's batches; no annealing and no stop on a small learning
rate; the model of the last epoch is the result (so dev may be scored only every `dev_every` epochs).
With `decoder_learning_rate` the optimizer has two groups (`learning_rate_groups`): the embeddings' parameters at
`learning_rate`, the rest at that rate; the schedule scales both.

`precision: bfloat16` runs each training step's forward pass under torch's bfloat16 autocast (the
linear maps and the LSTM in bfloat16, and so the batch's live embeddings: a fine-tuned BERT, `char`; on CPUs with
AMX or AVX-512 BF16 through oneDNN; parameters, gradients, the
optimizer and the CRF stay float32); dev and test decoding stay float32. A device that does not compute bfloat16
natively is refused with one line (`require_precision`). With `epoch_samples`, an epoch is that many
sentences: the start of random orders of all of train, one after the other (`epoch_order`), so
within an epoch no sentence is seen twice before every other one was seen once.

`TaggerTraining` is a `flairsuite.training.TrainingLoop`: a step is one epoch, followed by a
validation point (dev F1, annealing, the best weights) and a checkpoint; `train_tagger` sets it up
(resuming a checkpoint saved under the same key) and runs it.
"""

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Union

import flair
import torch
from flair.optim import LinearSchedulerWithWarmup
from tqdm import tqdm

from flairsuite.corpora.tasks import TASKS
from flairsuite.models.protocol import features_decode, features_loss
from flairsuite.models.settings import TrainSettings
from flairsuite.runtime.precision import autocast, require_precision
from flairsuite.runtime.threads import recheck as recheck_threads
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.scoring import main_score
from flairsuite.training import TrainingLoop

CLIP_NORM = 5.0  # Flair's ModelTrainer
MIN_LEARNING_RATE = 1e-4  # Flair's default min_learning_rate: training stops below it
DECODE_BATCH = 128


@dataclass
class TaggerProgress:
    """Where a tagger's training stands; saved (pickled) in the epoch checkpoint."""

    epoch: int = 0
    best_score: float = float("-inf")
    best_epoch: int = 0
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0  # training seconds (epochs and validation) over every process that trained the run
    resumed_at: float = 0.0  # `seconds` when the last process took the run over from a checkpoint (0: trained from the start)


Progress = TaggerProgress  # the name older checkpoints pickled (flairsuite.tagging.tagger_training.Progress): they still load


def trained_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state of the model minus frozen embeddings (parameters without gradient below `embeddings.`)."""
    frozen = {name for name, p in model.embeddings.named_parameters(prefix="embeddings") if not p.requires_grad}
    frozen |= {name for name, _ in model.embeddings.named_buffers(prefix="embeddings")}
    return {key: value.detach().clone() for key, value in model.state_dict().items() if key not in frozen}


def decode(model: torch.nn.Module, features: SplitFeatures, batch_size: int = DECODE_BATCH) -> list[list[str]]:
    """The raw predicted BIO tags of every sentence of `features`, in corpus order."""
    model.eval()
    predicted: list[list[str]] = [[] for _ in range(len(features))]
    with torch.no_grad():
        for batch in features.longest_first(batch_size):
            for index, tagged in zip(batch.order, features_decode(model, batch.tensor, batch.lengths)):
                predicted[index] = [tag for tag, _ in tagged]
    return predicted


def dev_score(model: torch.nn.Module, dev: SplitFeatures, task: str = "ner") -> float:
    """The task's main score of the model on `dev`: strict IOB2 entity F1 (NER) or token accuracy (PoS)."""
    return main_score(task, dev.split.tags, decode(model, dev))


def epoch_order(size: int, samples: Optional[int]) -> list[int]:
    """The sentence indices of one epoch: a random order of all `size` (`samples` None), or the first
    `samples` of random orders of all, one after the other."""
    if samples is None:
        return torch.randperm(size).tolist()
    order: list[int] = []
    while len(order) < samples:
        order += torch.randperm(size).tolist()
    return order[:samples]


def bucketed_batches(order: list[int], lengths: Any, batch_size: int, pool_batches: Optional[int]) -> list[list[int]]:
    """`order` cut into batches of `batch_size`; with `pool_batches`, batches of sentences of similar length.

    Each run of `pool_batches * batch_size` sentences of the (random) order is sorted by length and
    cut into batches, and all the batches are then shuffled: every batch still comes from a random
    stretch of the data, but pads far less (Sturm, batches of 16 sub-token sequences: 2.7x the real
    tokens in random batches, 1.13x with pools of 50 batches; attention's cost, quadratic in the
    length, 5.7x and 2.0x).
    """
    if not pool_batches:
        return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
    pool = pool_batches * batch_size
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lambda i: -int(lengths[i]))
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in torch.randperm(len(batches)).tolist()]


def batch_count(sentences: int, batch_size: int, pool_batches: Optional[int]) -> int:
    """How many batches `bucketed_batches` cuts `sentences` into (a pool's last batch may be short)."""
    if not pool_batches:
        return math.ceil(sentences / batch_size)
    pool = pool_batches * batch_size
    return sentences // pool * pool_batches + math.ceil(sentences % pool / batch_size)


def _epoch(model: torch.nn.Module, train: SplitFeatures, optimizer: torch.optim.Optimizer, settings: TrainSettings, desc: str,
           after_step: Optional[Callable[[], None]] = None) -> float:
    """One epoch over `train` in random order (`epoch_order`, `bucketed_batches`); the mean loss per token. `after_step` follows every optimizer step."""
    model.train()
    total, tokens = 0.0, 0
    order = epoch_order(len(train), settings.epoch_samples)
    batches = bucketed_batches(order, train.lengths, settings.mini_batch_size, settings.bucket_batches)
    device = next(model.parameters()).device
    with tqdm(batches, desc=desc, unit="batch", leave=False) as bar:
        for indices in bar:
            with autocast(device, settings.precision):  # the batch too: a live part (a fine-tuned BERT, `char`) runs in it
                batch = train.batch(indices)
                loss = features_loss(model, batch.tensor, batch.lengths, batch.gold)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
            optimizer.step()
            if after_step is not None:
                after_step()
            recheck_threads()  # an epoch can be long: the rule's thread count is looked at again once a minute
            total, tokens = total + loss.item(), tokens + int(batch.lengths.sum())
            bar.set_postfix(loss=f"{total / tokens:.3f}")
    return total / max(tokens, 1)


def learning_rate_groups(model: torch.nn.Module, settings: TrainSettings) -> list[dict[str, Any]]:
    """The trainable parameters as optimizer groups: one at `learning_rate`, or with `decoder_learning_rate` those of
    `model.embeddings` (a fine-tuned BERT, trainable character or lexicon embeddings) first and the rest at that rate."""
    trainable = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
    if settings.decoder_learning_rate is None:
        return [{"params": [p for _, p in trainable]}]
    inside = [p for name, p in trainable if name.startswith("embeddings.")]
    outside = [p for name, p in trainable if not name.startswith("embeddings.")]
    groups = [{"params": inside}] if inside else []
    return groups + ([{"params": outside, "lr": settings.decoder_learning_rate}] if outside else [])


class TaggerTraining(TrainingLoop[TaggerProgress]):
    """Trains `model` on `train` (see `train_tagger`); one step is one epoch."""

    def __init__(
        self,
        model: torch.nn.Module,
        train: SplitFeatures,
        dev: Optional[SplitFeatures],
        settings: TrainSettings,
        seed: int,
        checkpoint_path: Path,
        desc: str = "",
        key: Optional[str] = None,
        task: str = "ner",
    ) -> None:
        self.model, self.train, self.dev, self.settings, self.task = model, train, dev, settings, task
        self.seed, self.checkpoint_path, self.desc, self.key = seed, checkpoint_path, desc, key
        self.optimizer = settings.make_optimizer(learning_rate_groups(model, settings))
        self.linear = settings.schedule == "linear"
        if self.linear:
            batches = batch_count(settings.epoch_samples or len(train), settings.mini_batch_size, settings.bucket_batches)
            steps = batches * settings.max_epochs
            self.scheduler = LinearSchedulerWithWarmup(self.optimizer, num_train_steps=steps, num_warmup_steps=int(settings.warmup_fraction * steps))
        else:
            self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
                self.optimizer, mode="max" if dev is not None else "min", factor=settings.anneal_factor, patience=settings.patience
            )
        self.progress = TaggerProgress()
        self.best = {} if self.linear else trained_state(model)  # the last epoch is kept with the linear schedule: no copy

    def resumable(self, state: dict[str, Any]) -> bool:
        """A checkpoint saved under another key is stale: training starts over."""
        return state.get("key") == self.key

    def start(self) -> None:
        flair.set_seed(self.seed)

    def state(self) -> dict[str, Any]:
        return {"model": trained_state(self.model), "optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                "progress": self.progress, "best": self.best, "key": self.key}

    def load_state(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state["model"], strict=False)
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.progress, self.best = state["progress"], state["best"]

    def done(self) -> bool:
        """After `max_epochs` epochs, or once annealing took the learning rate below MIN_LEARNING_RATE (not with the linear schedule)."""
        if self.progress.epoch >= self.settings.max_epochs:
            return True
        return not self.linear and self.optimizer.param_groups[0]["lr"] < MIN_LEARNING_RATE

    def step(self) -> None:
        """One epoch."""
        self._learning_rate = self.optimizer.param_groups[0]["lr"]
        self._started = time.perf_counter()
        self._loss = _epoch(self.model, self.train, self.optimizer, self.settings, f"{self.desc} epoch {self.progress.epoch + 1}",
                            self.scheduler.step if self.linear else None)
        self.progress.epoch += 1

    def validate(self) -> None:
        """Dev F1 (the negative training loss with `train_with_dev`), annealing, history, best weights; the epoch's seconds.

        With the linear schedule the last epoch counts as the best (its weights stay in the model), and dev is scored
        only after every `dev_every`-th epoch and the last (the history holds None for the others).
        """
        progress, dev, loss = self.progress, self.dev, self._loss
        if dev is not None and self.linear and progress.epoch % self.settings.dev_every and not self.done():
            dev = None  # not scored this epoch
        score = dev_score(self.model, dev, self.task) if dev is not None else -loss
        if not self.linear:
            self.scheduler.step(score if dev is not None else loss)
        progress.history.append({"epoch": progress.epoch, "loss": loss, f"dev_{TASKS[self.task].metric}": score if dev is not None else None,
                                 "lr": self._learning_rate})
        if dev is None or self.linear or score > progress.best_score:
            progress.best_score, progress.best_epoch = score, progress.epoch
            if not self.linear:
                self.best = trained_state(self.model)
        progress.seconds += time.perf_counter() - self._started

    def finish(self) -> TaggerProgress:
        """The model takes the weights of the best epoch (with the linear schedule it has those of the last)."""
        if not self.linear:
            self.model.load_state_dict(self.best, strict=False)
        return self.progress


def train_tagger(
    model: torch.nn.Module,
    train: SplitFeatures,
    dev: Optional[SplitFeatures],
    settings: Union[TrainSettings, Mapping[str, Any]],
    seed: int,
    checkpoint_path: Path,
    desc: str = "",
    key: Optional[str] = None,
    task: str = "ner",
) -> TaggerProgress:
    """Train `model` with `settings` (a TrainSettings, or a mapping of its keys); resumes from `checkpoint_path`.

    `dev` is None with `train_with_dev` (then `train` holds train + dev). The model ends with the
    weights of the best dev epoch (or of the last epoch without dev). `key` (e.g. a digest of the
    run's settings and embedding files) is saved in the checkpoint: a checkpoint saved under another
    key is stale and training starts over. `task` (`ner`, `pos`) names the dev score that picks the
    best epoch: entity F1 or token accuracy.
    """
    if not isinstance(settings, TrainSettings):
        settings = TrainSettings.from_mapping("training settings", settings)
    require_precision(settings.precision, next(model.parameters()).device, "training settings")
    training = TaggerTraining(model, train, dev, settings, seed, checkpoint_path, desc, key, task)
    training.setup()
    training.progress.resumed_at = training.progress.seconds
    return training.run()
