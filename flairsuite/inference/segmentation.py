"""How raw text becomes the tokens a saved tagger was trained on: `flairsuite.corpora.segmentation`, where the
functions live so that the corpus readers of annotation exports (`jsonl`) tokenise as `predict` and `serve` do."""

from flairsuite.corpora.segmentation import (  # noqa: F401  (this module's names, kept for predict, serve and the tests)
    PROBLEM_CHARACTERS,
    SENTENCE_END,
    CharacterSentenceSplitter,
    CharacterTokenizer,
    FlairView,
    flair_view,
    split_text,
)
