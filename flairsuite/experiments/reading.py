"""Reading an experiment file, once: the file's text -> its raw mapping (`flairsuite.files.yaml_file`: duplicate keys
refused, YAML 1.2 numbers) -> an `ExperimentConfig` (experiments/validation.py), every problem one line naming the file.
`flairsuite tag` reads the file here and passes the `Experiment` on: the grid, Ray, the simulation and the `adapt:`
block take the object, never the path.

Paths in the file are relative to the file's folder, whatever the current folder: an own corpus's `path:` (and its
`train`/`dev`/`test` files, relative to that folder), `adapt: text:`, and `adapt: init:` / `adapt: fasttext:` where they
are a path prefix or folder (a name is looked up below the model folders: `flairsuite.experiments.adaptation`). Embedding
specs name models, not paths (`flairsuite.embeddings`); results go below the home folder (`flairsuite.files.paths`). A
run's fingerprint holds an own corpus's file checksums and the models' digests, never these paths, so where the file is
read from does not change it."""

from dataclasses import dataclass
from pathlib import Path
from typing import Union

from flairsuite.errors import FlairsuiteError, InputError, read_utf8
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.validation import validated_config
from flairsuite.files.yaml_file import parse_yaml


@dataclass(frozen=True)
class Experiment:
    """An experiment file read and validated: where it is, its text as read (recorded beside the runs) and its config."""

    path: Path
    text: str
    config: ExperimentConfig


def read_experiment(path: Union[str, Path]) -> Experiment:
    """Read and validate the experiment file `path`; a problem is a one-line error naming the file and key.

    Own corpora (`path:` entries) are read here, relative to the file's folder: a bad line in one
    of their files is an error naming that file and line.
    """
    path = Path(path)
    text = read_utf8(path, "experiment file")
    data = parse_yaml(text, path)
    try:
        return Experiment(path, text, validated_config(data, path.parent))
    except InputError:
        raise
    except FlairsuiteError as err:
        raise InputError(path, None, str(err)) from None


def load_experiment(path: Union[str, Path]) -> ExperimentConfig:
    """The validated config of the experiment file `path` (`read_experiment`, for callers that need the config alone)."""
    return read_experiment(path).config
