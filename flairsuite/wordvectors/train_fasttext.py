"""Glue between a `train-fasttext` run (`settings.FastTextRun`), the shared corpus preparation, training and the saved vectors."""

import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional, Union

import gensim
from gensim.models import FastText

from flairsuite.corpora.language_splits import labeled_tokens
from flairsuite.corpora.registry import language_segmentation
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import atomic_folder
from flairsuite.files.paths import corpora_dir, wordvectors_dir
from flairsuite.files.summary_file import write_summary
from flairsuite.rawtext.language import describe, prepare_language
from flairsuite.rawtext.prepare import PreparedCorpus, corpus_sources, file_digest
from flairsuite.wordvectors.coverage import augmented, coverage_row
from flairsuite.wordvectors.gensim_training import continue_fasttext, train_fasttext
from flairsuite.wordvectors.initial import FIXED, InitialVectors, initial_vectors
from flairsuite.wordvectors.report import PROBES, neighbour_lines, neighbours, oov_table
from flairsuite.wordvectors.settings import FastTextConfig, FastTextRun
from flairsuite.wordvectors.store import MODEL_FOLDER, VECTORS_FILE, folder_bytes, model_file, vectors_folder
from flairsuite.wordvectors.tokens import TokenStream


def config_from(run: FastTextRun) -> FastTextConfig:
    """Hyper-parameters from the run's options (threads default to all cores, the others to FastTextConfig's)."""
    return FastTextConfig(threads=run.threads or os.cpu_count() or 1, **run.config, seed=run.seed)


def continued_config(run: FastTextRun, model: FastText, initial: InitialVectors) -> FastTextConfig:
    """The hyper-parameters of a run continuing `model`: its own, with --epochs, --threads and --min-count as given;
    a --dim or --buckets that differs from the model's is a one-line error (module `initial`)."""
    own = {"dim": model.vector_size, "buckets": model.wv.bucket}
    differing = [key for key in FIXED if run.config.get(key) is not None and run.config[key] != own[key]]
    if differing:
        raise FlairsuiteError(
            f"--init {run.init}: {initial.model_path} has {', '.join(f'{key} {own[key]}' for key in differing)}; "
            "a continued model keeps them (leave those options out)"
        )
    return FastTextConfig(
        dim=own["dim"], buckets=own["buckets"], window=model.window, seed=model.seed,
        epochs=run.config.get("epochs") or FastTextConfig.epochs, min_count=run.config.get("min_count") or model.min_count,
        threads=run.threads or os.cpu_count() or 1,
    )


def language_of(run: FastTextRun, initial: Optional[InitialVectors]) -> str:
    """--lang, else the language the initial vectors' summary records; a contradiction or neither: a one-line error."""
    recorded = initial.summary.get("language") if initial else None
    if run.lang and recorded and run.lang != recorded:
        raise FlairsuiteError(f"--lang {run.lang}: the --init vectors {initial.folder} were trained on {recorded} text")
    if not (run.lang or recorded):
        raise FlairsuiteError("--lang is needed" + (f" (--init {run.init}: {initial.folder} has no summary.json naming it)" if initial else ""))
    return run.lang or recorded


def initial_of(run: FastTextRun, out: Path) -> Optional[InitialVectors]:
    """The vectors `--init` continues (None without it); an --init without --name or --corpus: a one-line error."""
    if not run.init:
        return None
    if not run.name:
        raise FlairsuiteError(f"--init {run.init} needs --name: the continued vectors' folder prefix (wordvectors/NAME-fasttext)")
    if not run.corpus:
        raise FlairsuiteError(f"--init {run.init} needs --corpus: the text to continue the vectors on")
    return initial_vectors(run.init, (wordvectors_dir(), out))


def train_fasttext_command(run: FastTextRun) -> Iterator[str]:
    """Run `train-fasttext` (with `--init`: continue trained vectors on the --corpus text); yields the closing summary lines."""
    out = Path(run.out_dir) if run.out_dir else wordvectors_dir()
    initial = initial_of(run, out)
    lang = language_of(run, initial)
    target = vectors_folder(out, run.name or lang)
    if initial is not None and target.resolve() == initial.folder.resolve():
        raise FlairsuiteError(f"--name {run.name}: {target} holds the --init vectors; give the continued vectors a name of their own")
    training = continuation(initial, run) if initial else Training(config_from(run))
    with atomic_folder(target, run.force) as temp:
        corpus = prepare_language(lang, run.corpus, run.corpora_dir, None, run.heldout_fraction, seed=run.seed, exclude=run.exclude)
        yield from describe(corpus)
        summary = train_into(temp, corpus, training, corpora_dir(run.corpora_dir), label=target.name, keep_model=run.keep_model)
    yield from summary_lines(summary)
    yield f"vectors: {target / VECTORS_FILE} (loads with flair.embeddings.WordEmbeddings(path))"


