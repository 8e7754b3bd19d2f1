"""How well a character LM's dictionary covers the language's labeled corpora, or the user's own texts.

A character outside the dictionary reaches the LM as `<unk>`: its own embedding is lost and the
hidden state carries only "some rare character". Two shares per labeled split (characters of its
tokens, running counts): `unk`, outside the dictionary (what the embeddings see), and `unseen`, never
in the LM's training text at all (the part of `unk` no rarer cut-off (`--unk-fraction`) could have
saved). For Chinese, where every character is a unit, these rates say how much of a tagger's input
the LM never learned, e.g. modern vocabulary of CLUENER against an LM trained on classical novels.

A run on the user's own text (`--corpus`, always with `--init`) is reported on that text instead: one row per path given
(split `text`), the characters of its words read as the run reads them (`rawtext.prepare.corpus_sources`: a file, or a
folder's .txt and .txt.gz files; documents with words broken at line ends joined), streamed; whitespace left out, as the
labeled rows count the characters of tokens.
"""

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from flairsuite.corpora.language_splits import SplitTokens
from flairsuite.corpora.raw import iter_documents
from flairsuite.rawtext.prepare import corpus_sources

EXAMPLES = 5  # the most frequent characters outside the dictionary, per split
TEXT_SPLIT = "text"  # the split column of a row of the user's texts
DATASET_WIDTH = 22  # the report's dataset column, wider where a name or path needs it


def training_characters(text_path: Path, chunk: int = 1 << 24) -> set[str]:
    """Every character of the LM's training text."""
    seen: set[str] = set()
    with text_path.open(encoding="utf-8", newline="") as handle:
        while block := handle.read(chunk):
            seen.update(block)
    return seen


def coverage_row(dataset: str, split: str, chars: Counter, dictionary: set[str], seen: set[str]) -> dict[str, Any]:
    """One row: running characters (`chars`: their counts), those outside `dictionary` (<unk>) and those not in `seen`."""
    total = sum(chars.values())
    unk = Counter({char: n for char, n in chars.items() if char not in dictionary})
    unseen = sum(n for char, n in unk.items() if char not in seen)
    return {
        "dataset": dataset, "split": split, "characters": total,
        "unk": sum(unk.values()), "unk_rate": round(sum(unk.values()) / total, 6) if total else 0.0,
        "unk_distinct": len(unk), "unseen": unseen, "unseen_rate": round(unseen / total, 6) if total else 0.0,
        "unk_examples": [[char, n] for char, n in unk.most_common(EXAMPLES)],
    }


def coverage_rows(splits: Iterable[SplitTokens], dictionary: set[str], seen: set[str]) -> list[dict[str, Any]]:
    """Per split: running characters, those outside `dictionary` (<unk>) and those not in `seen` (the training text)."""
    rows = []
    for split in splits:
        chars: Counter = Counter()
        for token, count in split.counts.items():
            for char in token:
                chars[char] += count
        rows.append(coverage_row(split.dataset, split.split, chars, dictionary, seen))
    return rows


def text_characters(path: str) -> Counter:
    """The counts of the characters of the words of one `--corpus` path, read as the run reads it (module docstring)."""
    chars: Counter = Counter()
    for source in corpus_sources("", [path], Path(".")):
        for _, text in iter_documents(source.path, source.spec, source.encoding):
            chars.update(text)
    for space in [char for char in chars if char.isspace()]:
        del chars[space]
    return chars


def text_coverage_rows(paths: Iterable[str], dictionary: set[str], seen: set[str]) -> list[dict[str, Any]]:
    """Per `--corpus` path, as given: the characters of its words, those outside `dictionary` and those not in `seen`."""
    return [coverage_row(path, TEXT_SPLIT, text_characters(path), dictionary, seen) for path in paths]


def coverage_lines(rows: list[dict[str, Any]], what: str = "the labeled corpora") -> list[str]:
    """The report on `what` (the labeled corpora, or "your texts"): a table of the shares, and the most frequent `<unk>`
    characters."""
    if not rows:
        return ["no labeled corpus of this language found locally: no character coverage to report"]
    width = max(DATASET_WIDTH, *(len(row["dataset"]) + 1 for row in rows))
    lines = [f"characters of {what} outside the LM's dictionary (<unk>) and never in its training text:",
             f"  {'dataset':<{width}}{'split':<7}{'characters':>12}{'<unk> %':>9}{'distinct':>10}{'unseen %':>10}  most frequent <unk>"]
    for row in rows:
        examples = " ".join(f"{char}×{n}" for char, n in row["unk_examples"]) or "-"
        lines.append(f"  {row['dataset']:<{width}}{row['split']:<7}{row['characters']:>12,}{row['unk_rate'] * 100:>9.3f}"
                     f"{row['unk_distinct']:>10,}{row['unseen_rate'] * 100:>10.3f}  {examples}")
    return lines
