"""What a saved tagger records beside its weights, in Flair's model card (saved and loaded with the model).

The suite's entry (`flairsuite`) holds the tagger's `segmentation`: how raw text becomes its tokens,
`words` or, for a tagger of a corpus read one token per character (the registry's `segmentation`:
CLUENER), `characters`; a word-segmented Chinese treebank (UD GSDSimp) keeps `words`. `predict` and
`serve` split raw text by it (`flairsuite.corpora.segmentation`).
"""

from typing import Any

import flair.nn

SEGMENTATIONS = ("words", "characters")
CARD_KEY = "flairsuite"  # the model card's entry the suite writes


def model_segmentation(model: flair.nn.Model) -> str:
    """The segmentation a saved tagger's card records ("words" for a model without one, as every model before the card)."""
    card: Any = getattr(model, "model_card", None)
    entry = card.get(CARD_KEY) if isinstance(card, dict) else None
    found = entry.get("segmentation") if isinstance(entry, dict) else None
    return found if found in SEGMENTATIONS else "words"


def record_segmentation(model: flair.nn.Model, segmentation: str) -> None:
    """Write `segmentation` into the model's card (kept by Flair's `save` and `load`); other card entries stay."""
    if segmentation not in SEGMENTATIONS:
        raise ValueError(f"segmentation must be one of {SEGMENTATIONS}, not {segmentation!r}")
    card = model.model_card if isinstance(getattr(model, "model_card", None), dict) else {}
    entry = card.get(CARD_KEY) if isinstance(card.get(CARD_KEY), dict) else {}
    model.model_card = {**card, CARD_KEY: {**entry, "segmentation": segmentation}}