@dataclass
class Training:
    """A new model trained from scratch with `config`."""

    config: FastTextConfig

    def model(self, text: TokenStream, label: str) -> tuple[FastText, FastTextConfig, dict[str, Any]]:
        """The trained model, its hyper-parameters and what the summary records besides."""
        return train_fasttext(text, self.config, desc=label), self.config, {}


@dataclass
class Continuation:
    """The `initial` vectors' full model, continued on the new text with `config` (module `initial`)."""

    initial: InitialVectors
    initial_model: FastText
    config: FastTextConfig
    texts: list[Path]

    def model(self, text: TokenStream, label: str) -> tuple[FastText, FastTextConfig, dict[str, Any]]:
        model, config = self.initial_model, self.config
        initial_vocabulary = len(model.wv)
        added = continue_fasttext(model, text, config.epochs, config.threads, config.min_count, label)
        record = {
            **self.initial.record(),
            "initial_vocabulary": initial_vocabulary,
            "words_added": added,
            "texts": {str(path): file_digest(path) for path in self.texts},
        }
        return model, config, {"init": record}


def continuation(initial: InitialVectors, run: FastTextRun) -> Continuation:
    """The run `--init` asks for: the full model loaded and its hyper-parameters checked against the options."""
    model = initial.load()
    texts = [source.path for source in corpus_sources("", run.corpus, Path("."))]  # --corpus is given: no raw set read
    return Continuation(initial, model, continued_config(run, model, initial), texts)


def train_into(
    folder: Path, corpus: PreparedCorpus, training: Union[Training, Continuation], root: Path, label: str = "", keep_model: bool = True
) -> dict[str, Any]:
    """Train (or continue) on `corpus`, add the uncovered tokens of the labeled corpora under `root`, save vectors,
    the full model (unless not `keep_model`) and summary.json.

    `label`: the progress bar's name (the vectors folder's, e.g. `de100-fasttext`; default `<language>-fasttext`)."""
    language = corpus.meta["config"]["language"]
    started = time.monotonic()
    characters = language_segmentation(language) == "characters"  # Chinese: one token per character, as in the NER sets
    model, config, record = training.model(TokenStream(corpus.text_path("train"), characters), label or f"{language}-fasttext")
    seconds = time.monotonic() - started
    splits = list(labeled_tokens(language, root))
    vectors, added = augmented(model.wv, splits)
    vectors.lifecycle_events = None  # no save time or temp path in the file: a retrain writes the same bytes
    vectors.save(str(folder / VECTORS_FILE))
    model_bytes = save_model(model, folder) if keep_model else 0
    summary = {
        "language": language,
        "config": asdict(config),
        **record,
        "tokens": "characters" if characters else "words",
        "vocabulary": len(model.wv),
        "added_tokens": len(added),
        "seconds": round(seconds, 1),
        "model_kept": keep_model,
        "model_bytes": model_bytes,
        "coverage": [coverage_row(s, model.wv.key_to_index, vectors.key_to_index) for s in splits],
        "neighbours": neighbours(model.wv, language),
        "unseen_probes": [word for word in PROBES.get(language, ()) if word not in model.wv.key_to_index],
        "gensim": gensim.__version__,
        "corpus": corpus.meta,
    }
    write_summary(folder, summary)
    return summary


def save_model(model: FastText, folder: Path) -> int:
    """Save the full model under `folder`/model (inside the vectors folder's temporary copy); its size in bytes."""
    path = model_file(folder)
    path.parent.mkdir()
    model.lifecycle_events = None
    model.wv.lifecycle_events = None
    model.save(str(path))
    return folder_bytes(path.parent)


def summary_lines(summary: dict[str, Any]) -> Iterator[str]:
    """The closing report: sizes, time, OOV table and nearest neighbours."""
    yield (
        f"vocabulary: {summary['vocabulary']:,} words (dim {summary['config']['dim']}), "
        f"{summary['added_tokens']:,} corpus tokens added from subwords, trained in {summary['seconds']:.1f} s"
    )
    if "init" in summary:
        init = summary["init"]
        yield f"continued {init['vectors']}: {init['words_added']:,} words of the new text added to its {init['initial_vocabulary']:,}"
    if summary.get("model_kept"):
        yield f"full model kept: {summary['model_bytes'] / 1e6:,.1f} MB in {MODEL_FOLDER}/ (what --init continues)"
    if summary["coverage"]:
        yield "OOV tokens of the labeled corpora (as Flair's WordEmbeddings looks them up):"
        yield from oov_table(summary["coverage"])
    else:
        yield "no labeled corpus of this language found locally: nothing added"
    if summary["neighbours"]:
        yield "nearest neighbours:"
        yield from neighbour_lines(summary["neighbours"], summary["unseen_probes"])
