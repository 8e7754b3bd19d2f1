"""Word tokens of raw text, split as the NER corpora split them (words, and each other non-space character)."""

import re

TOKEN = re.compile(r"\w+|[^\w\s]")  # words, and every other non-space character on its own


def tokenize(text: str, characters: bool = False) -> list[str]:
    """`"Er kam, sah."` -> `["Er", "kam", ",", "sah", "."]`; `characters` (text without spaces, Chinese): every non-space character."""
    return [char for char in text if not char.isspace()] if characters else TOKEN.findall(text)
