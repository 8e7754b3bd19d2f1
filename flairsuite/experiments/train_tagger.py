"""`flairsuite train-tagger`: from an annotation export to a tagger in one command, through the experiment file `tag` reads.

The rules, in the order the command applies them:

1. **Read.** The export's format is told by its contents (`corpora.format_detection`); the export is read as an own
   corpus (`corpora.own.own_corpus`): an INCEpTION project export as it comes (the curated versions, or `annotator`'s),
   a folder or file that names no split split by document with seed 1 (80/10/10, `corpora.document_splits`), one that
   names its splits as named. What was read is printed before anything is trained (`ExportRead.lines`): format,
   documents, sentences, tokens, entity types with counts, the split with the documents of dev and test.
2. **Recipe** (`choose_recipe`), the one the docs give for own texts (results/README.md, "Historical text"): the language's
   released character-LM pair continued on the export's own text (its train split's sentences, one a line, written to
   DIR/texts/) and on the `texts` given, the fastText vectors `fasttext:LANG` as they are where they exist (else left
   out, and said so; continuing them too gained nothing on dev on AjMC nor on Sturm), a BiLSTM-CRF, one seed.
   `max_epochs` caps the training; without it the tagger's defaults hold (up to 150 epochs, stopping once annealing
   takes the learning rate below 1e-4). The LM training holds out a share of the text's lines for validation and for
   test (train-charlm's 1 %); a train text of fewer than `HELDOUT_LINES` / 0.01 lines holds out `HELDOUT_LINES` lines'
   worth each instead (at most 10 %), so that a small export still leaves the LMs some validation text.
   With `texts` (and `self_training`, the default), one round of self-training on them follows (a `self_training:`
   block; flairsuite/experiments/self_training.py): the tagger tags at most `POOL_PER_TRAIN_SENTENCE` x the train split's
   sentences of the texts (drawn, `max_sentences`), the sentences tagged with a confidence of `THRESHOLD` or more join
   the export's train split under those tags, and the tagger is trained again from scratch; of the two, the one better on
   dev is kept (the first on a tie). Chosen on dev with this tagger (results/README.md, "Historical text").
3. **One system.** The recipe is written as DIR/experiment.yaml (paths relative to it), read back by
   `reading.read_experiment`, its `adapt:` block run by the caller's `adapt` (the `tag` command's) and its grid by
   `dispatch.run_tag`: `flairsuite tag DIR/experiment.yaml` run from the same folder repeats it and finds the run finished.
   The run goes where `tag` puts it: results/<name>/ below the home folder, <name> being DIR's name.
4. **Into DIR** (`finish`): model.pt (a copy of the run's Flair SequenceTagger; with self-training, of the round kept),
   card.json (`model_card`: source, format, the split with the documents of each split, settings, the round kept, dev and
   test scores) and report.html (`results.tagger_report`).
"""

import os
import re
import shlex
import shutil
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional

import yaml

from flairsuite.corpora.document_splits import SplitCorpusSpec, corpus_notes, split_record
from flairsuite.corpora.format_detection import Detected, detect_format
from flairsuite.corpora.labeled import SplitData, missing_type_warnings, read_splits
from flairsuite.corpora.own import own_corpus
from flairsuite.corpora.readers import document_starts
from flairsuite.corpora.registry import SPLITS, DatasetSpec, names
from flairsuite.corpora.tags import bio_spans
from flairsuite.corpora.tasks import TASKS
from flairsuite.embeddings import artifact_path
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.adaptation import initial_pair
from flairsuite.experiments.dispatch import TagRequest, run_tag
from flairsuite.experiments.grid import runs
from flairsuite.experiments.reading import Experiment, read_experiment
from flairsuite.experiments.runner import MODEL_FILE
from flairsuite.files.atomic import atomic_file, write_json, write_text
from flairsuite.rawtext.prepare import text_files
from flairsuite.results.metrics_file import METRICS_FILE, RunMetrics, read_run
from flairsuite.results.self_training_report import CHOSEN_FILE, rounds_frame
from flairsuite.results.tagger_report import write_tagger_report

