"""How well a character LM's dictionary covers the language's labeled corpora.

A character outside the dictionary reaches the LM as `<unk>`: its own embedding is lost and the
hidden state carries only "some rare character". Two shares per labeled split (characters of its
tokens, running counts): `unk`, outside the dictionary (what the embeddings see), and `unseen`, never
in the LM's training text at all (the part of `unk` no rarer cut-off (`--unk-fraction`) could have
saved). For Chinese, where every character is a unit, these rates say how much of a tagger's input
the LM never learned, e.g. modern vocabulary of CLUENER against an LM trained on classical novels.
"""

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from flairsuite.corpora.language_splits import SplitTokens

EXAMPLES = 5  # the most frequent characters outside the dictionary, per split


def training_characters(text_path: Path, chunk: int = 1 << 24) -> set[str]:
    """Every character of the LM's training text."""
    seen: set[str] = set()
    with text_path.open(encoding="utf-8", newline="") as handle:
        while block := handle.read(chunk):
            seen.update(block)
    return seen


def coverage_rows(splits: Iterable[SplitTokens], dictionary: set[str], seen: set[str]) -> list[dict[str, Any]]:
    """Per split: running characters, those outside `dictionary` (<unk>) and those not in `seen` (the training text)."""
    rows = []
    for split in splits:
        chars: Counter = Counter()
        for token, count in split.counts.items():
            for char in token:
                chars[char] += count
        total = sum(chars.values())
        unk = Counter({char: n for char, n in chars.items() if char not in dictionary})
        unseen = sum(n for char, n in unk.items() if char not in seen)
        rows.append({
            "dataset": split.dataset, "split": split.split, "characters": total,
            "unk": sum(unk.values()), "unk_rate": round(sum(unk.values()) / total, 6) if total else 0.0,
            "unk_distinct": len(unk), "unseen": unseen, "unseen_rate": round(unseen / total, 6) if total else 0.0,
            "unk_examples": [[char, n] for char, n in unk.most_common(EXAMPLES)],
        })
    return rows


def coverage_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The report: a table of the shares, and the most frequent `<unk>` characters."""
    if not rows:
        return ["no labeled corpus of this language found locally: no character coverage to report"]
    lines = ["characters of the labeled corpora outside the LM's dictionary (<unk>) and never in its training text:",
             f"  {'dataset':<22}{'split':<7}{'characters':>12}{'<unk> %':>9}{'distinct':>10}{'unseen %':>10}  most frequent <unk>"]
    for row in rows:
        examples = " ".join(f"{char}×{n}" for char, n in row["unk_examples"]) or "-"
        lines.append(f"  {row['dataset']:<22}{row['split']:<7}{row['characters']:>12,}{row['unk_rate'] * 100:>9.3f}"
                     f"{row['unk_distinct']:>10,}{row['unseen_rate'] * 100:>10.3f}  {examples}")
    return lines
