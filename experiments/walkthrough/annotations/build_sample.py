"""Rebuild the walk-through's annotation exports from Sturm (CC BY 4.0): an INCEpTION-style WebAnno TSV 3.3 project
export and a doccano JSONL export of other letters of the same edition.

    python experiments/walkthrough/annotations/build_sample.py      # reads $FLAIRSUITE_CORPORA/sturm

Sturm's sentences come as tokens, so each text is its tokens joined by spaces, as INCEpTION shows a tokenised import.
inception/: train/, dev/, test/ hold one file per "letter" of 30 consecutive sentences (train: Sturm's first 720
train sentences; dev, test: the first 150 of Sturm's dev and test), entities in the NamedEntity layer (`value`), a
multi-token entity with its `[N]` id. doccano/: train.jsonl (train sentences 720-1439), dev.jsonl and test.jsonl
(the rest of dev and test), one JSON line per letter of 10 sentences written as plain text (no space before a
punctuation mark), entities as `label: [[start, end, TYPE]]`.
"""

import json
import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMED_ENTITY = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
TEXT_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
ATTACHED_LEFT = {".", ",", ";", ":", "!", "?", ")", "]"}  # doccano's texts are plain text: no space before these ...
ATTACHED_RIGHT = {"(", "["}  # ... nor after these
VALUE_ESCAPES = {"\\": "\\\\", "[": "\\[", "]": "\\]", "|": "\\|", "_": "\\_", "->": "\\->", ";": "\\;", "\t": "\\t", "\n": "\\n", "*": "\\*"}


def read(path: Path) -> list[list[tuple[str, str]]]:
    sentences, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            token, tag = line.split(" ")
            current.append((token, tag))
        elif current:
            sentences.append(current)
            current = []
    return sentences + ([current] if current else [])


def entities(sentence: list[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """(first token, after the last, type) of each BIO entity."""
    found = []
    for index, (_, tag) in enumerate(sentence):
        if tag.startswith("I-") and found and found[-1][1] == index and found[-1][2] == tag[2:]:
            found[-1] = (found[-1][0], index + 1, tag[2:])
        elif tag != "O":
            found.append((index, index + 1, tag[2:]))
    return found


def escape(text: str, table: dict[str, str]) -> str:
    for key in sorted(table, key=len, reverse=True):
        text = text.replace(key, table[key])
    return text


def webanno(sentences: list[list[tuple[str, str]]]) -> str:
    """One document as INCEpTION writes it: the header, two blank lines, each sentence's #Text and token rows."""
    lines = ["#FORMAT=WebAnno TSV 3.3", f"#T_SP={NAMED_ENTITY}|identifier|value", "", ""]
    offset, ident = 0, 0
    for number, sentence in enumerate(sentences, 1):
        text = " ".join(token for token, _ in sentence)
        lines.append("#Text=" + escape(text, TEXT_ESCAPES))
        cells = [("_", "_")] * len(sentence)
        for first, after, kind in entities(sentence):
            suffix = ""
            if after - first > 1:
                ident += 1
                suffix = f"[{ident}]"
            for index in range(first, after):
                cells[index] = (f"*{suffix}", escape(kind, VALUE_ESCAPES) + suffix)
        position = offset
        for index, ((token, _), (identifier, value)) in enumerate(zip(sentence, cells), 1):
            units = len(token.encode("utf-16-le")) // 2
            lines.append(f"{number}-{index}\t{position}-{position + units}\t{escape(token, TEXT_ESCAPES)}\t{identifier}\t{value}")
            position += units + 1
        lines.append("")
        offset += len(text.encode("utf-16-le")) // 2 + 1
    return "\n".join(lines) + "\n"


def doccano(sentences: list[list[tuple[str, str]]], ident: int) -> str:
    """One letter as a doccano JSON line: the sentences' text and its character spans (end exclusive)."""
    starts, text = [], ""
    spans = []
    for sentence in sentences:
        if text:
            text += " "
        starts = []
        for token, _ in sentence:
            if token in ATTACHED_LEFT and text.endswith(" "):
                text = text[:-1]  # "habe ." is written "habe.", as a letter's text would be
            starts.append(len(text))
            text += token + ("" if token in ATTACHED_RIGHT else " ")
        text = text.rstrip(" ")
        for first, after, kind in entities(sentence):
            spans.append([starts[first], starts[after - 1] + len(sentence[after - 1][0]), kind])
    return json.dumps({"id": ident, "text": text, "label": spans, "Comments": []}, ensure_ascii=False) + "\n"


def main() -> None:
    source = Path(os.environ.get("FLAIRSUITE_CORPORA", "corpora")) / "sturm"
    train, dev, test = (read(source / f"{split}_sturm.conll") for split in ("train", "dev", "test"))
    for split, part in (("train", train[:720]), ("dev", dev[:150]), ("test", test[:150])):
        folder = HERE / "inception" / split
        folder.mkdir(parents=True, exist_ok=True)
        for number, start in enumerate(range(0, len(part), 30), 1):
            (folder / f"brief-{split}-{number:02d}.tsv").write_text(webanno(part[start : start + 30]), encoding="utf-8")
    (HERE / "doccano").mkdir(exist_ok=True)
    for split, part in (("train", train[720:1440]), ("dev", dev[150:]), ("test", test[150:])):
        lines = [doccano(part[start : start + 10], start // 10 + 1) for start in range(0, len(part), 10)]
        (HERE / "doccano" / f"{split}.jsonl").write_text("".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