EXPERIMENT_FILE, CARD_FILE, REPORT_FILE, TEXTS_FOLDER = "experiment.yaml", "card.json", "report.html", "texts"
TAGGER = "bilstm-crf"
HELDOUT_LINES, DEFAULT_HELDOUT, MOST_HELDOUT = 10, 0.01, 0.1
THRESHOLD, ROUNDS, POOL_PER_TRAIN_SENTENCE = 0.9, 1, 1
UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


@dataclass(frozen=True)
class TaggerRequest:
    """What `train-tagger` was asked: the export, where to write, the plain texts, the language, the training cap."""

    export: Path
    out: Optional[Path] = None  # default: <corpus name>-tagger in the current folder
    texts: tuple[Path, ...] = ()
    lang: str = "de"
    max_epochs: Optional[int] = None
    annotator: Optional[str] = None
    seed: int = 1
    self_training: bool = True  # on the `texts`, where there are any

    @property
    def self_trains(self) -> bool:
        return self.self_training and bool(self.texts)


@dataclass(frozen=True)
class SplitCounts:
    """One split as read: its documents (the files of a split the export names), sentences, tokens and entities per type,
    and how many documents the reader found in it (`marked`: files, and HIPE's document markers within them)."""

    documents: tuple[str, ...]
    sentences: int
    tokens: int
    types: dict[str, int]
    marked: int = 0

    def as_record(self) -> dict[str, Any]:
        return {"documents": list(self.documents), "sentences": self.sentences, "tokens": self.tokens, "entities": self.types}


def _plural(count: int, noun: str, nouns: str = "") -> str:
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


def _types_text(types: dict[str, int]) -> str:
    return ", ".join(f"{kind} {count:,}" for kind, count in sorted(types.items())) or "none"


@dataclass(frozen=True)
class ExportRead:
    """An export as read: how its format was told, the corpus entry that reads it (no `path`), the corpus, each split's counts."""

    location: Path
    detected: Detected
    entry: dict[str, Any]
    spec: DatasetSpec
    splits: dict[str, SplitCounts]
    warnings: tuple[str, ...]

    def split(self) -> dict[str, Any]:
        """Where each document went: the suite's split record, or the split files as the export names them."""
        made = split_record(self.spec)
        return made if made is not None else {"by": "files", **{split: list(counts.documents) for split, counts in self.splits.items()}}

    def totals(self) -> tuple[int, int, int, Counter]:
        """Documents, sentences, tokens and entities per type of the whole export."""
        types: Counter = Counter()
        for counts in self.splits.values():
            types.update(counts.types)
        documents = {name for counts in self.splits.values() for name in counts.documents}
        if self.by_files():  # a file of several documents (HIPE's markers) counts them
            documents = set(range(sum(max(counts.marked, len(counts.documents)) for counts in self.splits.values())))
        return len(documents), sum(c.sentences for c in self.splits.values()), sum(c.tokens for c in self.splits.values()), types

    def by_files(self) -> bool:
        """Whether the export names its splits by file (else the suite split it by document)."""
        return not isinstance(self.spec, SplitCorpusSpec) or self.spec.split is None

    def lines(self) -> list[str]:
        """What was read, for the user to check before training: format, documents, types, the split."""
        documents, sentences, tokens, types = self.totals()
        keys = ", ".join(f"{key}: {value}" for key, value in self.entry.items() if key != "name")
        lines = [f"read: {self.location}", f"format: {self.detected.what} (read as {keys})", *corpus_notes(self.spec)]
        if self.by_files():
            lines.append("split: as the export names it: " + ", ".join(f"{split} = {_plural(len(c.documents), 'file')}" for split, c in self.splits.items()))
        if self.spec.scheme_rule:
            lines.append(f"scheme: {self.spec.format.scheme} ({self.spec.scheme_rule}), read as BIO")
        lines.append(f"corpus: {_plural(documents, 'document')}, {_plural(sentences, 'sentence')}, {_plural(tokens, 'token')}, "
                     f"{_plural(sum(types.values()), 'entity', 'entities')}")
        lines.append(f"entity types: {_types_text(dict(types))}")
        for split, counts in self.splits.items():
            documents = max(counts.marked, len(counts.documents)) if self.by_files() else len(counts.documents)
            lines.append(f"  {split}: {_plural(documents, 'document')}, {_plural(counts.sentences, 'sentence')}, "
                         f"{_plural(counts.tokens, 'token')}; {_types_text(counts.types)}")
        return lines + [f"warning: {warning}" for warning in self.warnings]


