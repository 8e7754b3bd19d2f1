"""Tagging F1 of a saved tagger on Sturm's running text, split into sentences by each splitter (issue 74: no regression).

    FLAIRSUITE_CORPORA=/path/to/corpora python benchmarks/splitting_ner.py --model results/RUN/model.pt [--split test]

The text is Sturm's gold sentences joined by one space, tokens joined as `sentence_boundaries.py` joins them (no
space before closing punctuation). It is split by Flair's `SegtokSentenceSplitter` (what `split_text` used before
issue 74), by `GermanSentenceSplitter` (what it uses now), and, as a reference, at the gold sentence ends (tokens
by Flair's segtok tokenizer all three times); each split is tagged as `flairsuite predict` tags (`inference.raw_tags.tag`, raw
tags read as spans, `predict.tagged_text.char_spans`), and the entities are scored against the gold ones by character offsets:
an entity counts when its start, end and type equal a gold entity's (micro precision, recall, F1 over all types).
The model must tag Sturm's types (pers, place, date): a tagger trained on Sturm (`flairsuite quickstart`, or a run of
experiments/sturm-table3.yaml).
"""

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from common import run_main
from flair.data import Sentence
from flair.splitter import SegtokSentenceSplitter
from flair.tokenization import SegtokTokenizer
from sentence_boundaries import Gold, rebuilt, registered

from flairsuite.corpora.sentence_splitter import GermanSentenceSplitter
from flairsuite.corpora.tags import bio_spans
from flairsuite.errors import FlairsuiteError
from flairsuite.files.paths import corpora_dir
from flairsuite.inference.raw_tags import tag
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.predict.tagged_text import char_spans

Entity = tuple[int, int, str]


def gold_entities(gold: Gold) -> set[Entity]:
    """(start, end, type) of every gold entity, by character offsets in the running text."""
    found = set()
    for sentence, offsets in zip(gold.sentences, gold.tokens):
        for first, after, kind in bio_spans(sentence.tags):
            found.add((offsets[first][0], offsets[after - 1][1], kind))
    return found


def at_gold_ends(gold: Gold) -> list[Sentence]:
    """The text cut at the gold sentence ends, each piece tokenised by Flair's segtok tokenizer."""
    tokenizer, sentences, start = SegtokTokenizer(), [], 0
    for end in [*gold.ends, len(gold.text)]:
        piece = gold.text[start:end]
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            sentences.append(Sentence(piece.strip(), use_tokenizer=tokenizer, start_position=start + lead))
        start = end
    return sentences


def score(predicted: set[Entity], gold: set[Entity]) -> tuple[float, float, float]:
    hits = len(predicted & gold)
    precision = 100 * hits / len(predicted) if predicted else 0.0
    recall = 100 * hits / len(gold) if gold else 0.0
    return precision, recall, 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, type=Path, help="a saved flairsuite tagger (model.pt) that tags Sturm's types")
    parser.add_argument("--corpora-dir", help="datasets folder (default: $FLAIRSUITE_CORPORA)")
    parser.add_argument("--split", default="test", choices=["dev", "test"])
    parser.add_argument("--fast", action="store_true", help="tag by the fast path (`predict --fast`)")
    args = parser.parse_args()
    gold = rebuilt(f"sturm {args.split}", registered("sturm", corpora_dir(args.corpora_dir), args.split), set(), False, 10**9)
    model = load_tagger(args.model)
    entities = gold_entities(gold)
    types = {kind for _, _, kind in entities}
    known = {item.removeprefix("B-").removeprefix("I-") for item in model.label_dictionary.get_items()}
    if not types & known:
        raise FlairsuiteError(f"{args.model}: its tags ({', '.join(sorted(known))}) hold none of Sturm's types ({', '.join(sorted(types))})")
    splits: dict[str, Callable[[], list[Sentence]]] = {
        "segtok (before)": lambda: SegtokSentenceSplitter().split(gold.text),
        "german (now)": lambda: GermanSentenceSplitter().split(gold.text),
        "gold sentence ends (reference)": lambda: at_gold_ends(gold),
    }
    print(f"model {args.model}; Sturm {args.split}: {len(gold.text):,} characters, {len(gold.ends) + 1} gold sentences, {len(entities)} entities")
    print("\n| split by | sentences | precision | recall | F1 | seconds |\n|---|--:|--:|--:|--:|--:|")
    for name, split in splits.items():
        started = time.perf_counter()
        sentences = [sentence for sentence in split() if len(sentence)]
        spans = char_spans(gold.text, sentences, tag(model, sentences, args.fast, None))
        precision, recall, f1 = score({(span.start, span.end, span.type) for span in spans}, entities)
        print(f"| {name} | {len(sentences)} | {precision:.2f} | {recall:.2f} | {f1:.2f} | {time.perf_counter() - started:.1f} |")
    return 0


if __name__ == "__main__":
    run_main(main)
