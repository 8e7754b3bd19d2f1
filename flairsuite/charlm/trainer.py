"""The training loop around Flair's own `LanguageModel`: time-boxed, checkpointed, exactly resumable.

The model file (`best-lm.pt`) is written by `LanguageModel.save`, so plain Flair loads it with
`FlairEmbeddings(path)`. The loop is the suite's: batches are sliced from a memory-mapped id array,
validation runs on a capped slice of valid every few minutes (no text generation stalls it), the
learning rate is annealed on validation plateaus, and checkpoints carry model, optimizer,
scheduler, RNG, hidden state and data position. `CharLMTrainer` is a `flairsuite.training.TrainingLoop`:
a step is one truncated-BPTT window, validation points and checkpoints come on the clock.

Window schedule: the truncated-BPTT window grows linearly from `sequence_length_start` to
`sequence_length` over the first `ramp_chars` characters. Short windows early give many more
updates per character at almost the same characters per second (the hidden state is still
carried across windows), which is where a time-boxed run gains most; the paper's window of 250
is reached after the ramp. `ramp_chars: 0` trains with the full window from the start.

Precision: `bfloat16` runs each update's forward pass under torch's bfloat16 autocast (the LSTM and
the decoder in bfloat16, through oneDNN on CPUs with AMX); weights, gradients, SGD, the loss and
validation stay float32. A device without native bfloat16 is refused with one line (`require_precision`: oneDNN's
LSTM fails there at the first step). It is a property of the invocation, not of the run: a checkpoint resumes
under either, and each learning-curve point records `precision` where it is not float32.

Noise (`hyper.noise`, `flairsuite.charlm.noise`): each training window is corrupted as it is sliced (inputs, and with
`smlm` the targets); the dictionary gains the mask's row and any alphabet character it lacks. The noise is a function
of the seed and the data position, so the checkpoint needs nothing more for an exact resume; its identity holds the
alphabet. Validation reads clean text.
"""

import logging
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional

import flair
import torch
import torch.nn.functional as F
from flair.models import LanguageModel
from torch.nn.parallel import DistributedDataParallel

from flairsuite.charlm.batches import StreamBatches
from flairsuite.charlm.initial import InitialModel, extended_state
from flairsuite.charlm.noise import build_noise
from flairsuite.charlm.settings import Hyper
from flairsuite.charlm.storage import check_storage, load_language_model, store_weights_as
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_file
from flairsuite.files.summary_file import SUMMARY_FILE, read_summary_file, write_summary
from flairsuite.rawtext.prepare import PreparedCorpus, char_dictionary
from flairsuite.runtime.distributed import Ranks
from flairsuite.runtime.precision import autocast, require_precision
from flairsuite.training import StreamProgress, StreamTraining, renamed_setting

log = logging.getLogger("flairsuite")


@dataclass
class LMProgress(StreamProgress):
    """Counters of a character-LM run that survive a resume: a `StreamProgress` counting characters."""

    steps_done: int = 0
    chars: int = 0

    @property
    def units(self) -> int:
        return self.chars


