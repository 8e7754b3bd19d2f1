"""LCRF-NER: a linear-chain CRF that knows the tag scheme's forbidden transitions (Zöllner et al. 2021, §4.2).

The paper's transition matrix (Eq. 7) is

    T = (A + ω_factor · F) ⊙ W − ω_absolute · F

with F the 0/1 matrix of transitions the tag scheme forbids (Figure 1: I-X only after B-X or I-X),
A = 1 − F, W trainable and two trainable scalars: ω_factor scales and ω_absolute shifts every
forbidden transition at once, so the model learns "forbidden is bad" from two numbers instead of
one weight per forbidden pair. ω_factor = 1, ω_absolute = 0 (the initial values, so training starts
from exactly Flair's CRF) make T = W.

Layout: everything is in Flair's CRF layout `transitions[to, from]` over the model's label
dictionary, which includes `<START>` and `<STOP>` (the paper's F is the transpose, rows = previous
tag). F also marks the transitions into `<START>` and out of `<STOP>`; those entries of T are kept at
Flair's constant −10000 instead of Eq. 7's value, because a negative ω_factor would otherwise turn
W's −10000 there into a large reward (Flair's own −10000 entries never change in training either:
their gradient underflows to zero).

Loss and decoding (`LCRFNER.loss`, `LCRFNER.decode`) loop over time only, all sentences of a batch at
once, with a padding mask; both give the values of Flair's `ViterbiLoss` (summed over the batch) and
`ViterbiDecoder` (tags and confidences) for transitions T.

`LCRFNERTagger` is a `flair.models.SequenceTagger` whose `crf` is an `LCRFNER`; its `forward` returns
Flair's CRF scores built with T, so Flair's own `predict`, `evaluate` and loss work unchanged (at
Flair's speed), and the suite's loop uses the vectorised `features_loss` / `features_decode`.
Saving folds T into the standard `crf.transitions` parameter and writes `__cls__` "SequenceTagger":
plain Flair's `SequenceTagger.load` rebuilds a plain CRF tagger that decodes identically. W and the
two ω go into the extra top-level key `lcrf_ner` of the saved dict, which `LCRFNERTagger.load` reads
to rebuild the trainable model for further training.
"""

from typing import Any

import flair
import torch
from flair.data import Dictionary
from flair.embeddings import TokenEmbeddings
from flair.models import SequenceTagger
from flair.models.sequence_tagger_utils.crf import START_TAG, STOP_TAG

from flairsuite.errors import FlairsuiteError
from flairsuite.models.crf import IMPOSSIBLE, Tagged, crf_decode, crf_loss, emissions, gold_tensor, tagged

STATE_KEY = "lcrf_ner"  # the saved dict's key for W and the two ω
TAG_FORMATS = ("BIO", "BIOES")

Tag = tuple[str, str]  # (B/I/E/S, entity type), or (O / <START> / <STOP>, "")


def tag_scheme(tag_format: str) -> str:
    """`tag_format` upper-cased, if LCRF-NER knows it."""
    scheme = tag_format.upper()
    if scheme not in TAG_FORMATS:
        raise FlairsuiteError(f"LCRF-NER: unknown tag format {tag_format!r}; use one of {', '.join(TAG_FORMATS)}")
    return scheme


def _split(tag: str, scheme: str) -> Tag:
    """`B-PER` -> ("B", "PER"), `O` -> ("O", ""), `<START>` -> ("<START>", "")."""
    if tag in (START_TAG, STOP_TAG, "O"):
        return tag, ""
    prefix, _, kind = tag.partition("-")
    if prefix not in set(scheme) - {"O"} or not kind:
        raise FlairsuiteError(f"LCRF-NER: {tag!r} is not a {scheme} tag")
    return prefix, kind


def _allowed(previous: Tag, following: Tag, scheme: str) -> bool:
    """Whether the tag scheme lets `following` come right after `previous`."""
    (before, kind_before), (after, kind_after) = previous, following
    if after == START_TAG or before == STOP_TAG:
        return False
    if after in ("I", "E"):
        return before in ("B", "I") and kind_before == kind_after
    if scheme == "BIOES":  # O, B, S and <STOP> only outside an entity
        return before in ("O", "E", "S") or (before == START_TAG and after != STOP_TAG)
    return True


def forbidden_transitions(label_dictionary: Dictionary, tag_format: str) -> torch.Tensor:
    """F in Flair's layout: F[to, from] = 1 where the scheme forbids tag `to` right after tag `from`."""
    scheme = tag_scheme(tag_format)
    tags = [_split(tag, scheme) for tag in label_dictionary.get_items()]
    return torch.tensor([[float(not _allowed(before, after, scheme)) for before in tags] for after in tags])


