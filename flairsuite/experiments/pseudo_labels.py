"""Pseudo-labels: the tags a trained tagger gives the unlabelled pool, each sentence with the confidence it is kept by.

The tags are the tagger's own decoded tags (Viterbi under a CRF, the arg-max of a softmax head: what `decode` gives,
raw, before any span repair). The confidence of a sentence of n tokens is the length-normalised probability of that tag
sequence, p(y*|x)^(1/n): under a CRF exp((score(y*) - log Z) / n) with log Z by the forward algorithm
(`flairsuite.models.uncertainty`: one minus its `uncertainty`), under a softmax head the geometric mean of the chosen
tags' probabilities (the sequence's probability, since the head tags each token on its own). It lies in (0, 1] and
does not fall with the sentence's length, so one threshold suits short and long sentences.
"""

import math
from dataclasses import dataclass
from typing import Any, Optional

import torch

from flairsuite.models.uncertainty import Scores, sentence_scores
from flairsuite.settings_schema import Rule
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.scoring import task_scores

LABEL_BATCH = 256  # pool sentences tagged per batch


def confidence(scores: Scores) -> float:
    """p(y*|x)^(1/n) of one sentence (module docstring)."""
    n = max(scores.tokens, 1)
    if scores.best_log_probability is not None:
        return math.exp(min(scores.best_log_probability, 0.0) / n)
    logs = sum(math.log(max(float(probability), 1e-300)) for _, probability in scores.tags)
    return math.exp(min(logs, 0.0) / n)


@dataclass(frozen=True)
class PseudoLabels:
    """A labeller's output on the pool: every sentence's confidence, the tags of the sentences at or above `floor` (the
    lowest threshold they are kept at: the others are never used), and the labeller's own scores on the whole pool where
    the pool's gold tags are known."""

    confidences: list[float]
    tags: dict[int, list[str]]
    floor: float
    pool_scores: Optional[dict[str, Any]] = None

    def kept(self, threshold: float) -> list[int]:
        """The pool sentences at or above `threshold` (which must not lie below `floor`), in pool order."""
        assert threshold >= self.floor, (threshold, self.floor)
        return [i for i, value in enumerate(self.confidences) if value >= threshold]

    def record(self) -> dict[str, Any]:
        """As JSON: confidences exact (Python's float repr round-trips), tags by pool index."""
        return {"floor": self.floor, "confidences": self.confidences, "tags": {str(i): tags for i, tags in sorted(self.tags.items())},
                "pool_scores": self.pool_scores}

    @staticmethod
    def of_record(record: dict[str, Any]) -> "PseudoLabels":
        return PseudoLabels([float(v) for v in record["confidences"]], {int(i): list(tags) for i, tags in record["tags"].items()},
                            float(record["floor"]), record.get("pool_scores"))


LABELS_RECORD = {
    "floor": Rule("a confidence", lambda v: isinstance(v, (int, float)) and 0 <= v <= 1),
    "confidences": Rule("a list of confidences", lambda v: isinstance(v, list) and all(isinstance(c, (int, float)) for c in v)),
    "tags": Rule("an object of pool index: tags", lambda v: isinstance(v, dict) and all(k.isdigit() and isinstance(t, list) for k, t in v.items())),
}


def label_pool(model: torch.nn.Module, pool: SplitFeatures, floor: float, gold: Optional[list[list[str]]] = None,
               task: str = "ner") -> PseudoLabels:
    """The model's pseudo-labels of the pool: every sentence's confidence, the decoded tags of those at or above `floor`;
    with the pool's `gold` tags (held-back train sentences) also the model's scores on the whole pool (`task_scores`)."""
    values: list[float] = [0.0] * len(pool)
    decoded: list[list[str]] = [[] for _ in range(len(pool))]
    with torch.no_grad():
        for batch in pool.longest_first(LABEL_BATCH):
            for index, found in zip(batch.order, sentence_scores(model, batch.tensor, batch.lengths)):
                values[index] = confidence(found)
                decoded[index] = [tag for tag, _ in found.tags]
    scores = task_scores(task, gold, decoded) if gold is not None else None
    return PseudoLabels(values, {i: tags for i, tags in enumerate(decoded) if values[i] >= floor}, floor, scores)
