"""The user's unannotated text (`self_training: text:`) as a split of sentences without labels, read as `predict` reads raw text.

Each file (UTF-8; `.gz` decompressed) is taken as the tagger reads it (`reading_view`: Flair's view of the characters,
words broken at a line end joined) and cut into sentences and tokens by the corpus's segmentation (`split_text`: the
German splitter with the abbreviations learned from that file, or one token per character), as `predict` cuts a whole
file. A sentence longer than the corpus's `max_tokens` (own corpora's default 250) is cut as a corpus file's would be
(`long_sentences`), so a text without sentence ends cannot make one batch huge. Each file is a document of its own.
A sentence whose tokens equal a dev or test sentence of the corpus is left out (counted): pseudo-labels never train on
the text the scores are measured on. With `max_sentences`, that many of the remaining sentences are drawn with seed 1
(`POOL_SEED`) and kept in text order. Every tag of the split is `O`: the pool's labels are unknown.
"""

import gzip
import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from flairsuite.corpora.line_ends import reading_view
from flairsuite.corpora.long_sentences import MAX_TOKENS, split_long
from flairsuite.corpora.readers import TaggedSentence
from flairsuite.corpora.segmentation import split_text
from flairsuite.errors import decode_utf8
from flairsuite.tagging.data import LabeledSplit

OUTSIDE = "O"
POOL_SEED = 1


def read_text(path: Path) -> str:
    """The text of a file, gzip-compressed where its name ends `.gz`; a byte that is no UTF-8 is a one-line error naming the file."""
    data = path.read_bytes()
    return decode_utf8(gzip.decompress(data) if path.name.endswith(".gz") else data, path)


def text_digest(path: Path) -> str:
    """sha256 of the file's bytes (what a study's fingerprint holds of a text, never its path)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_sentences(path: Path, segmentation: str, max_tokens: int) -> list[TaggedSentence]:
    """The sentences of one file, tags all `O` (module docstring)."""
    sentences: list[TaggedSentence] = []
    repairs: Counter = Counter()
    for sentence in split_text(reading_view(read_text(path)).text, segmentation):
        tokens = [token.text for token in sentence]
        whole = TaggedSentence(tokens, [OUTSIDE] * len(tokens), [], [bool(token.whitespace_after) for token in sentence], path)
        sentences.extend(split_long(whole, max_tokens, repairs))
    return sentences


def text_split(paths: Sequence[Path], segmentation: str, max_tokens: int | None, unseen: Iterable[tuple[str, ...]],
               max_sentences: int | None = None) -> tuple[LabeledSplit, int, int]:
    """The sentences of the files `paths` in order, those equal to one of `unseen` (token tuples: dev and test) left out, at
    most `max_sentences` of the rest (module docstring); how many were left out, and how many the text held besides."""
    excluded = set(unseen)
    kept: list[TaggedSentence] = []
    left_out = 0
    for path in paths:
        for sentence in file_sentences(path, segmentation, max_tokens or MAX_TOKENS):
            if tuple(sentence.tokens) in excluded:
                left_out += 1
            else:
                kept.append(sentence)
    found = len(kept)
    if max_sentences is not None and found > max_sentences:
        kept = [kept[i] for i in sorted(random.Random(POOL_SEED).sample(range(found), max_sentences))]
    return LabeledSplit.of(kept), left_out, found