class LCRFNER(torch.nn.Module):
    """The transitions of Eq. 7 with a vectorised CRF loss and Viterbi decoder, in Flair's CRF layout."""

    def __init__(self, label_dictionary: Dictionary, tag_format: str) -> None:
        super().__init__()
        forbidden = forbidden_transitions(label_dictionary, tag_format)
        self.start = label_dictionary.get_idx_for_item(START_TAG)
        self.stop = label_dictionary.get_idx_for_item(STOP_TAG)
        fixed = torch.zeros_like(forbidden, dtype=torch.bool)
        fixed[self.start, :] = fixed[:, self.stop] = True
        self.register_buffer("forbidden", forbidden, persistent=False)
        self.register_buffer("allowed", 1.0 - forbidden, persistent=False)
        self.register_buffer("fixed", fixed, persistent=False)
        # W starts as Flair's CRF transitions do: standard normal, -10000 into <START> and out of <STOP>.
        self.weights = torch.nn.Parameter(torch.randn(forbidden.shape).masked_fill(fixed, IMPOSSIBLE))
        self.omega_factor = torch.nn.Parameter(torch.tensor(1.0))
        self.omega_absolute = torch.nn.Parameter(torch.tensor(0.0))

    @property
    def transitions(self) -> torch.Tensor:
        """T = (A + ω_factor F) ⊙ W − ω_absolute F, with Flair's −10000 into <START> and out of <STOP>."""
        effective = (self.allowed + self.omega_factor * self.forbidden) * self.weights - self.omega_absolute * self.forbidden
        return effective.masked_fill(self.fixed, IMPOSSIBLE)

    def loss(self, emissions: torch.Tensor, tags: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """The negative log-likelihood of the gold `tags` (batch, longest) under T, summed over the batch."""
        return crf_loss(emissions, tags, lengths, self.transitions, self.start, self.stop)

    def decode(self, emissions: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The best tag ids (batch, longest) under T and Flair's confidences."""
        return crf_decode(emissions, lengths, self.transitions, self.start, self.stop)


class LCRFNERTagger(SequenceTagger):
    """Flair's SequenceTagger with LCRF-NER as its CRF; saved files load in plain Flair (see the module docstring)."""

    def __init__(self, embeddings: TokenEmbeddings, tag_dictionary: Dictionary, tag_type: str, tag_format: str = "BIO", **kwargs: Any) -> None:
        """SequenceTagger's arguments; `use_crf` is always True."""
        if not kwargs.pop("use_crf", True):
            raise FlairsuiteError("LCRF-NER is a CRF tagger: it cannot be built with use_crf=False")
        tag_format = tag_scheme(tag_format)
        super().__init__(embeddings, tag_dictionary, tag_type, tag_format=tag_format, use_crf=True, **kwargs)
        self.crf = LCRFNER(self.label_dictionary, self.tag_format)
        self.to(flair.device)

    def emissions(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Per token the tag scores before the CRF (Flair's forward pass up to the linear map)."""
        return emissions(self, sentence_tensor, lengths)

    def forward(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Flair's CRF scores (features[b, t, to, from], lengths, transitions) with the transitions T."""
        transitions = self.crf.transitions
        return self.emissions(sentence_tensor, lengths).unsqueeze(-1) + transitions, lengths, transitions

    def features_loss(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor, gold: list[list[str]]) -> torch.Tensor:
        """The CRF negative log-likelihood summed over the batch (as Flair's ViterbiLoss)."""
        scores = self.emissions(sentence_tensor, lengths)
        return self.crf.loss(scores, gold_tensor(self.label_dictionary, gold, scores.size(1)).to(scores.device), lengths)

    @torch.no_grad()
    def features_decode(self, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> Tagged:
        """The Viterbi tags with Flair's confidences."""
        tags, confidences = self.crf.decode(self.emissions(sentence_tensor, lengths), lengths)
        return tagged(self.label_dictionary, tags, confidences, lengths)

    def _get_state_dict(self) -> dict[str, Any]:
        """A plain SequenceTagger's state with T as `crf.transitions`; W and the ω under `lcrf_ner`."""
        state = super()._get_state_dict()
        weights = state["state_dict"]
        state[STATE_KEY] = {name: weights.pop(f"crf.{name}") for name, _ in self.crf.named_parameters()}
        weights["crf.transitions"] = self.crf.transitions.detach().clone()
        state["__cls__"] = SequenceTagger.__name__
        return state

    @classmethod
    def _init_model_with_state_dict(cls, state: dict[str, Any], **kwargs: Any) -> "LCRFNERTagger":
        """The trainable LCRF-NER tagger of a file saved by `save` (used by `LCRFNERTagger.load`)."""
        if STATE_KEY not in state:
            raise FlairsuiteError("LCRF-NER: the model file has no LCRF-NER weights (saved by plain Flair?); load it with SequenceTagger.load")
        weights = {name: value for name, value in state["state_dict"].items() if name != "crf.transitions"}
        weights.update({f"crf.{name}": value for name, value in state[STATE_KEY].items()})
        return super()._init_model_with_state_dict({**state, "state_dict": weights}, **kwargs)
