"""The model, loaded once, and how a text becomes entity spans at character offsets of that very text.

Splitting, tagging, Entity-Fix and reading spans are `flairsuite.predict`'s; the text goes through
`flair_view` first (`flairsuite.inference.segmentation`), so spans are mapped back to the posted text.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import flair.nn
from flair.data import Sentence

from flairsuite.inference.segmentation import flair_view
from flairsuite.inference.tagger import BATCH_SIZE, FastTagger
from flairsuite.markup.spans import Span
from flairsuite.models.card import model_segmentation
from flairsuite.models.crf import Tagged
from flairsuite.predict import FLAIR_BATCH_SIZE, char_spans, check_spans, fixed, flair_tags, load_tagger, predicts_spans, split


@dataclass(frozen=True)
class Tagging:
    """A text's entities at character offsets of the text, and the numbers of sentences and tokens Flair split it into."""

    spans: list[Span]
    sentences: int
    tokens: int


class TextTagger:
    """A saved suite tagger, loaded once: `tag(texts)` tags many texts in one call (one batch for all their sentences)."""

    def __init__(self, model_path: Path, fast: bool = True, batch_size: Optional[int] = None, entity_fix: bool = False) -> None:
        self.model: flair.nn.Classifier = load_tagger(model_path)
        check_spans(self.model, model_path, entity_fix, markup=False)
        self.name = model_path.name
        self.fast = FastTagger(self.model, batch_size=batch_size or BATCH_SIZE) if fast else None
        self.batch_size = batch_size or FLAIR_BATCH_SIZE
        self.entity_fix = entity_fix
        self.spans = predicts_spans(self.model)
        self.segmentation = model_segmentation(self.model)  # words, or characters for a Chinese tagger

    def raw_tags(self, sentences: list[Sentence]) -> Tagged:
        """The model's raw tags and confidences (fast path or plain Flair), after Entity-Fix when asked."""
        if not sentences:
            return []
        tagged = self.fast.tag(sentences) if self.fast is not None else flair_tags(self.model, sentences, self.batch_size)
        return fixed(tagged) if self.entity_fix else tagged

    def tag(self, texts: Sequence[str]) -> list[Tagging]:
        """Every text's spans (sorted, at character offsets of the text) with its sentence and token counts."""
        views = [flair_view(text) for text in texts]
        per_text = [split(view.text, self.segmentation) for view in views]
        tagged = self.raw_tags([sentence for found in per_text for sentence in found])
        results, position = [], 0
        for view, found in zip(views, per_text):
            rows = tagged[position : position + len(found)]
            position += len(found)
            spans = [Span(*view.original(s.start, s.end), s.type, s.confidence) for s in char_spans(view.text, found, rows)] if self.spans else []
            results.append(Tagging(spans, len(found), sum(len(sentence) for sentence in found)))
        return results
