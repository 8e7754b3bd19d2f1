"""Find and read labeled splits into validated, well-formed sentences (tags checked against the spec's types).

A spec with `dev_fraction` (own corpora without a dev file) gets its dev split as a fixed, seeded
share of train's sentences (`DEV_SEED`); train keeps the rest. An own corpus the suite split by sentence
(`document_splits.py`: one or two documents) gets each split as its recorded share of the documents' sentences; the
repairs made while reading them are counted under train, as with `dev_fraction`. An own corpus's split may be several files
(read in order, each sentence knowing its file), and its sentences longer than `max_tokens` are split
(`long_sentences.split_long`, after the sample is drawn and the tags are BIO).
"""

import logging
import os
import random
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional, Union

from flairsuite.corpora.document_splits import SplitCorpusSpec, sentence_indices
from flairsuite.corpora.formats import read_tagged
from flairsuite.corpora.long_sentences import split_long
from flairsuite.corpora.readers import TaggedSentence
from flairsuite.corpora.registry import SPLITS, DatasetSpec
from flairsuite.corpora.tags import PREFIXES, normalize_bio, split_tag
from flairsuite.errors import FlairsuiteError, InputError

log = logging.getLogger("flairsuite")

DEV_SEED = 1  # the dev share of train is fixed: the same sentences for every run and every command


@dataclass
class SplitData:
    """The sentences of one split with well-formed tags, and the repairs made while reading it."""

    path: Path
    sentences: list[TaggedSentence] = field(default_factory=list)
    repairs: Counter = field(default_factory=Counter)
    note: str = ""  # what part of the file the split is, when it is not all of it
    files: int = 1  # how many files the split is (`path`: the first)
    folder: Optional[Path] = None  # the folder holding all of them, where there are several
    label: str = ""  # what the split is, where the suite split the corpus (`SplitRecord.label`: `8 documents`)

    @property
    def source(self) -> str:
        """The file's name, with the note: `train.tsv`, `train.tsv (10% sample)`, `train/ (12 files)`; or the label."""
        if self.label:
            return self.label
        name = f"{self.folder.name if self.folder else self.path.parent.name}/ ({self.files} files)" if self.files > 1 else self.path.name
        return f"{name} ({self.note})" if self.note else name


Paths = Union[Path, Sequence[Path]]


def _listed(paths: Paths) -> list[Path]:
    return [paths] if isinstance(paths, Path) else list(paths)


def _folder(paths: list[Path]) -> Optional[Path]:
    """The folder holding all of several files."""
    return Path(os.path.commonpath(paths)) if len(paths) > 1 else None


def _validate(sentence: TaggedSentence, spec: DatasetSpec, path: Path) -> None:
    """Raise InputError at the first tag that is ill-formed or names a type the dataset lacks."""
    known = set(spec.types)
    for tag, line in zip(sentence.tags, sentence.lines):
        if spec.task == "pos":
            if tag not in known:
                raise InputError(path, line, f"unknown tag '{tag}' ({spec.name} tags: {' '.join(spec.types)})")
            continue
        try:
            _, entity_type = split_tag(tag, PREFIXES[spec.format.scheme])
        except ValueError as err:
            raise InputError(path, line, str(err)) from None
        if entity_type is not None and entity_type not in known:
            raise InputError(
                path, line, f"unknown entity type '{entity_type}' in tag '{tag}' ({spec.name} types: {' '.join(spec.types)})"
            )


def _validated(spec: DatasetSpec, paths: Paths, repairs: Counter) -> Iterator[TaggedSentence]:
    """The sentences of the file(s) `paths` with raw tags, each checked (and knowing its file, where there are several)."""
    listed = _listed(paths)
    for path in listed:
        for sentence in read_tagged(path, spec.format, spec.encoding, repairs):
            _validate(sentence, spec, path)
            if len(listed) > 1:
                sentence.path = path
            yield sentence


def _normalized(spec: DatasetSpec, data: SplitData, sentences: Iterable[TaggedSentence]) -> SplitData:
    """`data` with `sentences` added, their NER tags made well-formed BIO (repairs counted in `data`)."""
    for sentence in sentences:
        if spec.task == "ner":
            sentence.tags = normalize_bio(sentence.tags, spec.format.scheme, data.repairs, spec.tag_map)
        if spec.max_tokens is None:
            data.sentences.append(sentence)
        else:
            data.sentences.extend(split_long(sentence, spec.max_tokens, data.repairs))
    return data


