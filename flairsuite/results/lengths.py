"""Test recall of gold entities by their length in tokens, read from the runs' `predictions.tsv`.

What a tagger loses as entities grow longer: a per-token classifier (Map) on frozen embeddings has to
get every token of an entity right, with nothing keeping its tags consistent, while a CRF decodes
the tags of a sentence together. On corpora of long entities (LER's legal citations) that is where
the columns of a comparison table part.

Matching is strict, as the tables' scorer (seqeval, strict IOB2): a gold entity is found when the
predicted tags hold the well-formed chunk `B-X I-X*` with its exact boundaries and type. Beside the
recall per length bucket, each row gives the ill-formed chunks of the predictions per 1,000 tokens: runs
of `I-X` tags that follow no `B-X` or `I-X` (strict scoring drops them, Entity-Fix repairs them).

Newer runs record the counts in their metrics.json (`test_lengths`, each Entity-Fix variant
after the rule), so the table prints from a clean clone. For older runs they are counted from the
`predictions.tsv` beside them, which holds the decoder's raw tags (token, gold tag, predicted tag; a
blank line between sentences), so their Entity-Fix variants have no rows; that file is git-ignored,
so those rows cover the runs trained (or kept) on this machine.
"""

import re
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import pandas as pd
from seqeval.scheme import IOB2, Entities

from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.results.predictions import PREDICTIONS_FILE, read_prediction_sentences
from flairsuite.results.tables import STATS, comparison_cells, render, row_keys
from flairsuite.settings_schema import NON_NEGATIVE_INTEGER

BUCKETS: tuple[tuple[int, Optional[int]], ...] = ((1, 1), (2, 3), (4, 7), (8, None))  # entity lengths in tokens, both ends included
ILL_FORMED = "ill-formed chunks per 1,000 tokens"
TAG = re.compile(r"O|[BI]-\S+")


def bucket_label(low: int, high: Optional[int]) -> str:
    """`(1, 1)` -> `1`, `(2, 3)` -> `2-3`, `(8, None)` -> `8+`."""
    return f"{low}+" if high is None else str(low) if low == high else f"{low}-{high}"


LABELS = tuple(bucket_label(low, high) for low, high in BUCKETS)


def bucket_of(length: int) -> str:
    """The label of the bucket an entity of `length` tokens falls in."""
    return next(label for (low, high), label in zip(BUCKETS, LABELS) if length >= low and (high is None or length <= high))


def read_predictions(path: Path) -> tuple[list[list[str]], list[list[str]]]:
    """Gold and predicted tags per sentence of a `predictions.tsv` (`read_prediction_sentences`); a tag that is not O,
    B-TYPE or I-TYPE is an error naming the file and line."""
    sentences = read_prediction_sentences(path)
    for sentence in sentences:
        for row in sentence:
            for tag in (row.gold, row.predicted):
                if not TAG.fullmatch(tag):
                    raise InputError(path, row.line, f"tag {tag!r} is not O, B-TYPE or I-TYPE (the raw BIO tags a run writes)")
    return [[row.gold for row in s] for s in sentences], [[row.predicted for row in s] for s in sentences]


def strict_entities(tags: list[list[str]]) -> set[tuple[int, int, int, str]]:
    """The well-formed IOB2 chunks of every sentence as (sentence, start, end exclusive, type): seqeval's strict reading."""
    return {(e.sent_id, e.start, e.end, e.tag) for sentence in Entities(tags, IOB2).entities for e in sentence}


def ill_formed(tags: list[list[str]]) -> int:
    """How many ill-formed chunks the tags hold: an `I-X` that continues no entity of type X (at a sentence start, after `O`,
    or after a tag of another type) starts one, and the `I-X` tags after it belong to it."""
    count = 0
    for sentence in tags:
        previous = "O"
        for tag in sentence:
            count += tag.startswith("I-") and (previous == "O" or previous[2:] != tag[2:])
            previous = tag
    return count


def length_counts(gold: list[list[str]], predicted: list[list[str]]) -> dict[str, Any]:
    """Per length bucket the gold entities (`gold`) and those found exactly (`found`), every bucket present (0 where none);
    the ill-formed chunks of the predictions and the tokens. Plain JSON: a run records it in metrics.json (`test_lengths`)."""
    expected, found = strict_entities(gold), strict_entities(predicted)
    totals = Counter(bucket_of(end - start) for _, start, end, _ in expected)
    right = Counter(bucket_of(end - start) for _, start, end, _ in expected & found)
    return {"gold": {label: totals[label] for label in LABELS}, "found": {label: right[label] for label in LABELS},
            "ill_formed": ill_formed(predicted), "tokens": sum(len(sentence) for sentence in gold)}


