"""The `charlm` kind: a character LM trained by `train-charlm`, as Flair's `FlairEmbeddings`.

Spec `charlm:NAME-forward` or `charlm:NAME-backward`; artifact `charlm/NAME-DIRECTION/best-lm.pt`
below the home folder. Fixed while a tagger trains. Fast inference path: `CharLMFeatures`, the LM's
hidden states over a whole batch computed with `lstm` (int8 when quantised).

Option `@contextN` (`charlm:de-forward@context500`): document context (`context.py`), each sentence read
by the LM with up to N characters of its neighbouring sentences of the same document, as FLERT reads them
with a transformer; `ContextFlairEmbeddings`, saved with N inside the tagger.

Words cut at line ends (a corpus read with `line_break`): `joined.py`, `JoinedFlairEmbeddings`, the LM reading each cut
word whole (`join_breaks`), in Flair's path and in `CharLMFeatures` alike.
"""

import threading
from pathlib import Path
from typing import Any, Optional, Union

import torch
from flair.data import Sentence
from flair.embeddings import FlairEmbeddings, TokenEmbeddings

from flairsuite.charlm.recipes import languages
from flairsuite.charlm.summary import trained_on_unspaced_text
from flairsuite.embeddings.context import ContextFlairEmbeddings, context_chars, read_in_context, start_marker
from flairsuite.embeddings.joined import joined_reading
from flairsuite.embeddings.lstm import Affine, Recurrence, doubled_cell_gate
from flairsuite.embeddings.spec_name import split_name
from flairsuite.files.paths import charlm_dir

DIRECTIONS = ("forward", "backward")
CHARLM_MODEL = "best-lm.pt"  # the file CharLMTrainer writes in each model folder


def check_name(name: str) -> Optional[str]:
    """What to write instead of a name without a direction or with a bad option; None for a good name."""
    model, options = split_name(name)
    if not model.endswith(tuple(f"-{direction}" for direction in DIRECTIONS)):
        return "write charlm:NAME-forward or charlm:NAME-backward"
    try:
        context_chars(options)
    except ValueError as err:
        return str(err)
    return None


def artifact(name: str, home: Path) -> Path:
    """The LM file of model `name` below `home`."""
    return charlm_dir(home) / split_name(name)[0] / CHARLM_MODEL


def build_command(name: str) -> str:
    """The `train-charlm` call that trains model `name` (a recipe language, or any name with --lang)."""
    prefix, _, direction = split_name(name)[0].rpartition("-")
    lang = f"--lang {prefix}" if prefix in languages() else f"--lang LANG --name {prefix}"
    return f"flairsuite train-charlm {lang} --direction {direction}"


UNSPACED = b"read unspaced"  # keys the vectors of an LM read without spaces apart from those read the old way (Flair's)


def digested(path: Optional[Path]) -> list[Union[Path, bytes]]:
    """What a cache key digests: the LM file, and for an LM of text without spaces how it is read (`resolve`)."""
    return [path, UNSPACED] if path is not None and trained_on_unspaced_text(path) else [path]


def summarize(summary: dict[str, Any]) -> dict[str, Any]:
    """What a run records of the LM's training (`summary.json` of train-charlm): characters, hours, perplexity, size."""
    return {"chars": summary.get("chars_seen"), "hours": summary.get("hours"), "valid_ppl": summary.get("valid_ppl"),
            "hidden_size": summary.get("hyper", {}).get("hidden_size")}


def frozen(fine_tune: bool) -> bool:
    """Always fixed while a tagger trains (the suite never fine-tunes its LMs)."""
    return True


class UnspacedFlairEmbeddings(FlairEmbeddings):
    """`FlairEmbeddings` reading text without spaces, whose saved parameters keep `with_whitespace` (Flair's own
    `to_params` drops it, and a reloaded tagger would take the state after the next character). Not registered
    with Flair: it saves as `FlairEmbeddings`, so plain `SequenceTagger.load` rebuilds the same reading."""

    def to_params(self) -> dict[str, Any]:
        return {**super().to_params(), "with_whitespace": self.with_whitespace}


def context(name: str) -> int:
    """How many characters of neighbouring sentences the embedding of `name` reads on each side (`@contextN`; 0: none)."""
    return context_chars(split_name(name)[1])


def resolve(name: str, path: Optional[Path]) -> TokenEmbeddings:
    """Flair's embedding of the LM file. An LM of a language written without spaces reads each sentence as it learned
    text, without spaces between the tokens (one per character), and gives each token the state after its own last
    character; Flair's defaults (tokens joined by spaces, the state after the following space) would feed it spaced
    text it never saw and give each character the state after the next one. With `@contextN`: the same LM reading
    each sentence within its document (`ContextFlairEmbeddings`)."""
    unspaced = path is not None and trained_on_unspaced_text(path)
    flags = {"tokenized_lm": False, "with_whitespace": False} if unspaced else {}
    if chars := context(name):
        return ContextFlairEmbeddings(str(path), context_chars=chars, name=f"{path}@context{chars}", **flags)
    if unspaced:
        return UnspacedFlairEmbeddings(str(path), **flags)
    return FlairEmbeddings(str(path))