def corpus_name(location: Path) -> str:
    """The corpus's name in run ids: the export's folder or file name (without suffix), made a safe name; a registered
    dataset's name gets `-export` added."""
    stem = location.resolve().stem if location.is_file() else location.resolve().name
    name = UNSAFE.sub("-", stem).strip("-._+") or "export"
    return f"{name}-export" if name in names() else name


def _documents(spec: DatasetSpec, split: str) -> tuple[str, ...]:
    """The documents of a split: as the suite split them, or the split's files (below the corpus folder)."""
    if isinstance(spec, SplitCorpusSpec) and spec.split is not None:
        return spec.split.documents[split]
    if split in spec.part_checksums:
        return tuple(name for name, _ in spec.part_checksums[split])
    return tuple(os.path.relpath(path, spec.folder) for path in spec.splits[split].files[:1])


def _counts(spec: DatasetSpec, split: str, data: SplitData) -> SplitCounts:
    types = Counter(kind for sentence in data.sentences for _, _, kind in bio_spans(sentence.tags))
    marked = 1 + len(document_starts(data.sentences)) if data.sentences else 0
    return SplitCounts(_documents(spec, split), len(data.sentences), sum(len(s.tokens) for s in data.sentences), dict(sorted(types.items())), marked)


def read_export_corpus(location: Path, annotator: Optional[str] = None) -> tuple[ExportRead, str]:
    """The export at `location` read as `tag` will read it (module docstring, 1), and its train split's text (one sentence a line)."""
    detected = detect_format(location)
    entry = {"name": corpus_name(location), **detected.entry, **({"annotator": annotator} if annotator else {})}
    spec = own_corpus({**entry, "path": str(location.resolve())}, Path.cwd())
    data = read_splits(spec, Path(spec.folder))
    splits = {split: _counts(spec, split, data[split]) for split in SPLITS}
    text = "".join(" ".join(sentence.tokens) + "\n" for sentence in data["train"].sentences)
    return ExportRead(location, detected, entry, spec, splits, tuple(missing_type_warnings(data, True))), text


@dataclass(frozen=True)
class Recipe:
    """The own-text recipe (module docstring, 2): the pair continued from `lang` as `adapted`, and `fasttext:LANG` where `vectors`."""

    lang: str
    adapted: str
    vectors: bool
    note: str = ""  # why the vectors are left out
    heldout_fraction: Optional[float] = None  # a small text's (module docstring, 2); None: train-charlm's
    pool: Optional[int] = None  # self-training: at most this many sentences of the texts given; None: no self-training
    text_files: int = 0  # the plain text files given (`--texts`: files, and the .txt files of folders)

    @property
    def stack(self) -> str:
        return "adapted+word" if self.vectors else "adapted"

    def specs(self) -> list[str]:
        return [f"charlm:{self.adapted}-forward", f"charlm:{self.adapted}-backward", *([f"fasttext:{self.lang}"] if self.vectors else [])]

    def adapt_block(self, texts: list[str]) -> dict[str, Any]:
        heldout = {"heldout_fraction": self.heldout_fraction} if self.heldout_fraction is not None else {}
        return {"init": self.lang, "text": texts, "name": self.adapted, **heldout}

    def self_training_block(self, texts: list[str]) -> dict[str, Any]:
        """The `self_training:` block on the texts given (module docstring, 2)."""
        return {"text": texts, "max_sentences": self.pool, "thresholds": [THRESHOLD], "rounds": ROUNDS}

    def line(self) -> str:
        vectors = f"fastText vectors fasttext:{self.lang} as they are" if self.vectors else self.note
        given = f" and {_plural(self.text_files, 'plain text file')} given" if self.text_files else ""
        line = (f"recipe: BiLSTM-CRF on the released {self.lang} character-LM pair continued on the export's train text{given} "
                f"(charlm:{self.adapted}-forward, -backward); {vectors}")
        if self.pool is not None:
            line += (f"; then one round of self-training on up to {_plural(self.pool, 'sentence')} of the plain texts (those tagged with "
                     f"confidence {THRESHOLD:g} or more join train), the round better on dev kept")
        return line


