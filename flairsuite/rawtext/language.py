"""The prepared raw-text corpus of a language (its registry raw-text set or the user's files), shared by every pre-training command."""

from collections.abc import Iterator
from pathlib import Path
from typing import Optional

from flairsuite.corpora.registry import dataset, names
from flairsuite.errors import unknown_name_error
from flairsuite.files.paths import corpora_dir, prepared_dir
from flairsuite.rawtext.prepare import PreparedCorpus, prepare
from flairsuite.rawtext.settings import PrepareConfig


def raw_languages() -> list[str]:
    """Languages with a raw-text set in the corpus registry (those `train-charlm --lang` knows)."""
    return sorted({dataset(name).language for name in names() if dataset(name).task == "raw"})


def raw_set(language: str) -> str:
    """The registry's raw-text set of `language` (`raw-de`, ...); an unknown language is a one-line error."""
    found = [name for name in names() if dataset(name).task == "raw" and dataset(name).language == language]
    if not found:
        raise unknown_name_error("language", language, raw_languages())
    return found[0]


def prepare_language(
    language: str,
    corpus: tuple[str, ...],
    corpora: Optional[str],
    cache: Optional[Path] = None,
    heldout_fraction: float = PrepareConfig.heldout_fraction,
    unk_fraction: float = PrepareConfig.unk_fraction,
    seed: int = PrepareConfig.seed,
    base_chars: tuple[str, ...] = (),
    new_chars: str = PrepareConfig.new_chars,
    exclude: tuple[str, ...] = (),
) -> PreparedCorpus:
    """The language's prepared corpus: `corpus` files, else its recipe's raw-text set (cached below `cache`, default `paths.prepared_dir()`);
    `base_chars`, `new_chars` and `exclude` as `PrepareConfig` says (a continued LM's dictionary, more corpora cut out)."""
    config = PrepareConfig(
        language=language,
        raw_set=raw_set(language),
        corpus=tuple(corpus),
        heldout_fraction=heldout_fraction,
        unk_fraction=unk_fraction,
        seed=seed,
        base_chars=tuple(base_chars),
        new_chars=new_chars,
        exclude=tuple(exclude),
    )
    return prepare(config, corpora_dir(corpora), prepared_dir() if cache is None else cache)


def describe(corpus: PreparedCorpus) -> Iterator[str]:
    """Report lines: where the prepared corpus is, its size, and each source's documents and removals."""
    yield f"prepared corpus: {corpus.path} ({corpus.meta['splits']['train']:,} training characters)"
    for source, stats in corpus.meta["sources"].items():
        yield f"  {source}: {stats['documents']:,} documents, {stats['sentences_removed']} labeled dev/test sentences removed"