def join_breaks(embedding: TokenEmbeddings) -> TokenEmbeddings:
    """The resolved embedding reading words cut at line ends whole (`joined.py`)."""
    return joined_reading(embedding)  # type: ignore[arg-type]


def recognizes(embedding: TokenEmbeddings) -> bool:
    """A FlairEmbeddings whose LM is a plain unidirectional LSTM with biases (every Flair character LM)."""
    if not isinstance(embedding, FlairEmbeddings):
        return False
    rnn = embedding.lm.rnn
    return isinstance(rnn, torch.nn.LSTM) and rnn.bias and not rnn.bidirectional and rnn.proj_size == 0


class CharLMFeatures:
    """`FlairEmbeddings` vectors: the LM's hidden state after each token (Flair's offsets), each sentence read in its
    document context where the embedding has one (`ContextFlairEmbeddings`), and its words cut at line ends whole where
    the embedding joins them (`JoinedFlairEmbeddings`)."""

    def __init__(self, embedding: FlairEmbeddings, quantize: bool) -> None:
        self.embedding = embedding
        lm = embedding.lm
        self.dictionary = lm.dictionary
        self.start = start_marker(embedding)
        rnn = lm.rnn
        weights = [
            (doubled_cell_gate(getattr(rnn, f"weight_ih_l{k}")), doubled_cell_gate(getattr(rnn, f"bias_ih_l{k}") + getattr(rnn, f"bias_hh_l{k}")))
            for k in range(rnn.num_layers)
        ]
        # the first layer's input projection of every character, looked up per step
        self.table = lm.encoder.weight.detach() @ weights[0][0].T + weights[0][1]
        self.inputs = [Affine(weight, bias, quantize) for weight, bias in weights[1:]]
        self.recurrences = [Recurrence(getattr(rnn, f"weight_hh_l{k}"), quantize) for k in range(rnn.num_layers)]
        self.proj = None if lm.proj is None else Affine(lm.proj.weight, lm.proj.bias, quantize)
        self.kept: dict[int, torch.Tensor] = {}  # per layer: the states' memory, kept from batch to batch
        self.keeping = threading.Lock()  # held by the call that uses `kept`; a concurrent call takes new memory

    def states(self, ids: torch.Tensor, lengths: list[int], memory: dict[int, torch.Tensor]) -> torch.Tensor:
        """The LM's output (time, batch, dim) for character ids (time, batch) sorted longest first.

        The last layer's values past a sequence's end are left as they were where nothing maps them (no projection):
        the features take real positions only. A layer that an affine map reads whole is zeroed there, since int8
        scales each call by its largest value.
        """
        first, *later = self.recurrences
        mapped = [layer < len(later) or self.proj is not None for layer in range(len(self.recurrences))]
        out = first.run(self.table, ids, lengths, False, self.buffer(memory, 0, ids, first, mapped[0]))
        for layer, (affine, recurrence) in enumerate(zip(self.inputs, later), start=1):
            projected = affine(out)
            out = recurrence.run(projected, None, lengths, False, self.buffer(memory, layer, ids, recurrence, mapped[layer]))
        return out if self.proj is None else self.proj(out)

    def buffer(self, memory: dict[int, torch.Tensor], layer: int, ids: torch.Tensor, recurrence: Recurrence, zeroed: bool) -> torch.Tensor:
        """A (time, batch, hidden) output tensor for `layer` (zeroed or not: a forward recurrence writes every row that
        it reads) in `memory`'s tensor for the layer, grown as needed. Kept from batch to batch, it saves a new zeroed
        tensor a batch and the faulting in of its pages: 6-11 % of the released LMs' time (benchmarks/README.md)."""
        size = ids.numel() * recurrence.hidden_size
        held = memory.get(layer)
        if held is None or held.numel() < size or held.device != self.table.device:
            held = memory[layer] = self.table.new_empty(size)
        view = held[:size].view(*ids.shape, recurrence.hidden_size)
        return view.zero_() if zeroed else view

    def __call__(self, sentences: list[Sentence]) -> torch.Tensor:
        read = read_in_context(self.embedding, sentences, getattr(self.embedding, "context_chars", 0))
        marked = [self.start + (text if self.embedding.is_forward_lm else text[::-1]) + " " for text, _ in read]
        order = sorted(range(len(marked)), key=lambda i: -len(marked[i]))
        column = {i: position for position, i in enumerate(order)}
        ids = torch.zeros(len(marked[order[0]]), len(marked), dtype=torch.long)
        for i in order:
            ids[: len(marked[i]), column[i]] = torch.tensor(self.dictionary.get_idx_for_items(list(marked[i])))
        width = len(marked)
        index = torch.tensor([t * width + column[i] for i, (_, offsets) in enumerate(read) for t in offsets], device=self.table.device)
        mine = self.keeping.acquire(blocking=False)
        try:
            states = self.states(ids.to(self.table.device), [len(marked[i]) for i in order], self.kept if mine else {})
            return states.reshape(-1, states.size(2))[index]  # a copy: `kept` may be overwritten once released
        finally:
            if mine:
                self.keeping.release()
