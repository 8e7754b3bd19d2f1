"""`flairsuite evaluate`: a saved tagger scored on one split of a registered dataset or of an own corpus folder.

For the model a user already has: the released tagger on a new batch of annotated letters, a Sturm
model on H. Arendt, a run's `model.pt` on another split. The split is read as `flairsuite tag` reads
it (the same repairs and one-line errors), its tokens are tagged as they stand (no re-tokenisation)
by the fast path or by plain Flair, and the tags are scored as the runs score theirs: strict IOB2
entity precision, recall and F1 per type (seqeval) and the recall by entity length for NER, token
accuracy per tag for PoS. Entity types or tags of the split that the model never learned are named:
their every occurrence counts as a miss. With `by_seen`, NER recall is also split by whether the corpus's train split
holds the entity (`results.seen_entity_recall`).
"""

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import flair
from flair.data import Sentence, get_spans_from_bio

from flairsuite.corpora.break_marks import marks_of
from flairsuite.corpora.labeled import SplitData, read_splits
from flairsuite.corpora.loading import linked, with_breaks
from flairsuite.corpora.registry import DatasetSpec
from flairsuite.corpora.tasks import task
from flairsuite.errors import FlairsuiteError
from flairsuite.inference.raw_tags import tag
from flairsuite.inference.saved_tagger import load_tagger, predicts_spans
from flairsuite.markup.annotated import Annotated, from_tokens
from flairsuite.markup.annotation_formats import annotation_text
from flairsuite.models.entity_fix import entity_fix
from flairsuite.results.lengths import LABELS, length_counts
from flairsuite.results.predictions import predictions_tsv
from flairsuite.results.seen_entity_recall import SeenCounts, entities, seen_counts
from flairsuite.tagging.cut_words import whole_words
from flairsuite.tagging.scoring import task_scores

NOT_TYPES = {"O", "<unk>", "<START>", "<STOP>"}


@dataclass
class Evaluation:
    """A model's tags on one split and their scores."""

    model: flair.nn.Classifier
    spec: DatasetSpec
    split: str
    data: SplitData
    predicted: list[list[str]]
    scores: dict[str, Any]
    lengths: Optional[dict[str, Any]]  # NER only: `length_counts`
    seen: Optional[SeenCounts] = None  # NER with by_seen only
    confidences: Optional[list[list[float]]] = None  # the decoder's per token (kept by Entity-Fix)

    @property
    def gold(self) -> list[list[str]]:
        return [sentence.tags for sentence in self.data.sentences]

    @property
    def spans(self) -> bool:
        return task(self.spec.task).spans


def model_types(model: flair.nn.Classifier) -> set[str]:
    """The entity types (or PoS tags) a model can predict: its label dictionary without B-/I-/E-/S- prefixes and specials."""
    if hasattr(model, "types"):  # Class-Start-End keeps its entity types
        return set(model.types)
    items = set(model.label_dictionary.get_items()) - NOT_TYPES
    if not predicts_spans(model):
        return items
    return {item.split("-", 1)[1] if item[:2] in ("B-", "I-", "E-", "S-") else item for item in items}


def train_entities(spec: DatasetSpec, root: Path) -> set[tuple[tuple[str, ...], str]]:
    """The entities of `spec`'s train split as a tagger trains on it (without the dev share of a `dev_fraction` corpus)."""
    if "train" not in spec.splits:
        raise FlairsuiteError(f"--by-seen compares with the train split, and {spec.name} has none here (its splits: {', '.join(spec.splits)})")
    sampled_dev = spec.dev_fraction is not None and "dev" not in spec.splits
    train = read_splits(spec, root, ["train", "dev"] if sampled_dev else ["train"])["train"]
    return entities([sentence.tokens for sentence in train.sentences], [sentence.tags for sentence in train.sentences])


def evaluate(model_path: Path, spec: DatasetSpec, root: Path, split: str, fast: bool, batch_size: Optional[int], fix: bool,
             by_seen: bool = False) -> Evaluation:
    """Tag the `split` of `spec` with the model at `model_path` and score the tags (Entity-Fix first when `fix`; with
    `by_seen`, NER recall also on the entities train holds and on the others)."""
    data = read_splits(spec, root, [split])[split]  # a bad corpus fails before the model (hundreds of MB) loads
    spans = task(spec.task).spans
    if by_seen and not spans:
        raise FlairsuiteError("--by-seen splits entity recall by the train split's entities: a PoS corpus has none, leave it out")
    known = train_entities(spec, root) if by_seen else None
    gold = [sentence.tags for sentence in data.sentences]
    if spans and not any(tag != "O" for tags in gold for tag in tags):
        raise FlairsuiteError(f"{data.path}: the {split} split holds no gold entities: there is nothing to score")
    model = load_tagger(model_path)
    if predicts_spans(model) != spans:
        what = "entity spans" if predicts_spans(model) else f"one '{model.label_type}' tag per token"
        raise FlairsuiteError(f"{model_path} predicts {what}, and {spec.name} is a {spec.task} corpus: evaluate it on a corpus of its task")
    if fix and not spans:
        raise FlairsuiteError("--entity-fix repairs BIO entity tags: a PoS corpus has none, leave it out")
    # in their documents, each word cut at a line end read joined where the corpus marks them (`line_break`)
    sentences = linked([with_breaks(Sentence(list(sentence.tokens)), sentence) for sentence in data.sentences], data.sentences)
    tagged = tag(model, sentences, fast, batch_size)
    predicted = [[found for found, _ in sentence] for sentence in tagged]
    if spans:  # the tokens of a word cut at a line end tagged as one word's, where the corpus marks breaks (tagging/cut_words.py)
        predicted = whole_words(predicted, {index: marks_of(sentence) for index, sentence in enumerate(sentences)})
    confidences = [[confidence for _, confidence in sentence] for sentence in tagged]
    if fix:
        predicted = [entity_fix(tags) for tags in predicted]
    lengths = length_counts(gold, predicted) if spans else None
    seen = seen_counts([sentence.tokens for sentence in data.sentences], gold, predicted, known) if known is not None else None
    return Evaluation(model, spec, split, data, predicted, task_scores(spec.task, gold, predicted), lengths, seen, confidences)


