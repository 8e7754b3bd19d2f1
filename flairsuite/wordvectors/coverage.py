"""Vocabulary coverage of the labeled corpora, as Flair's `WordEmbeddings` looks tokens up, and its repair.

`WordEmbeddings` drops fastText's character n-grams: a token whose word, lowercased or digit-normalised
form is not in the vocabulary gets a zero vector. So every such token of the language's labeled
corpora gets its subword-built vector added to the saved vectors.
"""

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from gensim.models.fasttext import FastTextKeyedVectors
from gensim.models.keyedvectors import KeyedVectors

from flairsuite.corpora.language_splits import SplitTokens

DIGIT = re.compile(r"\d")


def lookup_forms(word: str) -> tuple[str, ...]:
    """The forms Flair's `WordEmbeddings.get_cached_token_index` tries, in order."""
    lower = word.lower()
    return word, lower, DIGIT.sub("#", lower), DIGIT.sub("0", lower)


def covered(word: str, vocab: Mapping[str, int]) -> bool:
    """Whether Flair's `WordEmbeddings` finds a vector for `word` in `vocab`."""
    return any(form in vocab for form in lookup_forms(word))


def oov_tokens(counts: Counter, vocab: Mapping[str, int]) -> int:
    """Running tokens of `counts` without a vector in `vocab`."""
    return sum(n for word, n in counts.items() if not covered(word, vocab))


def augmented(wv: FastTextKeyedVectors, splits: Iterable[SplitTokens]) -> tuple[KeyedVectors, list[str]]:
    """Plain vectors of the vocabulary plus the subword-built vectors of every uncovered corpus token; the added tokens."""
    vectors = KeyedVectors(wv.vector_size)
    vectors.add_vectors(wv.index_to_key, wv.vectors)
    added = sorted({word for s in splits for word in s.counts if not covered(word, wv.key_to_index)})
    if added:
        vectors.add_vectors(added, [wv[word] for word in added])
    return vectors, added


def coverage_row(split: SplitTokens, before: Mapping[str, int], after: Mapping[str, int]) -> dict:
    """Tokens of `split`, and how many (and what share) lack a vector before and after augmentation."""
    total = sum(split.counts.values())
    row = {"dataset": split.dataset, "split": split.split, "tokens": total}
    for stage, vocab in (("before", before), ("after", after)):
        oov = oov_tokens(split.counts, vocab)
        row[f"oov_{stage}"] = oov
        row[f"oov_{stage}_rate"] = round(oov / total, 6) if total else 0.0
    return row