def read_split(spec: DatasetSpec, path: Paths) -> SplitData:
    """All sentences of the labeled file `path` (or files, in order) of dataset `spec`, validated and normalised to BIO."""
    listed = _listed(path)
    data = SplitData(listed[0], files=len(listed), folder=_folder(listed))
    return _normalized(spec, data, _validated(spec, listed, data.repairs))


def dev_sample(count: int, fraction: float) -> set[int]:
    """The indices of the train sentences that form dev: round(count x fraction), at least 1, never all (seed `DEV_SEED`)."""
    size = min(count - 1, max(1, round(count * fraction)))
    return set(random.Random(DEV_SEED).sample(range(count), size))


def kept(sentences: Sequence[TaggedSentence], indices: Iterable[int]) -> list[TaggedSentence]:
    """The sentences at `indices` (ascending), each one whose predecessor in the file is not kept marked as starting a
    document: a sample's sentences are neighbours (document context, `flairsuite.embeddings.context`) only where they
    are in the file."""
    found, previous = [], None
    for index in indices:
        sentence = sentences[index]
        if previous != index - 1 and index > 0 and not sentence.starts_document:
            sentence = replace(sentence, starts_document=True)
        found.append(sentence)
        previous = index
    return found


def read_train_and_dev(spec: DatasetSpec, path: Paths) -> tuple[SplitData, SplitData]:
    """Train split in two by `spec.dev_fraction`: (train without the dev sample, the dev sample)."""
    reading: Counter = Counter()
    listed = _listed(path)
    sentences = list(_validated(spec, listed, reading))
    if len(sentences) < 2:
        raise InputError(listed[0], None, f"{len(sentences)} train sentences: too few to take dev_fraction {spec.dev_fraction:g} of them")
    chosen = dev_sample(len(sentences), spec.dev_fraction)
    share = f"{spec.dev_fraction * 100:g}%"
    train = SplitData(listed[0], repairs=reading, note=f"without the {share} dev sample", files=len(listed), folder=_folder(listed))
    dev = SplitData(listed[0], note=f"{share} sample, seed {DEV_SEED}", files=len(listed), folder=_folder(listed))
    _normalized(spec, train, kept(sentences, (i for i in range(len(sentences)) if i not in chosen)))
    _normalized(spec, dev, kept(sentences, sorted(chosen)))
    return train, dev


def read_sentence_split(spec: SplitCorpusSpec, paths: list[Path], wanted: Sequence[str]) -> dict[str, SplitData]:
    """The `wanted` splits of a corpus the suite split by sentence: each its recorded share of the sentences of `paths`."""
    reading: Counter = Counter()
    sentences = list(_validated(spec, paths, reading))
    if len(sentences) != sum(spec.split.sentences.values()):
        raise FlairsuiteError(f"{spec.name}: {paths[0]} holds {len(sentences)} sentences, not the {sum(spec.split.sentences.values())} it held "
                              "when the corpus was read: read it again")
    indices = sentence_indices(len(sentences), spec.split.seed)
    data = {}
    for split in wanted:
        part = SplitData(paths[0], repairs=reading if split == "train" else Counter(), files=len(paths), folder=_folder(paths),
                         label=spec.split.label(split))
        data[split] = _normalized(spec, part, kept(sentences, indices[split]))
    return data


def missing_split_error(spec: DatasetSpec, split: str, root: Path) -> FlairsuiteError:
    """The one-line error for a split that is not on disk, naming the command that gets it."""
    expected = spec.expected_path(spec.splits[split], root)
    if spec.fetch == "own":
        return FlairsuiteError(f"{spec.name}: {split} file {expected} is gone since the corpus folder was read: read it again")
    if spec.fetch == "user_supplied":
        fix = f"place the files from {spec.homepage} in {spec.directory(root)} (not redistributable)"
    else:
        fix = f"run `flairsuite corpora fetch {spec.name}`"
    present = [s for s in spec.splits if spec.locate(spec.splits[s], root)]
    alternative = f", or load only the splits present with --split {','.join(present)}" if present else ""
    return FlairsuiteError(f"{spec.name}: {split} split not found ({expected}); {fix}{alternative}")


def _labeled(spec: DatasetSpec) -> None:
    if spec.task == "raw":
        raise FlairsuiteError(f"{spec.name} is a raw-text set; it has no labeled splits")


