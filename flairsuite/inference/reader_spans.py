"""Spans a reader would accept: the tagger's entity spans trimmed of punctuation, and those nobody would mark dropped.

A tagger that knows little of a text's kind marks "’" of "d’Audretsch", a lone "." or "!" as a person, or runs a
span from the end of one line into the next. `predict`, `serve` and `suggest` therefore read the spans of the tags
(Flair's way, `get_spans_from_bio`, after Entity-Fix where asked) and apply, to each span:

- its leading and trailing **punctuation tokens** (every character Unicode punctuation, category P: `’ . „ “ ( ) !`)
  leave it: their tags become `O` (counted `trimmed`);
- a span of **punctuation only** is dropped: its tags become `O` (counted `punctuation only`);
- a span with a **line break** between two of its tokens in the original text is dropped (counted `across a line
  break`). A word joined across a line end (`flairsuite.corpora.line_ends`: "Heems-\\nkerck") is one token, so it
  crosses none.

The rules work on the tags, so every output format (column, json, conll, webanno, jsonl, labelstudio, tei, html; serve's
spans, suggest's pre-annotations) holds the same spans. A span a rule changes gets well-formed tags of its type (BIO,
or BIOES where its tags were BIOES); every other tag stays as the tagger gave it, so where no rule applies the tags are
the raw ones. `--keep-raw-spans` (predict, serve, suggest) turns the rules off; a tagger of one label per token (PoS)
has no spans and is never changed.
"""

import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence

from flair.data import Sentence, get_spans_from_bio

from flairsuite.models.crf import Tagged

TRIMMED = "trimmed"
PUNCTUATION_ONLY = "punctuation only"
ACROSS_LINES = "across a line break"
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")  # what str.splitlines splits at

Tags = list[tuple[str, float]]
Local = Callable[[int, int], tuple[int, int]]  # characters of the view -> offsets in the original text


def is_punctuation(word: str) -> bool:
    """Whether every character of a (non-empty) token is Unicode punctuation."""
    return bool(word) and all(unicodedata.category(char).startswith("P") for char in word)


def has_line_break(gap: str) -> bool:
    """Whether the text between two tokens holds a line break."""
    return any(char in LINE_BREAKS for char in gap)


def span_tags(kind: str, size: int, bioes: bool) -> list[str]:
    """Well-formed tags of a span of `size` tokens of type `kind`."""
    if bioes and size == 1:
        return [f"S-{kind}"]
    inside = [f"I-{kind}"] * (size - 1)
    if bioes:
        inside[-1] = f"E-{kind}"
    return [f"B-{kind}", *inside]


def reader_tags(tags: Tags, words: Sequence[str], gaps: Sequence[str], counts: Counter) -> Tags:
    """A sentence's tags with the rules of the module docstring applied; `words` are its tokens, `gaps[i]` the original
    text between token i and i + 1; what the rules did is added to `counts`."""
    found = list(tags)
    for indices, _, kind in get_spans_from_bio([tag for tag, _ in tags], [confidence for _, confidence in tags]):
        first, last = indices[0], indices[-1]
        while first <= last and is_punctuation(words[first]):
            first += 1
        while last >= first and is_punctuation(words[last]):
            last -= 1
        if first > last:
            counts[PUNCTUATION_ONLY] += 1
        elif any(has_line_break(gaps[i]) for i in range(first, last)):
            counts[ACROSS_LINES] += 1
        elif (first, last) == (indices[0], indices[-1]):
            continue
        else:
            counts[TRIMMED] += 1
            bioes = any(tags[i][0][:2] in ("S-", "E-") for i in indices)
            for i, tag in zip(range(first, last + 1), span_tags(kind, last - first + 1, bioes)):
                found[i] = (tag, tags[i][1])
            indices = [i for i in indices if not first <= i <= last]
        for i in indices:
            found[i] = ("O", tags[i][1])
    return found


def words_and_gaps(sentence: Sentence, text: str, local: Local) -> tuple[list[str], list[str]]:
    """A sentence's token texts and the original text between each two of them (`local`: view offsets -> offsets in `text`)."""
    base = sentence.start_position
    offsets = [local(base + token.start_position, base + token.end_position) for token in sentence]
    gaps = [text[end:start] for (_, end), (start, _) in zip(offsets, offsets[1:])]
    return [token.text for token in sentence], gaps


class ReaderRules:
    """The rules on or off (`active`), and what they did over everything they were applied to (`counts`)."""

    def __init__(self, active: bool = True) -> None:
        self.active = active
        self.counts: Counter = Counter()

    def apply(self, sentences: Sequence[Sentence], tagged: Tagged, text: str, local: Local) -> Tagged:
        """The sentences' tags with the rules applied (as they are when the rules are off); the sentences were split from a
        view of `text` whose offsets `local` maps to `text`."""
        if not self.active:
            return tagged
        return self.apply_words(tagged, *zip(*(words_and_gaps(sentence, text, local) for sentence in sentences)))

    def apply_tokens(self, tagged: Tagged, offsets: Sequence[Sequence[tuple[int, int]]], words: Sequence[Sequence[str]], text: str) -> Tagged:
        """The same for sentences given as their tokens' texts and (start, end) offsets in `text`."""
        gaps = [[text[end:start] for (_, end), (start, _) in zip(tokens, tokens[1:])] for tokens in offsets]
        return self.apply_words(tagged, words, gaps)

    def apply_words(self, tagged: Tagged, words: Sequence[Sequence[str]] = (), gaps: Sequence[Sequence[str]] = ()) -> Tagged:
        """The same for sentences given as their tokens' texts and the original text between each two of them."""
        if not self.active:
            return tagged
        return [reader_tags(tags, texts, between, self.counts) for tags, texts, between in zip(tagged, words, gaps)]

    def summary(self) -> str:
        """What the rules did, for a command's summary line on stderr (`summary`)."""
        return summary(self.counts)


def summary(counts: Counter) -> str:
    """What the rules did (`counts`), as a part of a command's summary line on stderr ("" when they did nothing)."""
    dropped = counts[PUNCTUATION_ONLY] + counts[ACROSS_LINES]
    if not (dropped or counts[TRIMMED]):
        return ""
    return (f"; dropped {dropped:,} spans ({counts[PUNCTUATION_ONLY]:,} punctuation only, {counts[ACROSS_LINES]:,} across a line break)"
            f" and trimmed {counts[TRIMMED]:,} of punctuation (--keep-raw-spans keeps them as tagged)")
