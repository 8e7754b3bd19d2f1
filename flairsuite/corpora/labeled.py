"""Find and read labeled splits into validated, well-formed sentences (tags checked against the registry)."""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from flairsuite.corpora.readers import TaggedSentence, read_column, read_conllu, read_spans_json
from flairsuite.corpora.registry import DatasetSpec
from flairsuite.corpora.tags import normalize_bio, split_tag
from flairsuite.errors import FlairsuiteError, InputError


@dataclass
class SplitData:
    """The sentences of one split with well-formed tags, and the repairs made while reading it."""

    path: Path
    sentences: list[TaggedSentence] = field(default_factory=list)
    repairs: Counter = field(default_factory=Counter)


def _validate(sentence: TaggedSentence, spec: DatasetSpec, path: Path) -> None:
    """Raise InputError at the first tag that is ill-formed or names a type the dataset lacks."""
    known = set(spec.types)
    for tag, line in zip(sentence.tags, sentence.lines):
        if spec.task == "pos":
            if tag not in known:
                raise InputError(path, line, f"unknown tag '{tag}' ({spec.name} tags: {' '.join(spec.types)})")
            continue
        try:
            _, entity_type = split_tag(tag)
        except ValueError as err:
            raise InputError(path, line, str(err)) from None
        if entity_type is not None and entity_type not in known:
            raise InputError(
                path, line, f"unknown entity type '{entity_type}' in tag '{tag}' ({spec.name} types: {' '.join(spec.types)})"
            )


def read_split(spec: DatasetSpec, path: Path) -> SplitData:
    """All sentences of the labeled file `path` of dataset `spec`, validated and normalised to BIO."""
    fmt = spec.format
    data = SplitData(path)
    if fmt.kind == "column":
        sentences = read_column(path, fmt, spec.encoding)
    elif fmt.kind == "conllu":
        sentences = read_conllu(path, fmt, spec.encoding)
    elif fmt.kind == "spans_json":
        sentences = read_spans_json(path, fmt, spec.encoding, data.repairs)
    else:
        raise InputError(path, None, f"format '{fmt.kind}' is not a labeled format")
    for sentence in sentences:
        _validate(sentence, spec, path)
        if spec.task == "ner":
            sentence.tags = normalize_bio(sentence.tags, fmt.scheme, data.repairs, spec.tag_map)
        data.sentences.append(sentence)
    return data


def missing_split_error(spec: DatasetSpec, split: str, root: Path) -> FlairsuiteError:
    """The one-line error for a split that is not on disk, naming the command that gets it."""
    expected = spec.expected_path(spec.splits[split], root)
    if spec.fetch == "user_supplied":
        fix = f"place the files from {spec.homepage} in {spec.directory(root)} (not redistributable)"
    else:
        fix = f"run `flairsuite corpora fetch {spec.name}`"
    present = [s for s in spec.splits if spec.locate(spec.splits[s], root)]
    alternative = f", or load only the splits present with --splits {','.join(present)}" if present else ""
    return FlairsuiteError(f"{spec.name}: {split} split not found ({expected}); {fix}{alternative}")


def resolve_splits(spec: DatasetSpec, root: Path, splits: Optional[Sequence[str]] = None) -> dict[str, Path]:
    """Paths of the requested splits (default: all registered); an error for any that is missing."""
    if spec.task == "raw":
        raise FlairsuiteError(f"{spec.name} is a raw-text set; it has no labeled splits")
    wanted = list(splits) if splits else list(spec.splits)
    paths = {}
    for split in wanted:
        if split not in spec.splits:
            raise FlairsuiteError(f"{spec.name} has no {split} split (its splits: {', '.join(spec.splits)})")
        path = spec.locate(spec.splits[split], root)
        if path is None:
            raise missing_split_error(spec, split, root)
        paths[split] = path
    return paths


def read_splits(spec: DatasetSpec, root: Path, splits: Optional[Sequence[str]] = None) -> dict[str, SplitData]:
    """Validated sentences of each requested split."""
    return {split: read_split(spec, path) for split, path in resolve_splits(spec, root, splits).items()}