def split_files(spec: DatasetSpec, root: Path, splits: Optional[Sequence[str]] = None) -> dict[str, list[Path]]:
    """The file(s) of each requested split (default: all registered), in reading order; an error for any that is missing."""
    _labeled(spec)
    wanted = list(splits) if splits else list(spec.splits)
    paths = {}
    for split in wanted:
        if split not in spec.splits:
            raise FlairsuiteError(f"{spec.name} has no {split} split (its splits: {', '.join(spec.splits)})")
        entry = spec.splits[split]
        if entry.parts:
            gone = [part for part in entry.parts if not Path(part).is_file()]
            if gone:
                raise FlairsuiteError(f"{spec.name}: {split} file {gone[0]} is gone since the corpus folder was read: read it again")
            paths[split] = [Path(part) for part in entry.parts]
            continue
        path = spec.locate(entry, root)
        if path is None:
            raise missing_split_error(spec, split, root)
        paths[split] = [path]
    return paths


def split_names(spec: DatasetSpec) -> list[str]:
    """The splits the spec has, in train, dev, test order: its files, and dev when it is sampled from train."""
    return [split for split in SPLITS if split in spec.splits or (split == "dev" and spec.dev_fraction is not None)]


def read_splits(spec: DatasetSpec, root: Path, splits: Optional[Sequence[str]] = None) -> dict[str, SplitData]:
    """Validated sentences of each requested split (default: all the spec has); dev sampled from train where the spec says so."""
    _labeled(spec)
    wanted = list(splits) if splits else split_names(spec)
    record = spec.split if isinstance(spec, SplitCorpusSpec) else None
    if record is not None and record.unit == "sentence":
        files = split_files(spec, root, wanted)  # every split names the same files (an unknown split: an error)
        return _non_empty(spec, read_sentence_split(spec, files[wanted[0]], wanted), wanted)
    sampled = spec.dev_fraction is not None and "dev" not in spec.splits and "dev" in wanted
    on_disk = [split for split in wanted if not (sampled and split in ("train", "dev"))]
    data = {split: read_split(spec, paths) for split, paths in split_files(spec, root, on_disk).items()} if on_disk else {}
    if sampled:
        data["train"], data["dev"] = read_train_and_dev(spec, split_files(spec, root, ["train"])["train"])
    for split, part in data.items():
        part.label = record.label(split) if record is not None else part.label
    return _non_empty(spec, data, wanted)


def unused_flag_note(name: str, line_break: Optional[str], flagged: int, splits: Sequence[str]) -> Optional[str]:
    """One line where `line_break` names a flag that no token of the `splits` read carries (`flagged`: how many do); None
    where the key is not set or some token carries the flag."""
    if not line_break or flagged:
        return None
    return (f"{name}: line_break {line_break}: no token of {', '.join(splits)} carries the flag, so no word is read joined "
            "(a corpus without line-end marks: `line_break: null`)")


def _non_empty(spec: DatasetSpec, data: dict[str, SplitData], wanted: Sequence[str]) -> dict[str, SplitData]:
    """The `wanted` splits of `data`, in that order; one without sentences is an error. Where the corpus names a
    `line_break` flag that no token of them carries, a warning says so (once)."""
    for split in wanted:
        if not data[split].sentences:  # a tagger can neither train nor be scored on it: an empty or all-comment file
            raise InputError(data[split].path, None, f"the {split} split of {spec.name} holds no sentences")
    flagged = sum(len(sentence.line_ends) for split in wanted for sentence in data[split].sentences)
    if note := unused_flag_note(spec.name, spec.format.line_break if spec.format else None, flagged, wanted):
        log.warning(note)
    return {split: data[split] for split in wanted}


def types_missing_from_train(data: dict[str, SplitData], spans: bool) -> list[tuple[str, str, Path, int]]:
    """(split, type, file, first line) for each entity type (`spans`: NER) or tag (PoS) of the other splits that train never
    holds: a tagger cannot learn it, so every occurrence is an error it cannot avoid (often a typo in the file)."""
    def types_of(tag: str) -> Optional[str]:
        return (tag.partition("-")[2] or None) if spans else tag

    if "train" not in data:
        return []
    trained = {types_of(tag) for sentence in data["train"].sentences for tag in sentence.tags}
    missing: dict[tuple[str, str], tuple[Path, int]] = {}
    for split, part in data.items():
        for sentence in part.sentences:
            for tag, line in zip(sentence.tags, sentence.lines):
                kind = types_of(tag)
                if kind is not None and kind not in trained:
                    missing.setdefault((split, kind), (sentence.path or part.path, line))
    return [(split, kind, path, line) for (split, kind), (path, line) in missing.items()]


def missing_type_warnings(data: dict[str, SplitData], spans: bool) -> list[str]:
    """One line per type (tag) of dev or test that train never holds, naming the file and the first line it is on."""
    what = "type" if spans else "tag"
    return [
        f"{path}:{line}: {what} '{kind}' of {split} never occurs in train: no tagger can learn it"
        for split, kind, path, line in types_missing_from_train(data, spans)
    ]
