"""`suggest`, the entry point: the top N candidates of TEXTS by the model's uncertainty, written pre-annotated, with the
ranking it prints and the numbers of its summary line (`Suggestion`).

The format, measure and unit are checked first (one-line errors), then the model is loaded (`flairsuite.inference`) and
checked to give the measure, TEXTS scored into the pool, the top N chosen and written (package docstring).
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from flairsuite.errors import FlairsuiteError
from flairsuite.inference.reader_spans import ReaderRules
from flairsuite.inference.saved_tagger import load_tagger, predicts_spans
from flairsuite.markup.annotation_formats import ANNOTATION_FORMATS
from flairsuite.models.selection import ranked
from flairsuite.models.uncertainty import MEASURES, check_supported
from flairsuite.suggest.candidates import MIN_TOKENS, NEIGHBOURS
from flairsuite.suggest.output import write_units
from flairsuite.suggest.pool import choose, scored_pool

FORMATS = ("column", *ANNOTATION_FORMATS)
UNITS = ("sentence", "window", "document")

@dataclass(frozen=True)
class Suggestion:
    """What `suggest` writes (`text`), the ranking it prints, its numbers, and the list of what was written where (`selection`)."""

    text: str
    ranking: str
    units: int  # candidates ranked
    chosen: int
    passed_over: int  # near-duplicates skipped on the way to the top N
    rules: str = ""  # what the reader rules did to the written tags (`flairsuite.inference.reader_spans.summary`)
    inside: int = 0  # candidates passed over inside the window of one chosen before
    written: int = 0  # units written (windows of one file that overlap or touch are one)
    sentences: int = 0
    tokens: int = 0
    selection: dict[str, Any] = field(default_factory=dict)

    def summary(self, measure: str, unit: str, seconds: float) -> str:
        kind = "documents" if unit == "document" else "sentences"
        inside = f" and {self.inside:,} inside a chosen window" if self.inside else ""
        return (f"ranked {self.units:,} {kind} by {measure}; chose {self.chosen:,}, passing over {self.passed_over:,} near-duplicates{inside}, "
                f"in {seconds:.1f} s; wrote {self.written:,} {unit}s ({self.sentences:,} sentences, {self.tokens:,} tokens){self.rules}")


def suggest(model_path: Path, texts: Path, n: int, fmt: str, unit: str = "window", measure: str = "uncertainty",
            batch_size: Optional[int] = None, join_lines: bool = True, reader_spans: bool = True, neighbours: int = NEIGHBOURS,
            min_tokens: int = MIN_TOKENS) -> Suggestion:
    """The top `n` candidates of `texts` by `measure` of the model at `model_path`, written as `unit`s pre-annotated in `fmt`
    (package docstring; `join_lines`: words broken at line ends joined, `reader_spans`: the reader rules applied to the
    written tags; `neighbours`: a window's sentences on each side; `min_tokens`: shorter sentences are merged)."""
    if fmt not in FORMATS:
        raise FlairsuiteError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    if measure not in MEASURES:
        raise FlairsuiteError(f"unknown measure '{measure}' (known: {', '.join(MEASURES)})")
    if unit not in UNITS:
        raise FlairsuiteError(f"unknown unit '{unit}' (known: {', '.join(UNITS)})")
    model = load_tagger(model_path)
    check_supported(model, str(model_path))
    pool = scored_pool(model, texts, n, unit, measure, batch_size, join_lines, neighbours, max(min_tokens, 1))
    candidates = pool.candidates()
    chosen, passed, inside = choose(candidates, ranked([c.value for c in candidates]), n)
    lines = ["rank\t" + measure + "\tsource\ttext"]
    for rank, index in enumerate(chosen, 1):
        lines.append(f"{rank}\t{candidates[index].value:.4f}\t{candidates[index].source}\t{candidates[index].preview}")
    rules = ReaderRules(reader_spans and predicts_spans(model))
    text, listed, sentences, tokens = write_units([candidates[i] for i in chosen], fmt, model_path.name, measure, rules, unit == "window")
    selection = {"model": str(model_path), "measure": measure, "unit": unit, "neighbours": neighbours if unit == "window" else 0,
                 "min_tokens": min_tokens, "format": fmt, "units": listed}
    return Suggestion(text, "\n".join(lines) + "\n", pool.seen, len(chosen), passed, rules.summary(), inside, len(listed), sentences, tokens,
                      selection)