def evaluation_batches(ids: Any, hyper: Hyper, forward: bool) -> StreamBatches:
    """Batches over at most `valid_chars` characters, with fewer streams for a small split."""
    ids = ids[: hyper.valid_chars + 1]
    streams = max(1, min(hyper.batch_size, (len(ids) - 1) // hyper.sequence_length))
    return StreamBatches(ids, streams, hyper.sequence_length, forward)


def window_length(hyper: Hyper, chars: int) -> int:
    """The BPTT window after `chars` training characters (see the window schedule above)."""
    start = min(hyper.sequence_length_start, hyper.sequence_length)
    if hyper.ramp_chars <= 0 or chars >= hyper.ramp_chars:
        return hyper.sequence_length
    return round(start + (hyper.sequence_length - start) * chars / hyper.ramp_chars)


def evaluate(model: LanguageModel, batches: StreamBatches, length: int) -> float:
    """Mean cross-entropy per character (nats) of `model` over consecutive windows of `length`."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    hidden = model.init_hidden(batches.batch_size)
    total = torch.zeros((), device=device)
    offsets = batches.windows(length)
    with torch.no_grad():
        for offset in offsets:
            inputs, targets = (t.to(device) for t in batches.window(offset, length))
            output, _, hidden = model(inputs, hidden)
            total += F.cross_entropy(output.view(-1, output.size(-1)), targets.view(-1), reduction="sum")
    model.train(was_training)
    return total.item() / (len(offsets) * length * batches.batch_size)


class CharLMTrainer(StreamTraining[LMProgress]):
    """Trains one direction of a character LM from a prepared corpus into folder `out`.

    Set up by the caller: a fresh trainer (`start()`), `restore()` from the checkpoint, or `warm_start()`; then `train()`.
    With `initial` (`train-charlm --init`, `flairsuite.charlm.initial`) a fresh run starts from that LM's weights.
    """

    def __init__(self, corpus: PreparedCorpus, out: Path, hyper: Hyper, forward: bool, seed: int = 1, ranks: Ranks = Ranks(),
                 precision: str = "float32", storage: str = "float32", initial: Optional[InitialModel] = None) -> None:
        self.corpus, self.out, self.hyper, self.forward, self.seed, self.ranks = corpus, out, hyper, forward, seed, ranks
        self.initial = initial
        require_precision(precision, flair.device, "language-model training")
        self.precision = precision
        self.storage = check_storage(storage)  # best-lm.pt's weights (storage.py); the checkpoint stays float32
        self.checkpoint_path = out / "checkpoint.pt"
        self.model_path = out / "best-lm.pt"
        self.device = flair.device
        if hyper.batch_size % ranks.world:
            raise FlairsuiteError(f"--batch-size {hyper.batch_size} (character streams) does not split evenly over {ranks.world} ranks")
        streams = StreamBatches(corpus.array("train"), hyper.batch_size, hyper.sequence_length, forward)
        self.train_batches = streams.block(*ranks.share(hyper.batch_size))  # this rank's streams (all of them for one rank)
        self.valid_batches = evaluation_batches(corpus.array("valid"), hyper, forward)
        self.noise = build_noise(hyper, corpus, seed, forward)  # None without --noise
        torch.manual_seed(seed)
        self.model = LanguageModel(
            char_dictionary([*corpus.chars, *(self.noise.rows if self.noise else ())]),
            is_forward_lm=forward,
            hidden_size=hyper.hidden_size,
            nlayers=hyper.nlayers,
            embedding_size=hyper.embedding_size,
            dropout=hyper.dropout,
        )  # created on flair.device (its `.to()` returns None, so no chaining)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=hyper.learning_rate)
        self.scheduler = (  # anneal_factor 1 (the paper's preset): a constant learning rate
            torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, factor=hyper.anneal_factor, patience=hyper.patience)
            if hyper.anneal_factor < 1
            else None
        )
        self.forward_pass = DistributedDataParallel(self.model) if ranks.parallel else self.model  # gradients averaged over ranks
        self.seed_rank()
        self.progress = LMProgress()
        self.hidden = self.model.init_hidden(self.train_batches.batch_size)
        self.unit, self.validate_every, self.checkpoint_minutes = "char", hyper.validate_chars, hyper.checkpoint_minutes

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must match to be resumed by this trainer."""
        hyper = {key: value for key, value in self.hyper.record().items() if key != "noise_alphabet"}  # its characters below
        identity = {"hyper": hyper, "forward": self.forward, "corpus": self.corpus.path.name, "seed": self.seed}
        if self.noise:
            identity["noise"] = self.noise.identity()
        return {**identity, "init": self.initial.digest} if self.initial else identity

    def start(self) -> None:
        """A fresh run; from `initial`'s weights where given: the initial LM on the new valid text is the first validation
        point (characters seen 0) and the first `best-lm.pt`, and a checkpoint follows at once, so a kill from here on
        resumes exactly."""
        if self.initial is None:
            return
        initial = load_language_model(self.initial.path)
        rows = len(self.model.dictionary.idx2item)
        self.model.load_state_dict(extended_state(initial.state_dict(), rows))
        valid_loss = evaluate(self.model, self.valid_batches, self.hyper.sequence_length) if self.ranks.main else 0.0
        valid_loss = self.ranks.broadcast_value(valid_loss)
        self.progress.best_valid_loss = valid_loss
        self.progress.history.append(
            {"chars": 0, "seconds": 0.0, "train_ppl": None, "valid_ppl": math.exp(valid_loss), "lr": self.optimizer.param_groups[0]["lr"],
             "initial": True}
        )
        if self.ranks.main:
            self.save_model()
        self.save_checkpoint()  # every rank takes part (their random generators)

    def state(self) -> dict[str, Any]:
        """The checkpoint without the random generators: identity, model, optimizer, scheduler, hidden state, progress."""
        return {
            **self.identity(),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler else None,
            "hidden": tuple(h.cpu() for h in self.hidden),
            "progress": asdict(self.progress),
        }

    def rank_state(self) -> dict[str, Any]:
        """A rank's random generators and the hidden state of its streams."""
        return {**super().rank_state(), "hidden": tuple(h.cpu() for h in self.hidden)}

    def load_rank_states(self, entries: list[dict[str, Any]]) -> None:
        """Random generators as `StreamTraining` restores them; the hidden state of this rank's streams.

        The ranks' streams are consecutive blocks of the same `batch_size` streams, so the hidden
        states of a checkpoint, put side by side, are those of all streams: any number of ranks that
        divides the batch takes its block of them, and the text flows on exactly.
        """
        super().load_rank_states(entries)
        if all("hidden" in entry for entry in entries):
            streams = [torch.cat([entry["hidden"][layer] for entry in entries], dim=1) for layer in range(len(entries[0]["hidden"]))]
            start, stop = self.ranks.share(self.hyper.batch_size)
            self.hidden = tuple(h[:, start:stop].contiguous().to(self.device) for h in streams)

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue from checkpoint `state` (`restore()` reads it from `out`; the same settings are required)."""
        self.check_identity(renamed_setting(state, "hyper", "validate_minutes", "validate_chars", self.hyper.validate_chars))
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler:
            self.scheduler.load_state_dict(state["scheduler"])
        self.hidden = tuple(h.to(self.device) for h in state["hidden"])  # one process's; `load_rank_states` takes each rank's
        self.progress = LMProgress(**state["progress"])

    def data_position(self, steps: int) -> tuple[int, int, int]:
        """(epoch, offset, characters seen) after `steps` updates from the start, replaying `step()`'s bookkeeping."""
        epoch = offset = chars = 0
        end = self.train_batches.stream_length
        for _ in range(steps):
            if offset >= end - 1:
                epoch, offset = epoch + 1, 0
            taken = min(offset + window_length(self.hyper, chars), end) - offset
            offset, chars = offset + taken, chars + taken * self.hyper.batch_size
        return epoch, offset, chars

    def warm_start(self, summary: dict[str, Any]) -> None:
        """Continue a released model (its `best-lm.pt` and `summary.json`, no checkpoint).

        The weights, counters, learning curve and learning rate come from the files; the data
        position is replayed from the number of steps (`data_position`) and must give the
        characters seen that the summary records. Not restored, as a checkpoint would: the random generators (reseeded) and the
        carried hidden state (zeros). SGD keeps no other state.
        """
        released = load_language_model(self.model_path, "; restore it or start over with --force")
        mismatched = [
            key
            for key, ours, theirs in (
                ("characters", self.model.dictionary.idx2item, released.dictionary.idx2item),
                ("forward", self.forward, released.is_forward_lm),
                ("hidden_size", self.hyper.hidden_size, released.hidden_size),
                ("nlayers", self.hyper.nlayers, released.nlayers),
                ("embedding_size", self.hyper.embedding_size, released.embedding_size),
            )
            if ours != theirs
        ]
        if mismatched:
            raise FlairsuiteError(
                f"{self.model_path} cannot be continued with these settings ({', '.join(mismatched)} differ); "
                "use the options it was trained with, or start over with --force"
            )
        self.model.load_state_dict(released.state_dict())
        history = summary.get("history") or []
        chars = int(summary["chars_seen"])
        epoch, offset, replayed = self.data_position(int(summary["steps"]))
        trained_on = ((summary.get("corpus") or {}).get("splits") or {}).get("train")
        here = self.corpus.meta["splits"]["train"]
        if replayed != chars and (trained_on is None or trained_on == here):  # the same text: the window options differ
            raise FlairsuiteError(
                f"{self.out / 'summary.json'}: {chars:,} characters in {summary['steps']} steps do not fit this corpus and window "
                f"schedule ({replayed:,}); continue it with the corpus and options it was trained with, or start over with --force"
            )
        if replayed != chars:  # the prepared text changed since (e.g. the leave-out found more held-out sentences)
            log.warning("%s was trained on %s training characters, the prepared corpus has %s now: its steps are replayed on this "
                        "text (data position after %s characters, not the exact one; counted as seen from now on, %s before)",
                        self.model_path, f"{trained_on:,}", f"{here:,}", f"{replayed:,}", f"{chars:,}")
            chars = replayed  # so that the summary this run writes (today's corpus) replays to its own count when continued again
        self.progress = LMProgress(
            epoch=epoch,
            offset=offset,
            steps_done=int(summary["steps"]),
            chars=chars,
            seconds=float(summary["hours"]) * 3600,
            cpu_seconds=float(summary.get("cpu_hours") or 0.0) * 3600,  # older summaries recorded none
            best_valid_loss=math.log(float(summary["valid_ppl"])),
            history=list(history),
        )
        if history:
            for group in self.optimizer.param_groups:
                group["lr"] = history[-1]["lr"]
        if self.scheduler:
            self.scheduler.best = self.progress.best_valid_loss

    def save_model(self) -> None:
        """Write `best-lm.pt` atomically (never half-written), in Flair's LanguageModel format, weights as `storage`;
        then bring a `summary.json` beside it in step (`sync_summary`)."""
        with atomic_file(self.model_path) as temp:
            self.model.save(temp)
            if self.storage != "float32":
                store_weights_as(temp, self.storage)
        self.sync_summary()

    def sync_summary(self) -> None:
        """A continued model's `summary.json` (a run that `warm_start`ed) is rewritten at the end of the run; until then its
        counters, perplexity and curve follow each new `best-lm.pt`, marked `in_progress` (its test perplexity dropped), so a
        kill never leaves the new weights beside the old run's summary, which tagging runs record as the LM's training and
        a later `--resume` continues from. A new run has no summary until its end."""
        path = self.out / SUMMARY_FILE
        if not path.is_file():
            return
        summary = read_summary_file(path)
        summary.pop("test_ppl", None)
        summary.update(chars_seen=self.progress.chars, steps=self.progress.steps_done, hours=round(self.progress.seconds / 3600, 3),
                       cpu_hours=round(self.progress.cpu_seconds / 3600, 5),
                       valid_ppl=round(math.exp(self.progress.best_valid_loss), 4), history=self.progress.history, in_progress=True)
        write_summary(self.out, summary)

    def validation_point(self, train_loss: float) -> None:
        """Validation point: anneal, keep the best model, record the learning curve (rank 0 validates, every rank anneals alike)."""
        valid_loss = evaluate(self.model, self.valid_batches, self.hyper.sequence_length) if self.ranks.main else 0.0
        valid_loss = self.ranks.broadcast_value(valid_loss)
        train_loss = self.ranks.all_sum(train_loss)[0] / self.ranks.world
        if self.scheduler:
            self.scheduler.step(valid_loss)
        if valid_loss < self.progress.best_valid_loss:
            self.progress.best_valid_loss = valid_loss
            if self.ranks.main:
                self.save_model()
        self.progress.history.append(
            {
                "chars": self.progress.chars,
                "seconds": round(self.progress.seconds, 1),
                "train_ppl": math.exp(train_loss),
                "valid_ppl": math.exp(valid_loss),
                "lr": self.optimizer.param_groups[0]["lr"],
                **({"precision": self.precision} if self.precision != "float32" else {}),
            }
        )

    def update(self) -> torch.Tensor:
        """One truncated-BPTT update; the (device) loss."""
        progress = self.progress
        if progress.offset >= self.train_batches.stream_length - 1:
            progress.epoch += 1
            progress.offset = 0
            self.hidden = self.model.init_hidden(self.train_batches.batch_size)
        length = window_length(self.hyper, progress.chars)
        window = self.train_batches.window(progress.offset, length, self.noise, progress.epoch)
        inputs, targets = (t.to(self.device, non_blocking=True) for t in window)
        self.hidden = tuple(h.detach() for h in self.hidden)
        with autocast(self.device, self.precision):
            output, _, hidden = self.forward_pass(inputs, self.hidden)
        self.hidden = tuple(h.float() for h in hidden)
        loss = F.cross_entropy(output.float().view(-1, output.size(-1)), targets.view(-1))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.hyper.clip)
        self.optimizer.step()
        progress.offset += inputs.size(0)
        progress.steps_done += 1
        progress.chars += inputs.numel() * self.ranks.world  # every rank's window has the same shape
        return loss.detach()

    # The phases of TrainingLoop.run() that StreamTraining leaves to a trainer.

    def begin(self) -> None:
        super().begin()
        self._losses: list[torch.Tensor] = []

    def step(self) -> None:
        """One truncated-BPTT window (`update`), with the clock and the progress bar."""
        chars = self.progress.chars
        self._losses.append(self.update())
        self.clock()
        self.bar.update(self.progress.chars - chars)
        if len(self._losses) % 10 == 0:
            recent = math.exp(torch.stack(self._losses[-10:]).mean().item())
            self.bar.set_postfix(ppl=f"{recent:.2f}", lr=self.optimizer.param_groups[0]["lr"])

    def validate(self) -> None:
        """A validation point on the mean training loss since the last one."""
        self.validation_point(torch.stack(self._losses).mean().item())
        self._losses.clear()
        self.validated()
