"""Sentence-boundary precision, recall and F1 of the sentence splitters on running text rebuilt from gold sentences.

    FLAIRSUITE_CORPORA=/path/to/corpora python benchmarks/sentence_boundaries.py [--split test] [--max-chars 200000]

Splitters: Flair's `SegtokSentenceSplitter` (what `split_text` used before issue 74), `GermanSentenceSplitter`
(`flairsuite.corpora.sentence_splitter`, abbreviations learned from the text itself), the same with abbreviations
also learned from the corpus's train split ("+ train abbreviations"), and spaCy's rule-based `sentencizer` where
spaCy is installed (it is no dependency of the suite).

Texts: the gold sentences of a split of Sturm, H. Arendt, LER (registered datasets, read by the suite's readers),
AjMC German (HIPE-2022, read as an own corpus as experiments/ajmc-baseline.yaml does, no sentence cut at 250
tokens) and the walk-through's INCEpTION letters (experiments/walkthrough/annotations/inception/SPLIT/) with the
test fixture tests/fixtures/annotation/inception-letter.tsv. A CoNLL corpus's tokens are joined by a space except
before closing punctuation (. , ; : ! ? ) ] “) and after opening brackets and quotes (( [ „); AjMC's spacing is its
own (NoSpaceAfter); the letters' text is their `#Text=` lines as the files hold them (tokenised: "Berlin ."). Variant
"space": all sentences joined by one space; "documents": sentences of a document by one space, documents by a blank
line (AjMC's pages, the letters' files; the other corpora mark no documents). A corpus is cut after the sentence that
reaches `--max-chars` characters.

A boundary is the character offset at which a sentence ends (after its last non-space character; the text's own end
is not counted): a predicted one is right when a gold sentence ends at the same offset. Below the table, a few
wrong boundaries per splitter and text: "split" where a splitter cut but the gold did not, "missed" the reverse.
"""

import argparse
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from common import run_main
from flair.splitter import SegtokSentenceSplitter

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.own import own_corpus
from flairsuite.corpora.readers import TaggedSentence
from flairsuite.corpora.registry import dataset
from flairsuite.corpora.sentence_splitter import GermanSentenceSplitter, learn_abbreviations
from flairsuite.corpora.webanno_reader import unescape_text
from flairsuite.files.paths import corpora_dir

ROOT = Path(__file__).resolve().parents[1]
LETTERS = ROOT / "experiments" / "walkthrough" / "annotations" / "inception"
FIXTURE_LETTER = ROOT / "tests" / "fixtures" / "annotation" / "inception-letter.tsv"
AJMC = {
    "name": "ajmc-de",
    "path": "hipe2022_ajmc_de",
    "format": "column",
    "sep": "tab",
    "header": True,
    "text": "TOKEN",
    "label": "NE-COARSE-LIT",
    "sentence_end": "MISC:EndOfSentence",
    "comment": "#",
    "max_tokens": None,
}
AJMC_DOCUMENT = "# hipe2022:document_id"
NO_SPACE_BEFORE = frozenset({".", ",", ";", ":", "!", "?", ")", "]", "}", "“", "...", "…"})
NO_SPACE_AFTER = frozenset({"(", "[", "{", "„"})
TRAIN_CHARS = 2_000_000  # train text read for "+ train abbreviations", at most


@dataclass
class Gold:
    """A running text, where its gold sentences end, and (for the tagging benchmark) each gold sentence's token offsets."""

    name: str
    text: str
    ends: list[int]
    tokens: list[list[tuple[int, int]]]
    sentences: list[TaggedSentence]
    note: str = ""


def attached(tokens: Sequence[str], whitespace: Sequence[bool], spaced: bool) -> list[bool]:
    """For each token, whether a space follows it: the file's spacing (`spaced`), else the punctuation rule of the module docstring."""
    if spaced:
        return list(whitespace)
    after = []
    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        after.append(token not in NO_SPACE_AFTER and following not in NO_SPACE_BEFORE)
    return after


