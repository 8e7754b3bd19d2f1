"""Line-end break marks among a labelled file's tokens: `Ber` `¬` `lin`, the word cut at a line end, kept as three tokens.

OCR'd newspapers in HIPE's TSV give the hyphen that cut a word at a line end a token of its own, flagged `EndOfLine`
in MISC, between the two pieces of the word. An own corpus's `line_break: COLUMN:FLAG|FLAG` (the `hipe` preset:
`MISC:EndOfLine`) names the flag; the reader keeps which tokens carry it (`TaggedSentence.line_ends`), and a flagged
token is a **break mark** when

- it is one hyphen character of `flairsuite.corpora.line_ends.HYPHENS` (`-`, the soft hyphen, U+2010, U+2011, `¬`,
  `⸗`, `=`),
- the token before it ends with a letter and the token after it starts with one (the same sentence), and
- `line_ends.decision` does not leave it (the piece after it is no conjunction: `Haus` `-` `und` stays a suspended
  compound).

A flagged token that is no hyphen (a plain word at a line end) is simply no mark. The labels stay on the tokens; what
changes is what the character LMs read (`flairsuite.embeddings.broken_words`): the pieces as one word, `Ber` `¬` `lin`
as "Berlin", or with `-` where `line_ends.decision` keeps a compound (`Lasker` `¬` `Schüler`: "Lasker-Schüler"), as
`predict` reads a raw text's line-end breaks. In a Flair `Sentence` a mark is a token label of type `BREAK_LABEL`.
"""

from collections.abc import Iterable, Sequence
from typing import Optional

from flair.data import Sentence

from flairsuite.corpora.line_ends import HYPHENS, KEEP, LEAVE, LEFT_PART, RIGHT_PART, decision

BREAK_LABEL = "line_break"  # the Flair token label of a break mark
BREAK_VALUE = "mark"


def reading_hyphen(left: str, mark: str, right: str) -> Optional[str]:
    """What the LM reads between the pieces `left` and `right` of a word cut by the token `mark`: "" (joined), "-" (a
    compound kept), or None where `mark` is no break mark between them (module docstring)."""
    if len(mark) != 1 or mark not in HYPHENS:
        return None
    before, after = LEFT_PART.search(left), RIGHT_PART.match(right)
    if before is None or after is None:
        return None
    kind = decision(before.group(), after.group(), mark)
    return None if kind == LEAVE else "-" if kind == KEEP else ""


def break_marks(tokens: Sequence[str], flagged: Iterable[int]) -> list[int]:
    """The indices of the break marks among `tokens`, given the indices of the tokens that carry the line-break flag."""
    return [i for i in sorted(set(flagged)) if 0 < i < len(tokens) - 1 and reading_hyphen(tokens[i - 1], tokens[i], tokens[i + 1]) is not None]


def mark_breaks(sentence: Sentence, marks: Iterable[int]) -> Sentence:
    """`sentence` with the tokens at `marks` labelled as break marks (`BREAK_LABEL`)."""
    for index in marks:
        sentence.tokens[index].add_label(BREAK_LABEL, BREAK_VALUE)
    return sentence


def marks_of(sentence: Sentence) -> list[int]:
    """The indices of the tokens of `sentence` labelled as break marks, ascending."""
    if BREAK_LABEL not in sentence.annotation_layers:
        return []
    return sorted({label.data_point.idx - 1 for label in sentence.get_labels(BREAK_LABEL)})
