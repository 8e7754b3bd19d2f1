"""The chosen candidates written as units in an annotation tool's import format, with the list of what was written where.

Every format writes the file's own characters: a unit's text runs from its first token to its last as the file has it
(spacing, line breaks and quotes kept; a corpus file's text is its tokens joined by their recorded spacing, a sentence a
line), and its tokens are Flair's at their offsets in that text (a word joined across a line end as the pieces of its
lines, as `predict` writes it). `column` (token TAB tag) and `conll` write the tokens; `webanno` all units as one
document (INCEpTION imports a file as one), the units' texts in rank order separated by a blank line, each sentence's
`#Text=` its characters in the file and offsets into that document; `jsonl` (doccano) a line per unit and `labelstudio`
a task per unit, each with a `meta` object: the file, the line, the unit's character offsets in the file (`start`,
`end`; None for a corpus file), the selected sentences' offsets in the unit's text (`selected`), their ranks and
measures. The same list for every format goes to the side file `selection` of `Suggestion` (the command writes it
beside `--out` as `NAME.selection.json`), with each unit's offset in the written document (`text_start`; webanno's one
document, 0 elsewhere): WebAnno TSV has no place for it that INCEpTION imports.

The written tags go through the reader rules (`flairsuite.inference.reader_spans`: spans trimmed of punctuation tokens,
punctuation-only spans and spans across a line break of the file dropped, counted in the summary line; `reader_spans`
false, `--keep-raw-spans`: not).
"""

import json
from collections.abc import Sequence
from typing import Any, Optional

from flair.data import get_spans_from_bio

from flairsuite.inference.reader_spans import ReaderRules
from flairsuite.markup.annotated import Annotated, pieces
from flairsuite.markup.annotation_formats import annotation_text
from flairsuite.markup.labelstudio import labelstudio_task
from flairsuite.markup.spans import Span
from flairsuite.markup.webanno_writer import one_document
from flairsuite.suggest.candidates import Candidate
from flairsuite.suggest.scoring import Scored

UNIT_SEPARATOR = "\n\n"  # between the units' texts in webanno's one document


def token_spans(tags: Sequence[tuple[str, float]]) -> list[tuple[int, int, str, float]]:
    """The spans of a sentence's BIO tags as (first token, token after the last, type, mean confidence), as Flair reads them."""
    return [(indices[0], indices[-1] + 1, kind, confidence)
            for indices, confidence, kind in get_spans_from_bio([t for t, _ in tags], [c for _, c in tags])]


def written_units(chosen: Sequence[Candidate], join: bool = True) -> list[list[Candidate]]:
    """The chosen candidates (in rank order) grouped into the units written: with `join` (windows), those of one file whose
    sentences overlap or touch are one unit; the units in the order of their best-ranked candidate."""
    units: list[list[Candidate]] = []
    for candidate in chosen:
        first, last = candidate.written
        touching = [unit for unit in units if join and candidate.path is not None and unit[0].path == candidate.path
                    and first <= max(c.written[1] for c in unit) + 1 and last + 1 >= min(c.written[0] for c in unit)]
        if not touching:
            units.append([candidate])
            continue
        touching[0].append(candidate)
        for other in touching[1:]:
            touching[0].extend(other)
            units.remove(other)
    return units


def unit_document(sentences: Sequence[Scored], rules: ReaderRules) -> tuple[Annotated, list[int], list[list[tuple[str, float]]]]:
    """A unit's text (its file's characters from the first sentence's first token to the last one's last), its tokens and
    the spans of its tags through the reader `rules`; where each sentence starts in the text; the tags."""
    text, starts = "", []
    for position, sentence in enumerate(sentences):
        text += sentence.original.lead if position else ""
        starts.append(len(text))
        text += sentence.original.text if position + 1 < len(sentences) else sentence.original.text[: sentence.original.end]
    offsets, spans, tagged = [], [], []
    for sentence, start in zip(sentences, starts):
        tags = rules.apply_words([sentence.scores.tags], [sentence.words], [sentence.gaps()])[0]
        tokens = [(start + a, start + b) for a, b in sentence.original.tokens]
        offsets.append([piece for token in tokens for piece in pieces(text, *token)])
        spans.extend(Span(tokens[first][0], tokens[after - 1][1], kind, confidence) for first, after, kind, confidence in token_spans(tags))
        tagged.append(tags)
    return Annotated(text, offsets, spans), starts, tagged


