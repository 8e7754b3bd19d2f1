"""The writers of the annotation-tool formats, part by part: `conll`, `webanno`, `jsonl` (doccano) and `labelstudio`.

They write the spans on the tokens of the text (`flairsuite.predict.tagged_text.annotated_text`: Flair's tokens at
their offsets in the file, a word joined across a line end as the pieces of its lines), each part as it comes, so that
the output is what the whole-document writers of `flairsuite.markup` give for the file: `conll` and `webanno` are
written part by part (WebAnno's sentence numbers, UTF-16 offsets and multi-token span numbers counted on from part to
part); `jsonl`'s labels and `labelstudio`'s results wait in a temporary file (`Spool`) until the text is written.
"""

import json
import tempfile
from bisect import bisect_left
from collections.abc import Iterable, Iterator

from flairsuite.inference.stream import Part
from flairsuite.markup.conll import conll_text
from flairsuite.markup.labelstudio import labelstudio_task
from flairsuite.markup.webanno_writer import FORMAT_LINE, LAYER_LINE, NO_ANNOTATION, NO_VALUE, escape_text, escape_value, utf16_offsets
from flairsuite.models.crf import Tagged
from flairsuite.predict.outputs import Output
from flairsuite.predict.tagged_text import annotated_text


class ConllOutput(Output):
    """`conll`: CoNLL-2002 token SPACE tag lines, a blank line after each sentence (`flairsuite.markup.conll`)."""

    def part(self, part: Part, tagged: Tagged) -> str:
        return conll_text([annotated_text(part.text, part.view, part.sentences, tagged)])  # each sentence ends in a blank line


class WebannoOutput(Output):
    """`webanno`: WebAnno TSV 3.3 as `flairsuite.markup.webanno_writer.webanno_tsv` writes the whole file as one document,
    sentences, UTF-16 offsets and multi-token span numbers counted on from part to part."""

    def __init__(self) -> None:
        self.sentences = self.entities = self.utf16 = 0

    def part(self, part: Part, tagged: Tagged) -> str:
        document = annotated_text(part.text, part.view, part.sentences, tagged)
        utf16 = [self.utf16 + offset for offset in utf16_offsets(part.text)]
        self.utf16 = utf16[-1]
        cells: dict[int, tuple[str, str]] = {}  # token start -> (identifier, value)
        starts = sorted(start for sentence in document.sentences for start, _ in sentence)
        for span in document.spans:
            covered = starts[bisect_left(starts, span.start) : bisect_left(starts, span.end)]
            suffix = ""
            if len(covered) > 1:
                self.entities += 1
                suffix = f"[{self.entities}]"
            cells.update((start, (NO_VALUE + suffix, escape_value(span.type) + suffix)) for start in covered)
        lines = [] if self.started or not document.sentences else [FORMAT_LINE, LAYER_LINE, ""]
        for sentence in document.sentences:
            self.sentences += 1
            lines.append("")
            lines.extend("#Text=" + escape_text(line) for line in part.text[sentence[0][0] : sentence[-1][1]].split("\n"))
            for position, (start, end) in enumerate(sentence, 1):
                identifier, value = cells.get(start, (NO_ANNOTATION, NO_ANNOTATION))
                lines.append(f"{self.sentences}-{position}\t{utf16[start]}-{utf16[end]}\t{part.text[start:end]}\t{identifier}\t{value}\t")
        self.started = self.started or bool(lines)
        return "\n".join(lines) + "\n" if lines else ""


class Spool:
    """Text written to a temporary file as it comes and read back in blocks at the end (what must follow text not yet written)."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile("w+", encoding="utf-8")
        self.count = 0  # items written

    def add(self, text: str, separator: str) -> None:
        self.file.write((separator if self.count else "") + text)
        self.count += 1

    def read(self) -> Iterator[str]:
        self.file.seek(0)
        while block := self.file.read(1 << 16):
            yield block
        self.file.close()


def json_characters(text: str) -> str:
    """`text` as the characters inside a JSON string (`json.dumps` without its quotes: escapes never span two characters)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


class DoccanoOutput(Output):
    """`jsonl`: one doccano line for the file, `{"text": ..., "label": [...]}` as `flairsuite.markup.doccano` writes it;
    the text is written part by part, the labels wait in a temporary file."""

    def __init__(self) -> None:
        self.labels = Spool()

    def part(self, part: Part, tagged: Tagged) -> str:
        for span in annotated_text(part.text, part.view, part.sentences, tagged).spans:
            self.labels.add(json.dumps([part.start + span.start, part.start + span.end, span.type], ensure_ascii=False), ", ")
        head = "" if self.started else '{"text": "'
        self.started = True
        return head + json_characters(part.text)

    def end(self) -> Iterable[str]:
        yield '", "label": ['
        yield from self.labels.read()
        yield "]}\n"


class LabelStudioOutput(Output):
    """`labelstudio`: one task for the file as `flairsuite.markup.labelstudio` writes it (indented JSON); the text is written
    part by part, the results wait in a temporary file until the prediction's score (their mean confidence) is known."""

    def __init__(self, model_version: str) -> None:
        self.model_version = model_version
        self.results = Spool()
        self.confidence = 0.0

    def part(self, part: Part, tagged: Tagged) -> str:
        document = annotated_text(part.text, part.view, part.sentences, tagged)
        for span, result in zip(document.spans, labelstudio_task(document, self.model_version)["predictions"][0]["result"]):
            self.confidence += span.confidence
            result["id"] = f"e{self.results.count + 1}"
            result["value"]["start"] += part.start
            result["value"]["end"] += part.start
            self.results.add(json.dumps(result, ensure_ascii=False, indent=1).replace("\n", "\n     "), ",\n     ")
        head = "" if self.started else '[\n {\n  "data": {\n   "text": "'
        self.started = True
        return head + json_characters(part.text)

    def end(self) -> Iterable[str]:
        score = self.confidence / self.results.count if self.results.count else 1.0
        yield f'"\n  }},\n  "predictions": [\n   {{\n    "model_version": {json.dumps(self.model_version, ensure_ascii=False)},\n'
        yield f'    "score": {json.dumps(round(score, 4))},\n    "result": ['
        if self.results.count:
            yield "\n     "
            yield from self.results.read()
            yield "\n    "
        yield "]\n   }\n  ]\n }\n]\n"
