"""What a character LM reads of a sentence with words cut at line ends: the words, each cut word whole.

A sentence read from a corpus with `line_break` (`flairsuite.corpora.break_marks`) may hold break marks: `Ber` `¬` `lin`
is one word cut by a line-end hyphen. The LM reads such a run of pieces and marks as one word, "Berlin" (or "Lasker-Schüler"
where `line_ends.decision` keeps a compound's hyphen), followed by the whitespace after its last piece; every other token
is a word of its own, as Flair reads it. `Words` says, for each token, which word it belongs to: every token of a cut word
(the pieces and the marks) gets that word's vector, so a tagger still labels the tokens as they are.
"""

from dataclasses import dataclass
from typing import Optional

from flair.data import Sentence, Token

from flairsuite.corpora.break_marks import marks_of, reading_hyphen


@dataclass(frozen=True)
class Words:
    """The words the LM reads (`texts`), the whitespace after each (Flair's `whitespace_after` of its last token), and
    per token of the sentence the index of its word (`owners`)."""

    texts: list[str]
    spaces: list[int]
    owners: list[int]


def read_words(sentence: Sentence) -> Optional[Words]:
    """The words of `sentence` with its cut words whole; None where it holds no break mark (it is read token by token).
    A mark at either end of the sentence, or one `reading_hyphen` does not take for a break, is read as a token."""
    marks = set(marks_of(sentence))
    if not marks:
        return None
    tokens = sentence.tokens
    texts: list[str] = []
    spaces: list[int] = []
    owners: list[int] = []
    joining = False  # the token before was a mark: this one ends the word it cut
    for index, token in enumerate(tokens):
        if joining:
            texts[-1] += token.text
            spaces[-1] = token.whitespace_after
            joining = False
        elif (hyphen := cut_by(tokens, index, marks)) is not None:
            texts[-1] += hyphen
            joining = True
        else:
            texts.append(token.text)
            spaces.append(token.whitespace_after)
        owners.append(len(texts) - 1)
    return Words(texts, spaces, owners)


def cut_by(tokens: list[Token], index: int, marks: set[int]) -> Optional[str]:
    """What the LM reads for token `index` where it is a break mark between two pieces (`reading_hyphen`), else None."""
    if index not in marks or not 0 < index < len(tokens) - 1:
        return None
    return reading_hyphen(tokens[index - 1].text, tokens[index].text, tokens[index + 1].text)


def words_text(words: Words, tokenized: bool) -> str:
    """The sentence as Flair's `to_tokenized_string` (`tokenized`: words joined by a space) or `to_plain_string` (each
    word followed by its whitespace, the end stripped) would give it for these words."""
    if tokenized:
        return " ".join(words.texts)
    return "".join(text + " " * space for text, space in zip(words.texts, words.spaces)).rstrip()
