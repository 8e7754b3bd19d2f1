"""The `flairsuite` command line: one click group, its commands in one module per job; user errors print as one line.

`group` holds the group and the shared options; importing the command modules registers their commands on it.
"""

from flairsuite.cli import (  # noqa: F401  (registers the commands)
    corpora,
    embedding_training,
    evaluate,
    experiments,
    lexicon,
    predict_and_serve,
    suggest,
    train_tagger,
)
from flairsuite.cli.group import cli, main

__all__ = ["cli", "main"]
