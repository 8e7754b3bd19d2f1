"""Splitting a sentence longer than `max_tokens` (own corpora: `max_tokens`, default `MAX_TOKENS`; null keeps them).

A "sentence" of hundreds of tokens is mostly a document whose sentence ends the file does not mark; a tagger's batch
is as long as its longest sentence, so such a corpus trains several times slower. The rule, applied to BIO tags:

- Cut a piece of at most `max_tokens` tokens off the front, after its last sentence-final punctuation token
  (`.`, `!`, `?`, `…`, and runs of them) that no entity continues across;
- without one, before the token nearest to `max_tokens` that does not continue an entity;
- an entity longer than the whole window is never cut: the piece ends after it (and is then longer than `max_tokens`).
- Repeat on the rest until it fits.

Counted in the split's repairs: each split sentence, and each cut by its kind.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Optional

from flairsuite.corpora.readers import TaggedSentence

MAX_TOKENS = 250  # own corpora's default: measured in docs/own-data.md ("Long sentences")
FINAL_PUNCTUATION = frozenset(".!?…。！？")
SPLIT = "sentence over max_tokens split"
AT_PUNCTUATION = "cut after sentence-final punctuation"
AT_TOKEN = "cut at a token outside an entity"
OVER_LENGTH = "piece over max_tokens (an entity fills the window)"


def _is_final(token: str) -> bool:
    return bool(token) and all(char in FINAL_PUNCTUATION for char in token)


def cut_point(tokens: Sequence[str], tags: Sequence[str], max_tokens: int) -> tuple[int, str]:
    """(the index the first piece ends before, the kind of cut) for a sentence longer than `max_tokens` (module docstring)."""
    def free(index: int) -> bool:  # a cut before `index` splits no entity
        return not tags[index].startswith("I-")

    window = range(min(max_tokens, len(tokens) - 1), 0, -1)
    for index in window:
        if _is_final(tokens[index - 1]) and free(index):
            return index, AT_PUNCTUATION
    for index in window:
        if free(index):
            return index, AT_TOKEN
    for index in range(max_tokens + 1, len(tokens)):
        if free(index):
            return index, OVER_LENGTH
    return len(tokens), OVER_LENGTH


def _piece(sentence: TaggedSentence, start: int, end: int) -> TaggedSentence:
    return TaggedSentence(sentence.tokens[start:end], sentence.tags[start:end], sentence.lines[start:end],
                          sentence.whitespace_after[start:end], sentence.path, sentence.starts_document and start == 0,
                          [i - start for i in sentence.line_ends if start <= i < end])


def split_long(sentence: TaggedSentence, max_tokens: int, repairs: Counter) -> list[TaggedSentence]:
    """`sentence` as pieces of at most `max_tokens` tokens, cut by the rule above (BIO tags; counted in `repairs`)."""
    if len(sentence.tokens) <= max_tokens:
        return [sentence]
    repairs[SPLIT] += 1
    pieces, start = [], 0
    while len(sentence.tokens) - start > max_tokens:
        end, kind = cut_point(sentence.tokens[start:], sentence.tags[start:], max_tokens)
        repairs[kind] += 1
        pieces.append(_piece(sentence, start, start + end))
        start += end
    if start < len(sentence.tokens):
        pieces.append(_piece(sentence, start, len(sentence.tokens)))
    return pieces


def split_note(name: str, max_tokens: Optional[int], repairs: Sequence[Counter]) -> Optional[str]:
    """One line on the sentences the splits' `repairs` say were split (for `flairsuite tag`), or None where none was."""
    split = sum(counts[SPLIT] for counts in repairs)
    if not split:
        return None
    cuts = sum(counts[kind] for counts in repairs for kind in (AT_PUNCTUATION, AT_TOKEN, OVER_LENGTH))
    return (f"{name}: {split} sentences longer than {max_tokens} tokens split into {split + cuts} pieces (never inside an entity; "
            "`max_tokens: null` keeps them whole)")
