"""Counts per split and per type (after repair), with the repairs made: the `corpora stats` tables."""

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from flairsuite.corpora.labeled import SplitData, read_splits
from flairsuite.corpora.raw import iter_documents, source_path
from flairsuite.corpora.registry import DatasetSpec
from flairsuite.corpora.tags import bio_spans


@dataclass
class CorpusStats:
    """`summary`: one row per split; `types`: entities (or tags) by type x split; `repairs`: kind x split."""

    summary: pd.DataFrame
    types: pd.DataFrame
    repairs: pd.DataFrame


def _type_counts(data: SplitData, task: str) -> Counter:
    counts: Counter = Counter()
    for sentence in data.sentences:
        if task == "ner":
            counts.update(entity_type for _, _, entity_type in bio_spans(sentence.tags))
        else:
            counts.update(sentence.tags)
    return counts


def labeled_stats(spec: DatasetSpec, data: dict[str, SplitData]) -> CorpusStats:
    """Sentences, tokens and entities (tags, for PoS) per split and per type."""
    unit = "entities" if spec.task == "ner" else "distinct tags"
    per_type = {split: _type_counts(part, spec.task) for split, part in data.items()}
    summary = pd.DataFrame(
        {
            split: {
                "file": part.source,
                "sentences": len(part.sentences),
                "tokens": sum(len(s.tokens) for s in part.sentences),
                unit: sum(per_type[split].values()) if spec.task == "ner" else len(per_type[split]),
                "repairs": sum(part.repairs.values()),
            }
            for split, part in data.items()
        }
    ).T
    types = pd.DataFrame(per_type).reindex(list(spec.output_types)).fillna(0).astype(int)
    repairs = pd.DataFrame({split: part.repairs for split, part in data.items()}).fillna(0).astype(int)
    return CorpusStats(summary, types, repairs)


def raw_stats(spec: DatasetSpec, root: Path) -> CorpusStats:
    """Documents and characters per source of a raw-text set (streamed)."""
    rows = {}
    for name, source in spec.sources.items():
        path = source_path(spec, source, root)
        documents = characters = 0
        for _, text in tqdm(iter_documents(path, source, spec.encoding), desc=name, unit=" docs", leave=False):
            documents += 1
            characters += len(text)
        rows[name] = {"file": path.name, "document": source.document, "documents": documents, "characters": characters}
    return CorpusStats(pd.DataFrame(rows).T, pd.DataFrame(), pd.DataFrame())


def corpus_stats(spec: DatasetSpec, root: Path, splits: list[str] | None = None) -> CorpusStats:
    """The stats tables of any registered dataset or own corpus."""
    if spec.task == "raw":
        return raw_stats(spec, root)
    return labeled_stats(spec, read_splits(spec, root, splits))
