"""Reading an experiment file: the file -> its raw mapping (`flairsuite.files.yaml_file`: duplicate keys refused, YAML 1.2
numbers), validated into an `ExperimentConfig` (experiments/validation.py), every problem one line naming the file."""

from pathlib import Path
from typing import Any, Union

from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.experiments.config import ExperimentConfig
from flairsuite.experiments.validation import validated_config
from flairsuite.files.yaml_file import read_yaml


def read_experiment_file(path: Path) -> Any:
    """The raw data of the experiment file `path`; a missing file or bad YAML is a one-line error with its line."""
    return read_yaml(path, "experiment file")


def load_experiment(path: Union[str, Path]) -> ExperimentConfig:
    """Read and validate the experiment file `path`; a problem is a one-line error naming the file and key.

    Own corpora (`path:` entries) are read here, relative to the file's folder: a bad line in one
    of their files is an error naming that file and line.
    """
    path = Path(path)
    data = read_experiment_file(path)
    try:
        return validated_config(data, path.parent)
    except InputError:
        raise
    except FlairsuiteError as err:
        raise InputError(path, None, str(err)) from None
