"""What the runs of one grid share: the corpora and cached embedding arrays read so far (`GridData`), a run's split features,
and the tag dictionary and label type of a corpus. Used by the grid runner (`runner.py`), its Ray tasks (`ray_runner.py`) and
the active-learning simulation (`simulation.py`)."""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from flair.data import Dictionary
from flair.embeddings import StackedEmbeddings, TokenEmbeddings

from flairsuite.embeddings import stack
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.grid import Run
from flairsuite.tagging.cache import cached_vectors, frozen
from flairsuite.tagging.data import LabeledSplit, labeled_splits
from flairsuite.tagging.features import Part, SplitFeatures

LABEL_TYPE = "ner"
TRAIN_WITH_DEV = "train+dev"  # the training split of `train_with_dev` runs (cached on its own)


@dataclass
class GridData:
    """Corpora and cached embedding arrays loaded so far, shared by the runs of one grid."""

    home: Path
    corpora_root: Path
    corpora: dict[str, dict[str, LabeledSplit]] = field(default_factory=dict)
    arrays: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    computed: int = 0
    cache: Optional[Path] = None  # the embedding cache folder (default: below home)
    sources: dict[str, dict[str, LabeledSplit]] = field(default_factory=dict)  # transfer sources: only the splits they give

    def source_splits(self, corpus: CorpusChoice, names: tuple[str, ...]) -> dict[str, LabeledSplit]:
        """The splits `names` of a transfer source, read together once (GermEval's dev and test, without its train)."""
        if corpus.key not in self.sources:
            self.sources[corpus.key] = labeled_splits(corpus.spec(), corpus.subsample, self.corpora_root, names)
        return self.sources[corpus.key]

    def splits(self, corpus: CorpusChoice) -> dict[str, LabeledSplit]:
        """Train, dev and test of `corpus` (read once)."""
        if corpus.key not in self.corpora:
            splits = labeled_splits(corpus.spec(), corpus.subsample, self.corpora_root)
            train, dev = splits["train"], splits["dev"]
            splits[TRAIN_WITH_DEV] = train + dev
            self.corpora[corpus.key] = splits
        return self.corpora[corpus.key]

    def array(self, corpus: CorpusChoice, spec: str, split: str) -> Any:
        """The cached vectors of `spec` on one split of `corpus`, a grid corpus or a transfer source (computed once, ever)."""
        key = (corpus.key, spec, split)
        if key not in self.arrays:
            labeled = self.sources[corpus.key][split] if corpus.key in self.sources else self.splits(corpus)[split]
            self.arrays[key], computed = cached_vectors(spec, labeled, self.home, f"embed {corpus.key} {split} {spec}", self.cache)
            self.computed += computed
        return self.arrays[key]


def joins_breaks(corpus: CorpusChoice) -> bool:
    """Whether the corpus names a `line_break` flag, so that its taggers' character LMs read words cut at line ends whole."""
    fmt = corpus.spec().format
    return fmt is not None and bool(fmt.line_break)


def run_stack(run: Run, home: Path) -> TokenEmbeddings:
    """The run's embeddings, stacked in order; its character LMs read words cut at line ends whole where its corpus marks
    them (`joins_breaks`), as its cached vectors do (`flairsuite.tagging.cache`)."""
    return stack(list(run.embedding_specs), home, joins_breaks(run.corpus))


def embedding_modules(embeddings: TokenEmbeddings) -> list[TokenEmbeddings]:
    """The embeddings of a stack in order (a single embedding: itself)."""
    return list(embeddings.embeddings) if isinstance(embeddings, StackedEmbeddings) else [embeddings]


def features(run: Run, modules: list[TokenEmbeddings], data: GridData, split: str) -> SplitFeatures:
    """One split of the run's corpus under its stack: cached arrays for frozen specs, the model's module otherwise."""
    parts: list[Part] = [
        data.array(run.corpus, spec, split) if frozen(spec, run.fine_tune) else module for spec, module in zip(run.embedding_specs, modules)
    ]
    return SplitFeatures(data.splits(run.corpus)[split], parts)


def tag_dictionary(corpus: CorpusChoice) -> Dictionary:
    """NER: the entity types of the corpus (registry order; own corpora: sorted), marked as span labels
    (Flair adds O, B-, I-). PoS: its tags as they are, one per token."""
    dictionary = Dictionary(add_unk=False)
    dictionary.span_labels = corpus.task.spans
    for entity_type in corpus.spec().output_types:
        dictionary.add_item(entity_type)
    return dictionary


def label_type(corpus: CorpusChoice) -> str:
    """The label the corpus's tagger predicts: `ner`, or the PoS column (`upos`, `xpos`) as `SequenceTagger.predict` adds it."""
    return LABEL_TYPE if corpus.task.spans else corpus.spec().label_type or corpus.task.name
