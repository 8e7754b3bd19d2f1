"""The `char` kind: Flair's `CharacterEmbeddings` (Lample et al. 2016) over a built-in character set.

Spec `char` (no name); no artifact: Flair's default character set ("common-chars") needs a
download, so the suite builds its own, `CHARACTERS`, covering Latin-script languages; any other
character maps to <unk>. The embedding trains with the tagger, so it is never cached, and at
inference Flair's own `embed` computes it (no fast path).
"""

import string
from pathlib import Path
from typing import Optional

from flair.data import Dictionary
from flair.embeddings import CharacterEmbeddings, TokenEmbeddings

from flairsuite.rawtext.prepare import char_dictionary

CHARACTERS = "".join(
    dict.fromkeys(
        string.printable.strip()
        + "".join(map(chr, range(0xA1, 0x180)))  # Latin-1 Supplement and Latin Extended-A
        + "–—‘’‚“”„†•…‰‹›€"
    )
)


def character_dictionary() -> Dictionary:
    """The built-in character set of `char`, with <unk> (id 0) for every other character."""
    return char_dictionary(CHARACTERS)


def digested(path: Optional[Path]) -> list[bytes]:
    """What a cache key digests: the character set (there is no artifact file)."""
    return [CHARACTERS.encode("utf-8")]


def frozen(fine_tune: bool) -> bool:
    """Never fixed: the character embedding trains with the tagger."""
    return False


def resolve(name: str, path: Optional[Path]) -> TokenEmbeddings:
    """A fresh (untrained) character embedding over `CHARACTERS`."""
    return CharacterEmbeddings(character_dictionary())


def recognizes(embedding: TokenEmbeddings) -> bool:
    """A CharacterEmbeddings (computed by Flair's own `embed` at inference)."""
    return isinstance(embedding, CharacterEmbeddings)
