"""How well a lexicon knows the entities of labeled NER data: coverage of the gold entities and precision of its matches.

- coverage: the share of the gold entity mentions (of a dataset's train split) whose text is an
  entry (Jia et al. 2020 report about 31 % of the entities of their news set found by new-word
  discovery); also over distinct entity texts.
- hit precision: the share of the lexicon's matches in the same sentences (by the matcher's rule)
  whose span is exactly a gold entity's.
"""

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from flairsuite.corpora.labeled import read_split
from flairsuite.corpora.registry import dataset, names
from flairsuite.corpora.tags import bio_spans
from flairsuite.lexicon.match import LexiconMatcher, token_matches
from flairsuite.lexicon.store import Lexicon, split_entry

EXAMPLES = 5


@dataclass
class Coverage:
    """The coverage and hit precision of a lexicon on one labeled split."""

    dataset: str
    split: str
    mentions: int = 0
    covered: int = 0
    distinct: int = 0
    distinct_covered: int = 0
    matches: int = 0
    exact: int = 0
    hits: list[str] = field(default_factory=list)  # the most frequent covered entity texts
    misses: list[str] = field(default_factory=list)  # the most frequent entity texts the lexicon lacks

    @property
    def mention_share(self) -> float:
        return self.covered / self.mentions if self.mentions else 0.0

    @property
    def distinct_share(self) -> float:
        return self.distinct_covered / self.distinct if self.distinct else 0.0

    @property
    def precision(self) -> float:
        return self.exact / self.matches if self.matches else 0.0


def split_coverage(lexicon: Lexicon, matcher: LexiconMatcher, name: str, split: str, sentences: list) -> Coverage:
    """Coverage and hit precision of `lexicon` on `sentences` (tokens with BIO tags) of dataset `name`."""
    entries = set(lexicon.entries)
    found = Coverage(name, split)
    texts: Counter = Counter()
    known: set[str] = set()
    for sentence in sentences:
        gold = set()
        for start, end, _ in bio_spans(sentence.tags):
            text = lexicon.text(tuple(sentence.tokens[start:end])) if lexicon.units == "words" else "".join(sentence.tokens[start:end])
            texts[text] += 1
            if split_entry(text, lexicon.units) in entries:
                known.add(text)
            gold.add((start, end))
        matches = token_matches(matcher, sentence.tokens)
        found.matches += len(matches)
        found.exact += sum((start, end) in gold for start, end, _ in matches)
    found.mentions, found.covered = sum(texts.values()), sum(n for text, n in texts.items() if text in known)
    found.distinct, found.distinct_covered = len(texts), len(known)
    ranked = [text for text, _ in texts.most_common()]
    found.hits = [text for text in ranked if text in known][:EXAMPLES]
    found.misses = [text for text in ranked if text not in known][:EXAMPLES]
    return found


def language_coverage(lexicon: Lexicon, matcher: LexiconMatcher, language: str, root: Path, split: str = "train") -> list[Coverage]:
    """Coverage on `split` of every registered NER dataset of `language` whose file is present under `root`."""
    results = []
    for name in names():
        spec = dataset(name)
        if spec.task != "ner" or spec.language != language or split not in spec.splits:
            continue
        path = spec.locate(spec.splits[split], root)
        if path is not None:
            results.append(split_coverage(lexicon, matcher, name, split, read_split(spec, path).sentences))
    return results
