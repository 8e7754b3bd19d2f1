"""Scores of predicted tags: entity-level for NER (seqeval strict IOB2 for the tables, and Flair's own
span F1), token accuracy for one-tag-per-token tasks (PoS); `task_scores` picks by task.

Strict IOB2 (`seqeval`, `mode="strict", scheme=IOB2`) counts a predicted entity only if it is a
well-formed chunk B-X I-X* with exactly the gold boundaries and type: an I-X that does not continue
an entity of type X (ill-formed) never matches. Flair's F1 first decodes the tags to spans with its
own repair (`get_spans_from_bio`: an ill-formed I-X starts a new entity), as `SequenceTagger.predict` does.
"""

from collections import Counter
from typing import Any

from flair.data import get_spans_from_bio
from seqeval.metrics import classification_report
from seqeval.scheme import IOB2, Entities

from flairsuite.corpora.tags import bio_spans
from flairsuite.corpora.tasks import task


def strict_scores(gold: list[list[str]], predicted: list[list[str]]) -> dict[str, Any]:
    """Micro precision, recall, F1 and per-type scores in strict IOB2 mode, each type with its gold `support` and the
    number of entities `predicted` (so that an F1 over some of the types can be summed up later)."""
    report = classification_report(gold, predicted, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
    micro = report["micro avg"]
    found = Counter(entity.tag for entities in Entities(predicted, IOB2).entities for entity in entities)
    per_type = {
        name: {"precision": float(s["precision"]), "recall": float(s["recall"]), "f1": float(s["f1-score"]), "support": int(s["support"]),
               "predicted": found[name]}
        for name, s in report.items()
        if not name.endswith(" avg")
    }
    return {"precision": float(micro["precision"]), "recall": float(micro["recall"]), "f1": float(micro["f1-score"]), "per_type": per_type}


def flair_f1(gold: list[list[str]], predicted: list[list[str]]) -> float:
    """Micro F1 of exact spans after Flair's span decoding of the predicted tags (its evaluate's micro F1)."""
    gold_spans = {(i, start, end, kind) for i, tags in enumerate(gold) for start, end, kind in bio_spans(tags)}
    found = set()
    for i, tags in enumerate(predicted):
        for indices, _, kind in get_spans_from_bio(list(tags)):  # it appends to its argument
            found.add((i, indices[0], indices[-1] + 1, kind))
    correct = len(gold_spans & found)
    if not correct:
        return 0.0
    precision, recall = correct / len(found), correct / len(gold_spans)
    return 2 * precision * recall / (precision + recall)


def accuracy_scores(gold: list[list[str]], predicted: list[list[str]]) -> dict[str, Any]:
    """Token accuracy, and per gold tag the share of its tokens tagged right (`accuracy`) with its `support`."""
    support, right = Counter(), Counter()
    for gold_tags, predicted_tags in zip(gold, predicted, strict=True):
        if len(gold_tags) != len(predicted_tags):
            raise ValueError(f"a sentence of {len(gold_tags)} gold tags got {len(predicted_tags)} predicted ones")
        for expected, found in zip(gold_tags, predicted_tags):
            support[expected] += 1
            right[expected] += expected == found
    tokens = sum(support.values())
    per_type = {tag: {"accuracy": right[tag] / count, "support": count} for tag, count in sorted(support.items())}
    return {"accuracy": sum(right.values()) / tokens if tokens else 0.0, "per_type": per_type}


def task_scores(task_name: str, gold: list[list[str]], predicted: list[list[str]]) -> dict[str, Any]:
    """The test or dev scores of `task_name`: strict IOB2 entity scores (NER) or token accuracy (PoS)."""
    return strict_scores(gold, predicted) if task(task_name).spans else accuracy_scores(gold, predicted)


def main_score(task_name: str, gold: list[list[str]], predicted: list[list[str]]) -> float:
    """The one number that ranks taggers (and picks the best dev epoch) for `task_name`: entity F1 or token accuracy."""
    return task_scores(task_name, gold, predicted)[task(task_name).metric]
