"""How unsure a tagger is of each sentence: the measures `suggest` ranks by and active learning selects with.

Every measure is computed from the tagger's emission scores (`flairsuite.models.crf.emissions`) and is
higher for a sentence the model is less sure of. Per sentence of n tokens:

- `uncertainty`, a CRF tagger (`bilstm-crf`, `map-crf`, `lcrf-ner`, ...): one minus the length-normalised
  probability of the best (Viterbi) path, 1 - p(y*|x)^(1/n), with log p(y*|x) = score(y*) - log Z and log Z
  by the forward algorithm (`crf.log_partition`). Since 1 - exp(log p / n) is monotone in log p / n, this
  ranks sentences exactly as the MNLP of Shen et al. (2017, "Deep Active Learning for Named Entity
  Recognition": maximum normalised log-probability, the lowest first).
- `uncertainty`, a tagger with a softmax head (`map`): the mean token entropy, (1/n) sum_t H(p_t), in nats.
- `entropy` (Settles & Craven 2008, "token entropy", length-normalised): the mean entropy of the tags'
  marginal distributions, (1/n) sum_t H(p(y_t|x)); for a CRF the marginals come from the forward-backward
  recursion (the gradient of log Z with respect to the emissions), for a softmax head they are its outputs,
  so there `entropy` equals `uncertainty`.

A document (several sentences) gets the same measures over all its tokens: 1 - exp(sum log p / sum n) and
the token-weighted mean entropy (`Scores.combined`).
"""

from dataclasses import dataclass
from typing import Sequence

import torch
from flair.models import SequenceTagger

from flairsuite.errors import FlairsuiteError
from flairsuite.models.crf import Tagged, _gold_score, crf_decode, emissions, log_partition, padding_mask, tagged
from flairsuite.models.protocol import start_stop

MEASURES = ("uncertainty", "entropy")


@dataclass(frozen=True)
class Scores:
    """What a tagger says about one sentence (or a document): its tags, token count, log p of the best path
    (None for a softmax head) and summed token entropy (of the marginals)."""

    tags: list[tuple[str, float]]
    tokens: int
    best_log_probability: float | None
    entropy_sum: float

    @property
    def uncertainty(self) -> float:
        """1 - p(best path)^(1/n) for a CRF, the mean token entropy for a softmax head (see the module docstring)."""
        if self.best_log_probability is None:
            return self.entropy
        return max(0.0, float(-torch.expm1(torch.tensor(self.best_log_probability / max(self.tokens, 1), dtype=torch.float64))))

    @property
    def entropy(self) -> float:
        """The mean token entropy of the tag marginals, in nats."""
        return self.entropy_sum / max(self.tokens, 1)

    def measure(self, name: str) -> float:
        """The measure `name` (one of MEASURES)."""
        if name not in MEASURES:
            raise FlairsuiteError(f"unknown uncertainty measure '{name}' (known: {', '.join(MEASURES)})")
        return self.uncertainty if name == "uncertainty" else self.entropy

    @staticmethod
    def combined(parts: Sequence["Scores"]) -> "Scores":
        """The scores of a document made of `parts`: their tags in order, log probabilities and entropies summed."""
        logs = [part.best_log_probability for part in parts]
        return Scores(
            [tag for part in parts for tag in part.tags],
            sum(part.tokens for part in parts),
            None if any(value is None for value in logs) else float(sum(logs)),  # type: ignore[arg-type]
            sum(part.entropy_sum for part in parts),
        )


def supports(model: torch.nn.Module) -> bool:
    """Whether the measures apply: a Flair SequenceTagger (CRF or softmax head; LCRF-NER included), not CSE's span heads."""
    return isinstance(model, SequenceTagger)


def check_supported(model: torch.nn.Module, where: str) -> None:
    """A one-line error naming `where` for a model the measures do not apply to."""
    if not supports(model):
        raise FlairsuiteError(f"{where}: a {type(model).__name__} has no per-token tag distribution to measure uncertainty on: "
                              "use a SequenceTagger (bilstm-crf, map-crf, map, lcrf-ner)")


def _entropy(probabilities: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Per sentence the summed entropy (nats) of the token distributions (batch, longest, tags) at the real tokens."""
    logs = torch.log(probabilities.clamp_min(1e-300))
    return (-(probabilities * logs).sum(dim=2)).masked_fill(~mask, 0.0).sum(dim=1)


def scores_from_emissions(model: SequenceTagger, scores: torch.Tensor, lengths: torch.Tensor) -> list[Scores]:
    """The `Scores` of each sentence of a batch from its emission scores (batch, longest, tags); `lengths` on the CPU."""
    scores = scores.detach().double()
    mask = padding_mask(lengths, scores.size(1), scores.device)
    if not model.use_crf:
        probabilities = torch.softmax(scores, dim=2)
        confidences, ids = probabilities.max(dim=2)
        tags: Tagged = tagged(model.label_dictionary, ids, confidences, lengths)
        entropies = _entropy(probabilities, mask)
        return [Scores(t, int(n), None, float(h)) for t, n, h in zip(tags, lengths.tolist(), entropies.tolist())]
    start, stop = start_stop(model)
    transitions = model.crf.transitions.detach().double()
    with torch.no_grad():
        ids, confidences = crf_decode(scores, lengths, transitions, start, stop)
        best = _gold_score(scores, ids, mask, transitions, start, stop)
    with torch.enable_grad():
        leaf = scores.clone().requires_grad_(True)
        partition = log_partition(leaf, mask, transitions, start, stop)
        (marginals,) = torch.autograd.grad(partition.sum(), leaf)  # d log Z / d emission = the tag marginals
    tags = tagged(model.label_dictionary, ids, confidences.float(), lengths)
    entropies = _entropy(marginals.clamp(0.0, 1.0), mask)
    logs = (best - partition.detach()).clamp_max(0.0)
    return [Scores(t, int(n), float(p), float(h)) for t, n, p, h in zip(tags, lengths.tolist(), logs.tolist(), entropies.tolist())]


def sentence_scores(model: SequenceTagger, sentence_tensor: torch.Tensor, lengths: torch.Tensor) -> list[Scores]:
    """The `Scores` of a padded batch of embeddings (batch, longest, dim), sentences longest first (as the training loop's batches)."""
    model.eval()
    with torch.no_grad():
        found = emissions(model, sentence_tensor, lengths)
    return scores_from_emissions(model, found, lengths)