def heldout_fraction(lines: int) -> Optional[float]:
    """The share of a train text of `lines` lines held out for each of validation and test (module docstring, 2); None: the default."""
    if lines * DEFAULT_HELDOUT >= HELDOUT_LINES:
        return None
    return min(MOST_HELDOUT, round(HELDOUT_LINES / max(lines, 1), 3))


def choose_recipe(lang: str, adapted: str, home: Path, source: Path, text_lines: int = 0) -> Recipe:
    """The recipe for `lang` (module docstring, 2); a language without a pair is a one-line error. `source`: the experiment
    file; `text_lines`: the lines of the export's train text."""
    heldout = heldout_fraction(text_lines)
    try:
        initial_pair(lang, home, source)
    except FlairsuiteError as err:
        raise FlairsuiteError(f"--lang {lang}: no character-LM pair to continue ({err}); the clone ships de, en, da and zh, "
                              f"or train one: flairsuite train-charlm --lang {lang}") from None
    vectors = artifact_path(f"fasttext:{lang}", home)
    if vectors is None or not vectors.is_file():
        return Recipe(lang, adapted, False, f"fastText vectors left out (no fasttext:{lang}; `flairsuite train-fasttext --lang {lang}` makes them)", heldout)
    return Recipe(lang, adapted, True, heldout_fraction=heldout)


@dataclass(frozen=True)
class Prepared:
    """An export read, its recipe chosen and written as DIR/experiment.yaml: what `train_prepared` runs."""

    request: TaggerRequest
    out: Path
    name: str
    read: ExportRead
    recipe: Recipe
    experiment: Path
    texts: tuple[str, ...]  # the adapt: block's text, as the file names it

    def lines(self) -> list[str]:
        return [*self.read.lines(), self.recipe.line(),
                f"wrote {self.experiment} (again: flairsuite tag {shlex.quote(str(self.experiment))})"]


def _relative(path: Path, folder: Path) -> str:
    """`path` relative to `folder` (as an experiment file names it), with `/`."""
    return Path(os.path.relpath(path.resolve(), folder.resolve())).as_posix()


def experiment_text(prepared_name: str, read: ExportRead, recipe: Recipe, location: str, texts: list[str], request: TaggerRequest) -> str:
    """The experiment file of the recipe: the schema `flairsuite tag` reads (docs/experiments.md), paths relative to it."""
    data: dict[str, Any] = {
        "name": prepared_name,
        "corpora": [{"name": read.entry["name"], "path": location, **{k: v for k, v in read.entry.items() if k != "name"}}],
        "adapt": recipe.adapt_block(texts),
        "embeddings": {recipe.stack: recipe.specs()},
        "taggers": [TAGGER],
        "seeds": [request.seed],
    }
    if request.max_epochs is not None:
        data["train"] = {"max_epochs": request.max_epochs}
    if recipe.pool is not None:
        data["self_training"] = recipe.self_training_block(texts[1:])  # the texts given: the adapt block's after the export's own
    header = ("# Written by `flairsuite train-tagger` (docs/own-data.md): the export, the own-text recipe, one seed.\n"
              "# Run it again, or after editing it, with `flairsuite tag <this file>` from the folder train-tagger ran in.\n")
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=None, width=160)


