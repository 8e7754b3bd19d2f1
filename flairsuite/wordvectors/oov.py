"""How many running tokens of a corpus get Flair's `<unk>` vector from word vectors, without and with subword vectors.

`fasttext:NAME` gives a token none of whose lookup forms (`coverage.lookup_forms`: word, lower-cased, digits as `#` or
`0`) is in `vectors.kv` the `<unk>` vector; `fasttext:NAME@subwords` gives it the kept model's subword vector instead
(`subwords.SubwordModel.vector`), which a token lacks only if it has no character n-gram at all (an empty token, a model without buckets):
FastText pads a word with `<` and `>`, so even a one-character word has the n-gram `<x>` at the usual `min_n` 3.
`split_counts` reads a corpus's splits as the runs read them (a registered dataset, or an own corpus's `DatasetSpec`
from `corpora.own.own_corpus`); `oov_rates` counts, per split.
"""

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from gensim.models.keyedvectors import KeyedVectors

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.registry import DatasetSpec
from flairsuite.files.paths import wordvectors_dir
from flairsuite.wordvectors.coverage import covered
from flairsuite.wordvectors.store import VECTORS_FILE, model_file, vectors_folder
from flairsuite.wordvectors.subwords import SubwordModel


def split_counts(spec: DatasetSpec, root: Path) -> dict[str, Counter]:
    """Per split of `spec` (its files below `root`, dev sampled from train where the spec says so), the token counts."""
    return {split: Counter(token for sentence in data.sentences for token in sentence.tokens) for split, data in read_splits(spec, root).items()}


def rate(part: int, whole: int) -> float:
    """`part / whole` to six places (0 for an empty whole), as train-fasttext's coverage table gives it."""
    return round(part / whole, 6) if whole else 0.0


def oov_rates(name: str, splits: Mapping[str, Counter], home: Optional[Path] = None) -> dict[str, dict[str, Any]]:
    """`folder_oov_rates` of the vectors `name` (`wordvectors/NAME-fasttext` below `home`, default the home folder)."""
    return folder_oov_rates(vectors_folder(wordvectors_dir(home), name), splits)


def folder_oov_rates(folder: Path, splits: Mapping[str, Counter]) -> dict[str, dict[str, Any]]:
    """Per split, its running tokens and how many (and what share) the vectors in `folder` (with its `model/`) map to
    `<unk>`: `before` as `fasttext:NAME` looks them up, `after` with `@subwords` (those of them without any n-gram; None
    where the folder keeps no model, as compact vectors do); `oov_types_before`: the distinct words of `before`. The
    vocabulary is read memory-mapped and the model's buckets not at all."""
    vocabulary = KeyedVectors.load(str(folder / VECTORS_FILE), mmap="r").key_to_index
    model = SubwordModel.load(model_file(folder)) if model_file(folder).is_file() else None
    found = {}
    for split, counts in splits.items():
        unknown = {word: n for word, n in counts.items() if not covered(word, vocabulary)}
        total, before = sum(counts.values()), sum(unknown.values())
        after = None if model is None else sum(n for word, n in unknown.items() if not model.buckets(word))
        found[split] = {"tokens": total, "oov_before": before, "oov_before_rate": rate(before, total),
                        "oov_after": after, "oov_after_rate": None if after is None else rate(after, total),
                        "oov_types_before": len(unknown)}
    return found
