"""What the suite's training loop needs from a tagger, and the adapter that gives plain Flair taggers it.

The loop feeds cached embeddings, never Flair `Sentence` objects: a batch is a zero-padded float
tensor `(batch, longest, embedding_length)` with its `lengths` (a CPU LongTensor sorted longest
first, as `pack_padded_sequence` wants), and gold tags as BIO strings per sentence (`B-PER`, `I-PER`,
`O`). A tagger model either has the two methods of `FeatureTagger` itself (the suite's own taggers)
or is a plain `flair.models.SequenceTagger` with `tag_format="BIO"`, served by the functions below.
"""

from typing import Protocol, runtime_checkable

import torch
from flair.models import SequenceTagger
from flair.models.sequence_tagger_utils.crf import START_TAG, STOP_TAG

from flairsuite.models.crf import Tagged, crf_decode, crf_loss, emissions, gold_tensor, padding_mask, tagged


@runtime_checkable
class FeatureTagger(Protocol):
    """A tagger trained and decoded from embedding tensors."""

    def features_loss(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor, gold: list[list[str]]) -> torch.Tensor:
        """The loss summed over the batch's tokens (as Flair's taggers sum it)."""

    def features_decode(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> Tagged:
        """The raw predicted BIO tag of every token, before any span repair, with a confidence."""


def features_loss(model: torch.nn.Module, sentence_tensor: torch.Tensor, lengths: torch.Tensor, gold: list[list[str]]) -> torch.Tensor:
    """`model.features_loss`, or a plain SequenceTagger's loss: CRF negative log-likelihood or cross-entropy, summed."""
    if isinstance(model, FeatureTagger):
        return model.features_loss(sentence_tensor, lengths, gold)
    scores = emissions(model, sentence_tensor, lengths)
    tags = gold_tensor(model.label_dictionary, gold, scores.size(1)).to(scores.device)
    if model.use_crf:
        return crf_loss(scores, tags, lengths, model.crf.transitions, *start_stop(model))
    mask = padding_mask(lengths, scores.size(1), scores.device)
    return torch.nn.functional.cross_entropy(scores[mask], tags[mask], reduction="sum")


def features_decode(model: torch.nn.Module, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> Tagged:
    """`model.features_decode`, or a plain SequenceTagger's Viterbi (CRF) or arg-max (softmax) decoding."""
    if isinstance(model, FeatureTagger):
        return model.features_decode(sentence_tensor, lengths)
    return decode_scores(model, emissions(model, sentence_tensor, lengths), lengths)


def decode_scores(model: SequenceTagger, scores: torch.Tensor, lengths: torch.Tensor) -> Tagged:
    """A plain SequenceTagger's tags from its emission scores (batch, longest, tags): Viterbi with its CRF, else softmax arg-max."""
    if model.use_crf:
        tags, confidences = crf_decode(scores, lengths, model.crf.transitions, *start_stop(model))
    else:
        confidences, tags = torch.softmax(scores, dim=2).max(dim=2)
    return tagged(model.label_dictionary, tags, confidences, lengths)


def start_stop(model: SequenceTagger) -> tuple[int, int]:
    """Ids of <START> and <STOP> in a CRF tagger's label dictionary."""
    index = model.label_dictionary.get_idx_for_item
    return index(START_TAG), index(STOP_TAG)
