"""The prepared raw-text corpus of a language, shared by `train-charlm` and `train-fasttext`."""

from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from flairsuite.charlm.prepare import PrepareConfig, PreparedCorpus, prepare
from flairsuite.charlm.recipes import recipe
from flairsuite.paths import corpora_dir, home


def default_cache() -> Path:
    """Where `train-charlm` keeps prepared corpora by default: `<home>/charlm/prepared`."""
    return home() / "charlm" / "prepared"


def prepare_language(
    language: str,
    corpus: tuple[str, ...],
    corpora: Optional[str],
    cache: Path,
    heldout_fraction: float = PrepareConfig.heldout_fraction,
    unk_fraction: float = PrepareConfig.unk_fraction,
    seed: int = PrepareConfig.seed,
) -> PreparedCorpus:
    """The language's prepared corpus: `corpus` files, else its recipe's raw-text set (cached below `cache`)."""
    raw_set, _ = recipe(language)
    config = PrepareConfig(
        language=language,
        raw_set=raw_set,
        corpus=tuple(corpus),
        heldout_fraction=heldout_fraction,
        unk_fraction=unk_fraction,
        seed=seed,
    )
    return prepare(config, corpora_dir(corpora), cache)


def describe(corpus: PreparedCorpus) -> Iterator[str]:
    """Report lines: where the prepared corpus is, its size, and each source's documents and removals."""
    yield f"prepared corpus: {corpus.path} ({corpus.meta['splits']['train']:,} training characters)"
    for source, stats in corpus.meta["sources"].items():
        yield f"  {source}: {stats['documents']:,} documents, {stats['sentences_removed']} NER dev/test sentences removed"
