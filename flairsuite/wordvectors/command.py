"""Glue between the `train-fasttext` options, the shared corpus preparation, training and the saved vectors."""

import os
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import gensim

from flairsuite.atomic import atomic_folder
from flairsuite.corpora.language_splits import labeled_tokens
from flairsuite.corpora.registry import language_segmentation
from flairsuite.paths import corpora_dir, wordvectors_dir
from flairsuite.rawtext.language import describe, prepare_language
from flairsuite.rawtext.prepare import PreparedCorpus
from flairsuite.summary_file import write_summary
from flairsuite.wordvectors.coverage import augmented, coverage_row
from flairsuite.wordvectors.report import PROBES, neighbour_lines, neighbours, oov_table
from flairsuite.wordvectors.store import VECTORS_FILE, vectors_folder
from flairsuite.wordvectors.tokens import TokenStream
from flairsuite.wordvectors.train import FastTextConfig, train_fasttext


def config_from(options: dict[str, Any]) -> FastTextConfig:
    """Hyper-parameters from the command-line options (threads default to all cores)."""
    return FastTextConfig(
        dim=options["dim"],
        epochs=options["epochs"],
        min_count=options["min_count"],
        threads=options["threads"] or os.cpu_count() or 1,
        buckets=options["buckets"],
        seed=options["seed"],
    )


def train_fasttext_command(options: dict[str, Any]) -> Iterator[str]:
    """Run `train-fasttext`; yields the closing summary lines."""
    lang, config = options["lang"], config_from(options)
    out = Path(options["out_dir"]) if options["out_dir"] else wordvectors_dir()
    target = vectors_folder(out, options.get("name") or lang)
    with atomic_folder(target, options["force"]) as temp:
        corpus = prepare_language(
            lang, options["corpus"], options["corpora_dir"], None, options["heldout_fraction"], seed=options["seed"]
        )
        yield from describe(corpus)
        summary = train_into(temp, corpus, config, corpora_dir(options["corpora_dir"]), label=target.name)
    yield from summary_lines(summary)
    yield f"vectors: {target / VECTORS_FILE} (loads with flair.embeddings.WordEmbeddings(path))"


def train_into(folder: Path, corpus: PreparedCorpus, config: FastTextConfig, root: Path, label: str = "") -> dict[str, Any]:
    """Train on `corpus`, add the uncovered tokens of the labeled corpora under `root`, save vectors and summary.json.

    `label`: the progress bar's name (the vectors folder's, e.g. `de100-fasttext`; default `<language>-fasttext`)."""
    language = corpus.meta["config"]["language"]
    started = time.monotonic()
    characters = language_segmentation(language) == "characters"  # Chinese: one token per character, as in the NER sets
    model = train_fasttext(TokenStream(corpus.text_path("train"), characters), config, desc=label or f"{language}-fasttext")
    seconds = time.monotonic() - started
    splits = list(labeled_tokens(language, root))
    vectors, added = augmented(model.wv, splits)
    vectors.lifecycle_events = None  # no save time or temp path in the file: a retrain writes the same bytes
    vectors.save(str(folder / VECTORS_FILE))
    summary = {
        "language": language,
        "config": asdict(config),
        "tokens": "characters" if characters else "words",
        "vocabulary": len(model.wv),
        "added_tokens": len(added),
        "seconds": round(seconds, 1),
        "coverage": [coverage_row(s, model.wv.key_to_index, vectors.key_to_index) for s in splits],
        "neighbours": neighbours(model.wv, language),
        "unseen_probes": [word for word in PROBES.get(language, ()) if word not in model.wv.key_to_index],
        "gensim": gensim.__version__,
        "corpus": corpus.meta,
    }
    write_summary(folder, summary)
    return summary


def summary_lines(summary: dict[str, Any]) -> Iterator[str]:
    """The closing report: sizes, time, OOV table and nearest neighbours."""
    yield (
        f"vocabulary: {summary['vocabulary']:,} words (dim {summary['config']['dim']}), "
        f"{summary['added_tokens']:,} corpus tokens added from subwords, trained in {summary['seconds']:.1f} s"
    )
    if summary["coverage"]:
        yield "OOV tokens of the labeled corpora (as Flair's WordEmbeddings looks them up):"
        yield from oov_table(summary["coverage"])
    else:
        yield "no labeled corpus of this language found locally: nothing added"
    if summary["neighbours"]:
        yield "nearest neighbours:"
        yield from neighbour_lines(summary["neighbours"], summary["unseen_probes"])
