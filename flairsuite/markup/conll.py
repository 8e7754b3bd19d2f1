"""CoNLL-2002 columns: a token and its BIO (IOB2) tag per line, separated by a space; a blank line after each sentence."""

from collections.abc import Iterable

from flairsuite.errors import FlairsuiteError
from flairsuite.markup.annotated import Annotated


def conll_text(documents: Iterable[Annotated]) -> str:
    """Every sentence of the documents as token-space-tag lines; a token holding whitespace cannot be written (one-line error)."""
    blocks = []
    for document in documents:
        for forms, tags in zip(document.forms(), document.tags()):
            for form in forms:
                if not form or any(char.isspace() for char in form):
                    raise FlairsuiteError(f"token {form!r} holds whitespace: CoNLL-2002 columns cannot hold it (use --format webanno or jsonl)")
            blocks.append("".join(f"{form} {tag}\n" for form, tag in zip(forms, tags)))
    return "\n".join(blocks) + ("\n" if blocks else "")
