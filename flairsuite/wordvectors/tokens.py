"""Word tokens of raw text, split as the NER corpora split them, streamed for gensim."""

from collections.abc import Iterator
from pathlib import Path

from flairsuite.rawtext.tokens import tokenize

MAX_TOKENS = 10_000  # gensim truncates longer sentences (word2vec MAX_WORDS_IN_BATCH), so documents are cut


class TokenStream:
    """A restartable gensim corpus: the tokens of each line (document) of a text file, read anew on every pass."""

    def __init__(self, path: Path, characters: bool = False) -> None:
        self.path, self.characters = path, characters

    def __iter__(self) -> Iterator[list[str]]:
        with self.path.open(encoding="utf-8") as handle:
            for line in handle:
                tokens = tokenize(line, self.characters)
                for start in range(0, len(tokens), MAX_TOKENS):
                    yield tokens[start : start + MAX_TOKENS]
