"""The old home of the CSE tagger, kept so that `from flairsuite.tagging.cse import ClassStartEndTagger`
(README examples and users' scripts from before the `models` package) goes on working."""

from flairsuite.models.cse import ClassStartEndTagger, decode_cse, spans_to_bio

__all__ = ["ClassStartEndTagger", "decode_cse", "spans_to_bio"]