def unit_meta(members: Sequence[Candidate], sentences: Sequence[Scored], starts: Sequence[int], text: str, ranks: dict[int, int],
              measure: str) -> dict[str, Any]:
    """Where a written unit comes from: its file, line and character offsets there (None for a corpus file), and per selected
    candidate its rank, measure, line, offsets in the file and in the unit's text (`in_unit`)."""
    place = {sentence.index: position for position, sentence in enumerate(sentences)}
    origin = sentences[0].original.start
    selected = []
    for candidate in sorted(members, key=lambda c: ranks[c.index]):
        first, last = place[candidate.selected[0]], place[candidate.selected[1]]
        begin, end = starts[first], starts[last] + sentences[last].original.end
        selected.append({"rank": ranks[candidate.index], measure: round(candidate.value, 4), "line": sentences[first].original.line,
                         "start": None if origin is None else origin + begin, "end": None if origin is None else origin + end, "in_unit": [begin, end]})
    return {"file": sentences[0].path, "line": sentences[0].original.line, "start": origin,
            "end": None if origin is None else origin + len(text), "selected": selected}


def formatted(documents: list[Annotated], metas: list[dict[str, Any]], rows: list[tuple[list[Scored], list[Any]]], fmt: str,
              model_version: str) -> str:
    """The written units in `fmt` (module docstring)."""
    if fmt == "column":
        blocks = ["\n".join(f"{word}\t{tag}" for word, (tag, _) in zip(sentence.words, tags))
                  for sentences, tagged in rows for sentence, tags in zip(sentences, tagged)]
        return "\n\n".join(blocks) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps({"text": document.text, "label": [[s.start, s.end, s.type] for s in document.spans], "meta": meta},
                                  ensure_ascii=False) + "\n" for document, meta in zip(documents, metas))
    if fmt == "labelstudio":
        tasks = [{**labelstudio_task(document, model_version), "meta": meta} for document, meta in zip(documents, metas)]
        return json.dumps(tasks, ensure_ascii=False, indent=1) + "\n"
    if fmt == "webanno":  # one document per file, as INCEpTION imports it
        documents = [one_document(documents, UNIT_SEPARATOR)]
    return annotation_text(documents, fmt, model_version)


def write_units(chosen: Sequence[Candidate], fmt: str, model_version: str, measure: str, rules: Optional[ReaderRules] = None,
                join: bool = True) -> tuple[str, list[dict[str, Any]], int, int]:
    """The chosen candidates (in rank order) written as units in `fmt`, their tags through the reader `rules` when given
    (`join`: windows that overlap or touch written as one); the list of the units written (`unit_meta`, with each one's
    place in the output), and their sentences and tokens."""
    rules = rules or ReaderRules(False)
    ranks = {candidate.index: rank for rank, candidate in enumerate(chosen, 1)}
    documents, metas, rows = [], [], []
    for members in written_units(chosen, join):
        sentences = sorted({s.index: s for candidate in members for s in candidate.context}.values(), key=lambda s: s.index)
        document, starts, tagged = unit_document(sentences, rules)
        documents.append(document)
        metas.append(unit_meta(members, sentences, starts, document.text, ranks, measure))
        rows.append((sentences, tagged))
    listed, position = [], 0
    for number, (document, meta) in enumerate(zip(documents, metas)):
        listed.append({"position": number, "text_start": position if fmt == "webanno" else 0, **meta})
        position += len(document.text) + len(UNIT_SEPARATOR)
    text = formatted(documents, metas, rows, fmt, model_version)
    return text, listed, sum(len(sentences) for sentences, _ in rows), sum(len(s.words) for sentences, _ in rows for s in sentences)