def rebuilt(name: str, sentences: Sequence[TaggedSentence], starts: set[int], spaced: bool, max_chars: int, note: str = "") -> Gold:
    """The running text of `sentences` (a blank line before each index in `starts`, else one space), cut after `max_chars`."""
    parts: list[str] = []
    length, ends, offsets, kept = 0, [], [], []
    for index, sentence in enumerate(sentences):
        if length >= max_chars:
            note = note or f"first {len(kept)} of {len(sentences)} sentences"
            break
        if index:
            gap = "\n\n" if index in starts else " "
            parts.append(gap)
            length += len(gap)
        spans = []
        for token, space in zip(sentence.tokens, attached(sentence.tokens, sentence.whitespace_after, spaced)):
            spans.append((length, length + len(token)))
            parts.append(token + " " * space)
            length += len(token) + space
        length -= len(parts[-1]) - len(parts[-1].rstrip(" "))  # the sentence ends at its last token
        parts[-1] = parts[-1].rstrip(" ")
        ends.append(length)
        offsets.append(spans)
        kept.append(sentence)
    return Gold(name, "".join(parts), ends[:-1], offsets, kept, note)


def registered(name: str, root: Path, split: str) -> list[TaggedSentence]:
    return read_splits(dataset(name), root, [split])[split].sentences


def ajmc(root: Path, split: str) -> tuple[list[TaggedSentence], set[int]]:
    """AjMC's sentences of `split` and the indices of the sentences that start a page (a `document_id` comment before them)."""
    spec = own_corpus(AJMC, root, needed=[split])
    data = read_splits(spec, root, [split])[split]
    marks = [number for number, line in enumerate(data.path.read_text(encoding="utf-8").splitlines(), 1) if line.startswith(AJMC_DOCUMENT)]
    starts, mark = set(), 1  # the first document's mark comes before the first sentence
    for index, sentence in enumerate(data.sentences):
        if mark < len(marks) and sentence.lines[0] > marks[mark]:
            starts.add(index)
            while mark < len(marks) and sentence.lines[0] > marks[mark]:
                mark += 1
    return data.sentences, starts


def webanno_sentences(path: Path) -> list[TaggedSentence]:
    """The sentences of an INCEpTION file as their `#Text=` lines hold them, one token: the whole text (its tokens aside)."""
    found, lines = [], []
    for line in [*path.read_text(encoding="utf-8").splitlines(), ""]:
        if line.startswith("#Text="):
            lines.append(unescape_text(line[len("#Text=") :]))
        elif lines and not line.startswith("#"):
            found.append(TaggedSentence(["\n".join(lines)], ["O"], [0], [True]))
            lines = []
    return found


def letters(split: str) -> tuple[list[TaggedSentence], set[int]]:
    """The walk-through's INCEpTION letters of `split` and the fixture letter, one document each."""
    sentences: list[TaggedSentence] = []
    starts = set()
    for path in [*sorted((LETTERS / split).glob("*.tsv")), FIXTURE_LETTER]:
        if sentences:
            starts.add(len(sentences))
        sentences.extend(webanno_sentences(path))
    return sentences, starts


def gold_texts(root: Path, split: str, max_chars: int) -> Iterator[tuple[str, Gold]]:
    """(corpus name, text) of every corpus and variant (module docstring)."""
    for name in ("sturm", "arendt", "ler"):
        yield name, rebuilt(f"{name} {split}, space", registered(name, root, split), set(), False, max_chars)
    sentences, starts = ajmc(root, split)
    yield "ajmc", rebuilt(f"ajmc {split}, space", sentences, set(), True, max_chars)
    yield "ajmc", rebuilt(f"ajmc {split}, documents", sentences, starts, True, max_chars)
    sentences, starts = letters(split)
    yield "letters", rebuilt(f"letters {split}, space", sentences, set(), True, max_chars)
    yield "letters", rebuilt(f"letters {split}, documents", sentences, starts, True, max_chars)


def train_abbreviations(corpus: str, root: Path) -> frozenset[str]:
    """Abbreviations learned from the corpus's train split (its text rebuilt as above, at most TRAIN_CHARS characters)."""
    if corpus == "letters":
        sentences, starts = letters("train")
        return learn_abbreviations([rebuilt("", sentences, starts, True, TRAIN_CHARS).text])
    if corpus == "ajmc":
        return learn_abbreviations([rebuilt("", ajmc(root, "train")[0], set(), True, TRAIN_CHARS).text])
    return learn_abbreviations([rebuilt("", registered(corpus, root, "train"), set(), False, TRAIN_CHARS).text])