def valid_counts(counts: Any) -> bool:
    """Whether `counts` has the shape `length_counts` writes (counts are whole numbers, found never above gold)."""
    whole = NON_NEGATIVE_INTEGER
    if not isinstance(counts, dict) or not all(isinstance(counts.get(key), dict) for key in ("gold", "found")):
        return False
    gold, found = counts["gold"], counts["found"]
    per_bucket = all(whole(gold.get(label)) and whole(found.get(label)) and found[label] <= gold[label] for label in LABELS)
    return per_bucket and whole(counts.get("ill_formed")) and whole(counts.get("tokens"))


def run_counts(run: pd.Series) -> Optional[dict[str, Any]]:
    """A run's `length_counts`: as its metrics.json recorded them (`test_lengths`, newer runs, Entity-Fix variants
    after the rule), else from the `predictions.tsv` beside it (raw tags: not for a variant); None without either."""
    recorded = run.get("test_lengths")
    if recorded is not None:
        if not valid_counts(recorded):
            raise InputError(Path(run["path"]), None, "key 'test_lengths' must hold gold and found counts per length (1, 2-3, 4-7, 8+), "
                                                      "ill_formed and tokens, as length_counts writes them")
        return recorded
    path = Path(run["path"]).parent / PREDICTIONS_FILE
    if run["entity_fix"] or not path.is_file():
        return None
    return length_counts(*read_predictions(path))


def length_frame(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per NER run with counts (`run_counts`): its keys, the recall per bucket (a fraction, NaN where the test split
    has no entity of that length), the gold count per bucket, ill-formed chunks per 1,000 tokens."""
    rows = []
    for _, run in runs[runs["task"] == "ner"].iterrows():
        counts = run_counts(run)
        if counts is None:
            continue
        row = run.to_dict()
        for label in LABELS:
            row[label] = counts["found"][label] / counts["gold"][label] if counts["gold"][label] else float("nan")
            row[f"gold {label}"] = counts["gold"][label]
        row[ILL_FORMED] = 1000 * counts["ill_formed"] / max(counts["tokens"], 1)
        rows.append(row)
    return pd.DataFrame(rows)


def gold_counts(group: pd.DataFrame, label: str) -> dict[str, int]:
    """The gold entities per bucket of the test split the runs of one corpus (`group`) were scored on; runs that disagree
    (predictions of different test sets, e.g. after the corpus changed) are an error naming two of their folders."""
    counts = group[[f"gold {bucket}" for bucket in LABELS]].drop_duplicates()
    if len(counts) > 1:
        first, other = (group.loc[group[counts.columns].eq(row).all(axis=1), "path"].iloc[0] for _, row in counts.head(2).iterrows())
        raise FlairsuiteError(f"{label}: the runs' predictions hold different test sets ({Path(first).parent} and {Path(other).parent}): "
                              "train them again on the same corpus")
    return {bucket: int(counts[f"gold {bucket}"].iloc[0]) for bucket in LABELS}


def bucket_header(label: str, total: int) -> str:
    """`8+ tokens (1,988)`: the bucket and its gold entities in the test split."""
    return f"{label} {'token' if label == '1' else 'tokens'} ({total:,})"


def length_tables(runs: pd.DataFrame, fmt: str = "md") -> str:
    """One table per experiment and corpus: rows stack x tagger, cells the test recall per gold-entity length in tokens
    (mean ± std (n) over seeds, %; the lengths the test split has), the best per column marked, then the ill-formed chunks
    per 1,000 tokens."""
    frame = length_frame(runs)
    if frame.empty:
        raise FlairsuiteError(f"no NER run recorded its test_lengths, and no {PREDICTIONS_FILE} lies beside their metrics.json (it is "
                              "git-ignored: only runs trained or kept on this machine have one)")
    sections = []
    for (experiment, label), group in frame.groupby(["experiment", "corpus_label"], sort=True):
        keys = row_keys(group)
        gold = gold_counts(group, label)
        buckets = [bucket for bucket in LABELS if gold[bucket]]  # the lengths the test split has
        columns = [bucket_header(bucket, gold[bucket]) for bucket in buckets] + [ILL_FORMED]
        long = group.melt(id_vars=keys, value_vars=[*buckets, ILL_FORMED], var_name="column", value_name="value")
        long["column"] = long["column"].map(dict(zip([*buckets, ILL_FORMED], columns)))
        long.loc[long["column"] != ILL_FORMED, "value"] *= 100
        stats = long.groupby([*keys, "column"])["value"].agg(["mean", "std", "count"]).rename(columns={"count": "n"})
        table = stats.unstack("column").swaplevel(axis=1).reindex(columns=pd.MultiIndex.from_product([columns, STATS], names=["column", "stat"]))
        cells = comparison_cells(table)
        cells[ILL_FORMED] = table.xs("mean", axis=1, level="stat")[ILL_FORMED]  # fewer is better: not marked, and no spread
        title = (f"{experiment}: {label}, test recall (%) of the {sum(gold.values()):,} gold entities by length in tokens, mean ± std over seeds (n); "
                 "strict match on the decoder's tags (Entity-Fix rows: after the rule)")
        sections.append(render(title, cells, {}, fmt))
    return "\n\n".join(sections)