def unknown_types(evaluation: Evaluation) -> dict[str, int]:
    """The entity types (PoS: tags) of the split the model cannot predict, with their gold support."""
    known = model_types(evaluation.model)
    return {name: scores["support"] for name, scores in sorted(evaluation.scores["per_type"].items()) if name not in known}


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def input_files(evaluation: Evaluation) -> set[Path]:
    """The corpus files the evaluation read."""
    return {Path(name).resolve() for entry in evaluation.spec.splits.values() for name in entry.files}


def report_lines(evaluation: Evaluation, model_path: Path, fix: bool) -> Iterator[str]:
    """The evaluation as a header line, a Markdown table per type with the micro average, and notes."""
    data, scores = evaluation.data, evaluation.scores
    tokens = sum(len(sentence.tokens) for sentence in data.sentences)
    yield (f"{model_path}: {type(evaluation.model).__name__} on {evaluation.spec.name} {evaluation.split} ({data.source}): "
           f"{plural(len(data.sentences), 'sentence')}, {plural(tokens, 'token')}, {plural(sum(data.repairs.values()), 'repair')}")
    yield ""
    if evaluation.spans:
        yield "| type | precision | recall | F1 | support |"
        yield "| --- | --: | --: | --: | --: |"
        for name, per in sorted(scores["per_type"].items()):
            yield f"| {name} | {per['precision'] * 100:.2f} | {per['recall'] * 100:.2f} | {per['f1'] * 100:.2f} | {per['support']:,} |"
        total = sum(per["support"] for per in scores["per_type"].values())
        yield f"| **all (micro)** | {scores['precision'] * 100:.2f} | {scores['recall'] * 100:.2f} | **{scores['f1'] * 100:.2f}** | {total:,} |"
        yield ""
        yield f"strict IOB2 (seqeval) on the decoder's tags{' after Entity-Fix' if fix else ''}, as `flairsuite tag` scores its runs"
        lengths = evaluation.lengths or {}
        parts = [f"{label} {'token' if label == '1' else 'tokens'} {lengths['found'][label] / lengths['gold'][label] * 100:.1f} % of "
                 f"{lengths['gold'][label]:,}" for label in LABELS if lengths.get("gold", {}).get(label)]
        yield "recall by entity length: " + "; ".join(parts)
        yield f"ill-formed chunks (I-X after no B-X or I-X): {lengths.get('ill_formed', 0):,}"
        if evaluation.seen is not None:
            yield evaluation.seen.line()
    else:
        yield "| tag | accuracy | support |"
        yield "| --- | --: | --: |"
        for name, per in sorted(scores["per_type"].items()):
            yield f"| {name} | {per['accuracy'] * 100:.2f} | {per['support']:,} |"
        yield f"| **all** | **{scores['accuracy'] * 100:.2f}** | {tokens:,} |"
    for name, support in unknown_types(evaluation).items():
        yield f"warning: the model never learned {'type' if evaluation.spans else 'tag'} '{name}' ({support:,} in {evaluation.split}): every one is a miss"


def column_predictions(evaluation: Evaluation) -> str:
    """Token, gold tag and predicted tag per line, a blank line between sentences (as a run's predictions.tsv)."""
    return predictions_tsv(zip(sentence.tokens, sentence.tags, predicted) for sentence, predicted in zip(evaluation.data.sentences, evaluation.predicted))


def predicted_documents(evaluation: Evaluation, per_sentence: bool) -> list[Annotated]:
    """The split's tokens (joined by spaces, a sentence a line) with the predicted spans as Flair reads them from the tags
    (`get_spans_from_bio`, as `predict` does); one document, or one per sentence."""
    confidences = evaluation.confidences or [[1.0] * len(tags) for tags in evaluation.predicted]
    tokens = [sentence.tokens for sentence in evaluation.data.sentences]
    spans = [[(indices[0], indices[-1] + 1, kind, confidence) for indices, confidence, kind in get_spans_from_bio(list(tags), list(scores))]
             for tags, scores in zip(evaluation.predicted, confidences)]
    if per_sentence:
        return [from_tokens([sentence], [found]) for sentence, found in zip(tokens, spans)]
    return [from_tokens(tokens, spans)]


def predictions_text(evaluation: Evaluation, fmt: str = "column", model_path: Optional[Path] = None) -> str:
    """The predictions in `fmt`: "column" (`column_predictions`) or one of ANNOTATION_FORMATS, the predicted spans
    (webanno and conll: the split as one document; jsonl and labelstudio: a document per sentence)."""
    if fmt == "column":
        return column_predictions(evaluation)
    if not evaluation.spans:
        raise FlairsuiteError(f"--format {fmt} writes entity spans, and {evaluation.spec.name} is a {evaluation.spec.task} corpus: use --format column")
    documents = predicted_documents(evaluation, per_sentence=fmt in ("jsonl", "labelstudio"))
    return annotation_text(documents, fmt, model_path.name if model_path else "flairsuite")