def spacy_ends() -> Optional[Callable[[str], list[int]]]:
    """spaCy's rule-based sentencizer (a blank German pipeline), or None where spaCy is not installed."""
    try:
        import spacy  # not a dependency: measured only where it is installed
    except ImportError:
        return None
    nlp = spacy.blank("de")
    nlp.add_pipe("sentencizer")
    nlp.max_length = 10**8
    return lambda text: [sentence.start_char + len(sentence.text.rstrip()) for sentence in nlp(text).sents]


def flair_ends(splitter) -> Callable[[str], list[int]]:
    return lambda text: [s.start_position + s.tokens[-1].end_position for s in splitter.split(text) if len(s)]


def score(predicted: list[int], gold: Gold) -> tuple[float, float, float, set[int], set[int]]:
    """Precision, recall, F1 (in %) of the predicted boundaries (the text's end left out), and the wrong and missed ones."""
    found = {end for end in predicted if end < len(gold.text.rstrip())}
    right = set(gold.ends)
    hits = len(found & right)
    precision = 100 * hits / len(found) if found else 0.0
    recall = 100 * hits / len(right) if right else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, found - right, right - found


def shown(text: str, at: int) -> str:
    """The text around offset `at`, the boundary marked by ‖, line breaks as ⏎."""
    return (text[max(0, at - 40) : at] + "‖" + text[at : at + 30]).replace("\n", "⏎")


def examples(gold: Gold, wrong: set[int], missed: set[int], count: int) -> list[str]:
    lines = [f"    split  {shown(gold.text, at)}" for at in sorted(wrong)[:count]]
    return lines + [f"    missed {shown(gold.text, at)}" for at in sorted(missed)[:count]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora-dir", help="datasets folder (default: $FLAIRSUITE_CORPORA)")
    parser.add_argument("--split", default="test", choices=["dev", "test"])
    parser.add_argument("--max-chars", type=int, default=200_000, help="characters of a corpus's text, at most (cut after a sentence)")
    parser.add_argument("--examples", type=int, default=3, help="wrong boundaries shown per splitter and text, of each kind")
    args = parser.parse_args()
    root = corpora_dir(args.corpora_dir)
    sentencizer = spacy_ends()
    rows, notes, errors = [], [], []
    learned: dict[str, frozenset[str]] = {}
    for corpus, gold in gold_texts(root, args.split, args.max_chars):
        if corpus not in learned:
            learned[corpus] = train_abbreviations(corpus, root)
        splitters = {
            "segtok (before)": flair_ends(SegtokSentenceSplitter()),
            "german (now)": flair_ends(GermanSentenceSplitter()),
            "german + train abbreviations": flair_ends(GermanSentenceSplitter(abbreviations=learned[corpus])),
            "spacy sentencizer": sentencizer,
        }
        if gold.note:
            notes.append(f"{gold.name}: {gold.note}")
        for name, ends in splitters.items():
            if ends is None:
                rows.append(f"| {gold.name} | {len(gold.text):,} | {len(gold.ends):,} | {name} | not installed | | | |")
                continue
            started = time.perf_counter()
            precision, recall, f1, wrong, missed = score(ends(gold.text), gold)
            seconds = time.perf_counter() - started
            rows.append(f"| {gold.name} | {len(gold.text):,} | {len(gold.ends):,} | {name} | {precision:.1f} | {recall:.1f} | {f1:.1f} | {seconds:.2f} |")
            if wrong or missed:
                errors.append(f"  {gold.name}, {name}: {len(wrong)} wrong, {len(missed)} missed")
                errors.extend(examples(gold, wrong, missed, args.examples))
    print("| text | characters | gold boundaries | splitter | precision | recall | F1 | seconds |")
    print("|---|--:|--:|---|--:|--:|--:|--:|")
    print("\n".join(rows))
    print(f"\n{args.split} splits; texts cut at {args.max_chars:,} characters" + (": " + "; ".join(notes) if notes else " (none was cut)"))
    print("\nexamples of wrong boundaries (split: cut where the gold runs on; missed: a gold end not cut):")
    print("\n".join(errors))
    return 0


if __name__ == "__main__":
    run_main(main)
