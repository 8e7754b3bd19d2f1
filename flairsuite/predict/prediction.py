"""What a prediction did: the sentences and tokens tagged, the entities inserted and skipped as markup, what the reader
rules did to the spans. `predict` prints it as one summary line on stderr (`Prediction.summary`), `flairsuite predict` on
many files adds the numbers up (`flairsuite.cli.predict_files`); `predict_document` gives the output text with it.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from flairsuite.inference.reader_spans import summary as rules_summary


@dataclass(frozen=True)
class Prediction:
    """`predict`'s output text and what it did: sentences and tokens tagged; for markup, entities inserted and skipped."""

    text: str
    sentences: int
    tokens: int
    inserted: Optional[int] = None  # entities written as markup (tei, html)
    skipped: int = 0  # entities not inserted because they would cross markup (tei)
    already_marked: Optional[int] = None  # entities of a TEI/XML input not inserted: they overlap an entity element already there (tei)
    xml_as_text: bool = False  # a TEI/XML-looking input tagged as plain text, markup included (column, json)
    rules: Counter = field(default_factory=Counter)  # what the reader rules did (`flairsuite.inference.reader_spans`)

    def summary(self, seconds: float) -> str:
        """The line `predict` prints on stderr."""
        line = f"tagged {self.sentences:,} sentences, {self.tokens:,} tokens in {seconds:.1f} s"
        if self.inserted is not None:
            line += f"; inserted {self.inserted:,} entities, skipped {self.skipped:,} crossing markup"
        if self.already_marked is not None:
            line += f", {self.already_marked:,} already marked"
        if self.xml_as_text:
            line += "; the file looks like TEI/XML and was read as plain text, markup included (--format tei or html tag its text blocks)"
        return line + rules_summary(self.rules)