def prepare(request: TaggerRequest, home: Path) -> Prepared:
    """Read the export, choose the recipe, write its texts and DIR/experiment.yaml (module docstring, 1-3); nothing trained yet."""
    for text in request.texts:
        if not text.exists():
            raise FlairsuiteError(f"--texts {text}: no such file or folder")
    files = text_files([str(text) for text in request.texts], Path.cwd(), "--texts") if request.texts else ()
    read, train_text = read_export_corpus(request.export, request.annotator)
    out = request.out or Path(f"{read.entry['name']}-tagger")
    if out.exists() and not out.is_dir():
        raise FlairsuiteError(f"--out {out}: a file, not a folder")
    name = UNSAFE.sub("-", out.resolve().name).strip("-._+") or "tagger"
    experiment = out / EXPERIMENT_FILE
    recipe = choose_recipe(request.lang, f"{request.lang}-{name}", home, experiment, train_text.count("\n"))
    recipe = replace(recipe, text_files=len(files), pool=POOL_PER_TRAIN_SENTENCE * read.splits["train"].sentences if request.self_trains else None)
    own_text = out / TEXTS_FOLDER / f"{read.entry['name']}-train.txt"
    write_text(own_text, train_text)
    texts = [_relative(own_text, out), *(_relative(text, out) for text in request.texts)]
    write_text(experiment, experiment_text(name, read, recipe, _relative(request.export, out), texts, request))
    return Prepared(request, out, name, read, recipe, experiment, tuple(texts))


@dataclass(frozen=True)
class Trained:
    """The run trained (or found finished) and the files written into DIR."""

    run: RunMetrics
    model: Path
    card: Path
    report: Path

    def lines(self) -> list[str]:
        metrics = self.run.metrics
        test, dev = metrics["test"], metrics["dev"]
        per_type = ", ".join(f"{kind} {scores['f1'] * 100:.2f} ({scores['support']})" for kind, scores in sorted(test["per_type"].items()))
        return [f"run: {self.run.path.parent} ({_plural(metrics['epochs'], 'epoch')}, {metrics['seconds']:.0f} s)",
                *([self_training_line(metrics, self.run.path.parent)] if "self_training" in metrics else []),
                f"test: precision {test['precision'] * 100:.2f}, recall {test['recall'] * 100:.2f}, F1 {test['f1'] * 100:.2f} "
                f"(dev F1 {dev['f1'] * 100:.2f})",
                f"test F1 by type (gold entities): {per_type}",
                f"wrote {self.model} (a Flair SequenceTagger), {self.card}, {self.report}"]


def self_training_line(metrics: dict[str, Any], folder: Path) -> str:
    """What self-training kept: round 0 (the tagger of the export alone) or round 1, with each round's dev score (`folder`:
    the study's), the plain sentences round 1 trained on and the seconds of all rounds (the `run:` line's are the kept one's)."""
    chosen, task = metrics["self_training"], metrics.get("task", "ner")
    rounds = rounds_frame(folder).set_index("round")
    devs = ", ".join(f"round {index} {dev * 100:.2f}" for index, dev in rounds["dev"].sort_index().items())
    kept = int(rounds["kept"].max())
    found = f"{kept:,} of {_plural(chosen['pool'], 'plain sentence')} tagged with confidence {THRESHOLD:g} or more"
    seconds = rounds["seconds"].fillna(0).sum()
    return f"self-training: kept round {chosen['round']} ({found}; dev {TASKS[task].metric_title}: {devs}; {seconds:.0f} s for all rounds)"


