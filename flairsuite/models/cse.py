"""Class-Start-End (CSE) tagging (Zöllner et al. 2021, small-BERT German NER, §4.1, Table 4).

CSE splits NER into three per-token objectives instead of one BIO tag per token:

    Tokens  Peter lebt in Frank _furt am  Main
    Start   1     0    0  1     0     0   0      start = 1 on the first token of an entity (B-)
    End     1     0    0  0     0     0   1      end = 1 on the last token of an entity
    Class   Per   O    O  Loc   Loc   Loc Loc    the entity type without B/I, O outside entities

`ClassStartEndTagger` puts three linear heads on the token representation (the embeddings after
Flair's word dropout 0.05 and locked dropout 0.5, the `SequenceTagger` defaults): start and end,
each a logistic sigmoid trained with binary cross-entropy (Eq. 5), and class, a softmax over the
entity types plus `O` trained with cross-entropy on every token (the paper's output has e + 1
classes, "the possible entities and the other class", and Table 4 gives `O` targets). The loss is
the sum of the three, each summed over the batch's tokens as Flair's taggers sum theirs.

Decoding (`decode_cse`, §4.1): tokens with a start (end) probability above 0.5 are start (end)
markers. Between each start and the next start (or the sentence end) without an end marker, the
token of highest end probability in that window (from the start up to before the next start) is
added as an end; then, symmetrically, between each end and the previous end (or the sentence
start) without a start marker, the token of highest start probability in that window (after the
previous end, up to this end) is added as a start; a tie goes to the position giving the shorter
entity. Starts and ends then alternate, and each start pairs with the next end (a token can be
both). Spans are (first token, end exclusive, type, confidence). An entity's class is the arg-max over the entity
types (never `O`: the start and end heads decide whether there is an entity) of the class
probabilities averaged over its tokens, start and end included; its confidence is that averaged
probability. The result is always well-formed BIO (`spans_to_bio`), so Entity-Fix leaves it unchanged.

Saving and loading: `model.save(path)`; `ClassStartEndTagger.load(path)` always works, and
`flair.nn.Classifier.load(path)` works once this module has been imported (Flair dispatches on the
saved class name among the imported subclasses of `Classifier`; importing `flairsuite` alone does
not import it). Plain Flair without flairsuite cannot load a CSE model.
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional, Union

import flair.nn
import numpy as np
import torch
from flair.data import Dictionary, Sentence
from flair.datasets import DataLoader, FlairDatapointDataset
from flair.embeddings import TokenEmbeddings
from flair.training_utils import EmbeddingStorageMode, store_embeddings
from numpy.typing import ArrayLike

from flairsuite.corpora.tags import OUTSIDE, bio_spans, split_tag
from flairsuite.embeddings import token_vectors
from flairsuite.models.crf import Tagged, padding_mask

CseSpan = tuple[int, int, str, float]  # (first token, end exclusive, entity type, confidence)
THRESHOLD = 0.5


def decode_cse(
    start: ArrayLike, end: ArrayLike, classes: ArrayLike, types: list[str], threshold: float = THRESHOLD
) -> list[CseSpan]:
    """The entities of one sentence from its start and end probabilities (tokens) and class probabilities (tokens x types)."""
    class_probabilities = np.asarray(classes, dtype=float)
    boundaries = cse_boundaries(np.asarray(start, dtype=float), np.asarray(end, dtype=float), threshold)
    return [_classify(first, last + 1, class_probabilities, types) for first, last in boundaries]


def cse_boundaries(start: np.ndarray, end: np.ndarray, threshold: float = THRESHOLD) -> list[tuple[int, int]]:
    """(first, last) token of every entity, both inclusive, with the missing ends and starts added."""
    length = len(start)
    starts = set(np.flatnonzero(start > threshold).tolist())
    ends = _add_missing(sorted(starts), set(np.flatnonzero(end > threshold).tolist()), end)
    # A missing start is a missing end of the reversed sentence.
    reversed_starts = _add_missing(sorted(length - 1 - i for i in ends), {length - 1 - i for i in starts}, start[::-1])
    return list(zip(sorted(length - 1 - i for i in reversed_starts), sorted(ends)))


def _add_missing(anchors: list[int], markers: set[int], probability: np.ndarray) -> set[int]:
    """`markers`, plus the most probable position of each window [anchor, next anchor) that has none."""
    found = set(markers)
    for first, stop in zip(anchors, [*anchors[1:], len(probability)]):
        if not any(first <= marker < stop for marker in markers):
            found.add(first + int(np.argmax(probability[first:stop])))
    return found


def _classify(first: int, stop: int, classes: np.ndarray, types: list[str]) -> CseSpan:
    """The span [first, stop) with the type of highest mean class probability over its tokens."""
    mean = classes[first:stop].mean(axis=0)
    best = int(np.argmax(mean))
    return first, stop, types[best], float(mean[best])


def spans_to_bio(spans: Iterable[CseSpan], length: int) -> list[str]:
    """BIO tags of a sentence of `length` tokens with the given non-overlapping spans."""
    tags = [OUTSIDE] * length
    for first, stop, entity_type, _ in spans:
        tags[first:stop] = [f"B-{entity_type}"] + [f"I-{entity_type}"] * (stop - first - 1)
    return tags


class ClassStartEndTagger(flair.nn.Classifier[Sentence]):
    """CSE tagger: start, end and class heads on token embeddings; predicts span labels of `tag_type`."""

    def __init__(
        self,
        embeddings: TokenEmbeddings,
        tag_dictionary: Dictionary,
        tag_type: str,
        word_dropout: float = 0.05,
        locked_dropout: float = 0.5,
        threshold: float = THRESHOLD,
    ) -> None:
        """`tag_dictionary` holds the entity types, as `corpus.make_label_dictionary(tag_type, add_unk=False)` makes it."""
        super().__init__()
        self.embeddings = embeddings
        self.label_dictionary = tag_dictionary
        self.tag_type = tag_type
        self.types = [item for item in tag_dictionary.get_items() if item not in (OUTSIDE, "<unk>")]
        self.classes = [OUTSIDE, *self.types]  # class head outputs; column 0 is O
        self.class_index = {name: i for i, name in enumerate(self.classes)}
        self.threshold = threshold
        self.word_dropout_rate = word_dropout
        self.locked_dropout_rate = locked_dropout
        self.word_dropout = flair.nn.WordDropout(word_dropout)
        self.locked_dropout = flair.nn.LockedDropout(locked_dropout)
        size = embeddings.embedding_length
        self.start = torch.nn.Linear(size, 1)
        self.end = torch.nn.Linear(size, 1)
        self.classifier = torch.nn.Linear(size, len(self.classes))
        self.to(flair.device)

    @property
    def label_type(self) -> str:
        """The span label type the model predicts."""
        return self.tag_type

    def forward(self, sentence_tensor: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Start and end logits (batch, longest) and class logits (batch, longest, classes)."""
        features = self.locked_dropout(self.word_dropout(sentence_tensor))
        return self.start(features).squeeze(-1), self.end(features).squeeze(-1), self.classifier(features)

    def features_loss(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor, gold: list[list[str]]) -> torch.Tensor:
        """Start, end and class loss, summed over the batch's tokens."""
        start_logits, end_logits, class_logits = (logits.float() for logits in self.forward(sentence_tensor))  # float32 under autocast
        device = sentence_tensor.device
        mask = padding_mask(lengths, sentence_tensor.shape[1], device)
        start_target, end_target, class_target = self._targets(gold, device)
        binary = torch.nn.functional.binary_cross_entropy_with_logits
        return (
            binary(start_logits[mask], start_target, reduction="sum")
            + binary(end_logits[mask], end_target, reduction="sum")
            + torch.nn.functional.cross_entropy(class_logits[mask], class_target, reduction="sum")
        )

    def _targets(self, gold: list[list[str]], device: torch.device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Start, end and class targets of the batch's tokens, sentence after sentence."""
        start, end, classes = [], [], []
        for tags in gold:
            spans = bio_spans(tags)
            firsts, lasts = {first for first, _, _ in spans}, {stop - 1 for _, stop, _ in spans}
            start += [float(i in firsts) for i in range(len(tags))]
            end += [float(i in lasts) for i in range(len(tags))]
            classes += [self.class_index[split_tag(tag)[1] or OUTSIDE] for tag in tags]
        return torch.tensor(start, device=device), torch.tensor(end, device=device), torch.tensor(classes, device=device)

    def decode_spans(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> list[tuple[list[CseSpan], np.ndarray]]:
        """Per sentence: its CSE spans and the O-class probability of each token."""
        with torch.no_grad():
            start_logits, end_logits, class_logits = self.forward(sentence_tensor)
            start, end = torch.sigmoid(start_logits).cpu().numpy(), torch.sigmoid(end_logits).cpu().numpy()
            classes = torch.softmax(class_logits, dim=-1).cpu().numpy()
        decoded = []
        for i, length in enumerate(lengths.tolist()):
            spans = decode_cse(start[i, :length], end[i, :length], classes[i, :length, 1:], self.types, self.threshold)
            decoded.append((spans, classes[i, :length, 0]))
        return decoded

    def features_decode(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> Tagged:
        """BIO tags from the CSE spans; confidence: the span's for entity tokens, P(O) for the others."""
        tagged = []
        for spans, outside in self.decode_spans(sentence_tensor, lengths):
            confidence = outside.tolist()
            for first, stop, _, score in spans:
                confidence[first:stop] = [score] * (stop - first)
            tagged.append(list(zip(spans_to_bio(spans, len(confidence)), confidence)))
        return tagged

    def _embed(self, sentences: list[Sentence]) -> tuple[torch.Tensor, torch.Tensor]:
        """The sentences' embeddings as a zero-padded (batch, longest, dim) tensor, and their lengths."""
        # the vectors stay on the tokens: Flair's `store_embeddings` keeps or clears them (embedding storage mode)
        flat = token_vectors(self.embeddings, sentences, clear=False)
        vectors = list(flat.split([len(sentence) for sentence in sentences]))
        lengths = torch.tensor([len(sentence) for sentence in sentences], dtype=torch.long)
        return torch.nn.utils.rnn.pad_sequence(vectors, batch_first=True).to(flair.device), lengths

    def _gold(self, sentence: Sentence) -> list[str]:
        """The sentence's gold `tag_type` spans as BIO tags."""
        spans = [(label.data_point[0].idx - 1, label.data_point[-1].idx, label.value, 1.0) for label in sentence.get_labels(self.tag_type)]
        return spans_to_bio(spans, len(sentence))

    def forward_loss(self, sentences: list[Sentence]) -> tuple[torch.Tensor, int]:
        """The summed loss of a batch of labeled sentences and its number of tokens."""
        sentences = [sentence for sentence in sentences if len(sentence) > 0]
        if not sentences:
            return torch.tensor(0.0, device=flair.device, requires_grad=True), 0
        sentence_tensor, lengths = self._embed(sentences)
        gold = [self._gold(sentence) for sentence in sentences]
        return self.features_loss(sentence_tensor, lengths, gold), int(lengths.sum())

    def predict(
        self,
        sentences: Union[list[Sentence], Sentence],
        mini_batch_size: int = 32,
        return_probabilities_for_all_classes: bool = False,
        verbose: bool = False,
        label_name: Optional[str] = None,
        return_loss: bool = False,
        embedding_storage_mode: EmbeddingStorageMode = "none",
    ) -> Optional[tuple[torch.Tensor, int]]:
        """Add the predicted spans to the sentences as `label_name` (default: `tag_type`) span labels with confidences.

        `return_probabilities_for_all_classes` and `verbose` are accepted for Flair's interface and ignored.
        """
        label_name = label_name or self.tag_type
        sentences = [sentences] if isinstance(sentences, Sentence) else sentences
        loss, count = torch.zeros(1, device=flair.device), 0
        with torch.no_grad():
            for batch in DataLoader(FlairDatapointDataset([s for s in sentences if len(s) > 0]), batch_size=mini_batch_size):
                sentence_tensor, lengths = self._embed(batch)
                if return_loss:
                    loss += self.features_loss(sentence_tensor, lengths, [self._gold(sentence) for sentence in batch])
                    count += int(lengths.sum())
                for sentence, (spans, _) in zip(batch, self.decode_spans(sentence_tensor, lengths)):
                    sentence.remove_labels(label_name)
                    for first, stop, entity_type, score in spans:
                        sentence[first:stop].add_label(label_name, value=entity_type, score=score)
                store_embeddings(batch, storage_mode=embedding_storage_mode)
        return (loss, count) if return_loss else None

    def _get_state_dict(self) -> dict[str, Any]:
        """Weights plus everything the constructor needs."""
        return {
            **super()._get_state_dict(),
            "embeddings": self.embeddings.save_embeddings(use_state_dict=False),
            "tag_dictionary": self.label_dictionary,
            "tag_type": self.tag_type,
            "word_dropout": self.word_dropout_rate,
            "locked_dropout": self.locked_dropout_rate,
            "threshold": self.threshold,
        }

    @classmethod
    def _init_model_with_state_dict(cls, state: dict[str, Any], **kwargs: Any) -> "ClassStartEndTagger":
        """The model saved in `state`."""
        return super()._init_model_with_state_dict(
            state,
            embeddings=state["embeddings"],
            tag_dictionary=state["tag_dictionary"],
            tag_type=state["tag_type"],
            word_dropout=state["word_dropout"],
            locked_dropout=state["locked_dropout"],
            threshold=state["threshold"],
            **kwargs,
        )

    @classmethod
    def load(cls, model_path: Union[str, Path, dict[str, Any]]) -> "ClassStartEndTagger":
        """A saved CSE tagger."""
        return super().load(model_path)