def train_prepared(prepared: Prepared, request: TagRequest, adapt: Callable[[Experiment], None], echo: Callable[[str], None] = print) -> Trained:
    """Run DIR/experiment.yaml as `flairsuite tag` runs it (module docstring, 3), then write DIR's files (4)."""
    experiment = read_experiment(prepared.experiment)
    (corpus,) = experiment.config.corpora
    if split_record(corpus.own) != split_record(prepared.read.spec):  # the file reads what was printed, or nothing trains
        raise FlairsuiteError(f"{prepared.experiment}: reads {corpus.name} split otherwise than printed: a bug, please report it")
    adapt(experiment)
    out = run_tag(experiment, request, echo)
    (run,) = runs(experiment.config)
    record = CHOSEN_FILE if experiment.config.self_training is not None else METRICS_FILE  # the study's kept round, or the run
    return finish(prepared, read_run(out / run.run_id / record))


def finish(prepared: Prepared, run: RunMetrics) -> Trained:
    """DIR's model.pt, card.json and report.html of the finished run `run`."""
    model, card, report = (prepared.out / name for name in (MODEL_FILE, CARD_FILE, REPORT_FILE))
    with atomic_file(model) as temp:
        shutil.copyfile(run.path.parent / MODEL_FILE, temp)
    record = model_card(prepared, run)
    write_json(card, record)
    facts = [("data", f"{prepared.read.location} ({record['data']['format']})"), *((f"split {key}", value) for key, value in _split_facts(record)),
             ("recipe", prepared.recipe.line().removeprefix("recipe: ")),
             ("training", f"{_plural(run.metrics['epochs'], 'epoch')} (best dev epoch {run.metrics.get('best_epoch', '?')}), seed {run.metrics['seed']}"),
             *([("self-training", self_training_line(run.metrics, run.path.parent).removeprefix("self-training: "))]
               if "self_training" in run.metrics else []),
             ("model", f"{model} (Flair SequenceTagger); run folder {run.path.parent}")]
    write_tagger_report(report, run, facts, f"Tagger for {prepared.read.entry['name']}")
    return Trained(run, model, card, report)


def _split_facts(record: dict[str, Any]) -> list[tuple[str, str]]:
    """One line per split for the report: its documents and counts."""
    return [(split, f"{_plural(len(c['documents']), 'document')}, {_plural(c['sentences'], 'sentence')}, {_plural(c['tokens'], 'token')}: "
             f"{', '.join(c['documents'])}") for split, c in ((split, record["split"][split]) for split in SPLITS)]


def model_card(prepared: Prepared, run: RunMetrics) -> dict[str, Any]:
    """card.json: where the data came from and how it was read and split, the settings, the dev and test scores."""
    read, metrics = prepared.read, run.metrics
    documents, sentences, tokens, types = read.totals()
    return {
        "model": MODEL_FILE,
        "kind": f"Flair SequenceTagger ({TAGGER}), label type {read.spec.label_type}; loads with SequenceTagger.load",
        "data": {"source": str(read.location.resolve()), "format": read.detected.what, "reading": read.entry, "title": read.spec.title,
                 "documents": documents, "sentences": sentences, "tokens": tokens, "entity_types": dict(sorted(types.items()))},
        "split": {**{key: value for key, value in read.split().items() if key not in SPLITS},
                  **{split: counts.as_record() for split, counts in read.splits.items()}},
        "settings": {"language": prepared.recipe.lang, "tagger": metrics["tagger"], "embeddings": metrics["embedding_specs"],
                     "adapt": prepared.recipe.adapt_block(list(prepared.texts)),
                     **({"self_training": {**prepared.recipe.self_training_block(list(prepared.texts[1:])), "kept": metrics["self_training"]}}
                        if "self_training" in metrics else {}),
                     "seed": metrics["seed"], "train": metrics["train"], "epochs": metrics["epochs"], "best_epoch": metrics.get("best_epoch")},
        "scores": {"dev": metrics["dev"], "test": metrics["test"], "flair_f1": metrics.get("flair_f1"),
                   "convention": "seqeval strict IOB2 on the raw predicted tags (docs/experiments.md)"},
        "experiment": str(prepared.experiment),
        "again": f"flairsuite tag {shlex.quote(str(prepared.experiment))}",
        "run": str(run.path.parent),
        "versions": metrics.get("versions", {}),
    }
