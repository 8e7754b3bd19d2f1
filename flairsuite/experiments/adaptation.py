"""Before an experiment's runs: its `adapt:` pair and vectors (flairsuite/experiments/adaptation_settings.py) trained, or reused when current.

The pair is current when both model folders hold `best-lm.pt` and a finished `adaptation.json` with the block's
fingerprint: the initial pair's model digests, the text files' SHA-256 and the block's other settings. Otherwise
`train-charlm --init` trains it: `--force` (a changed fingerprint: started over), or `--resume` where `adaptation.json`
says this fingerprint's training began (a killed `tag` continues it). The runs then fingerprint the adapted LMs as any
charlm artifact (their digest), so runs on an earlier adaptation are trained again.

The vectors (`fasttext:` in the block) likewise: current when their folder holds vectors.kv and a finished `adaptation.json`
with their own fingerprint (the initial vectors' digest, the texts' SHA-256, the block's settings for them), else
`train-fasttext --init ... --force` trains them again (a short run: a killed one starts over; the folder is replaced whole).
A pair and vectors of one block keep separate fingerprints, so adding `fasttext:` to a block never retrains its pair.

Where the initial pair and vectors are (`initial_pair`, `initial_vectors_of`): `init: de` names `de-forward` and
`de-backward` as a path prefix relative to the experiment file's folder, else below `charlm/` of each model folder in
turn (`flairsuite.files.paths.model_roots`: the home folder, $FLAIRSUITE_MODELS, the installed clone's released
models); `fasttext: de` names a vectors folder relative to the file, else `wordvectors/de-fasttext` below them. The
first that holds the models wins; none: a one-line error naming every place. The fingerprint holds `init` as written
and the models' digests, never the folder they were found in. The adapted pair and vectors go below the home folder.

The fingerprint names the text files and an excluded own corpus's folder by their path relative to the experiment
file's folder (`portable_record`), so a clone moved or checked out elsewhere finds its adaptation current. A marker
written before that (absolute paths) still counts where its paths are this clone's: it is rewritten, not retrained.
"""

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Callable, Optional

from flairsuite.charlm.initial import MODEL_FILE
from flairsuite.charlm.settings import CharlmRun
from flairsuite.errors import FlairsuiteError, InputError
from flairsuite.experiments.adaptation_settings import Adaptation
from flairsuite.experiments.identity import digest
from flairsuite.files.atomic import write_json
from flairsuite.files.paths import charlm_dir, model_roots, wordvectors_dir
from flairsuite.files.yaml_file import read_yaml  # the marker is JSON, which YAML reads
from flairsuite.rawtext.prepare import file_digest
from flairsuite.wordvectors.initial import InitialVectors, initial_vectors
from flairsuite.wordvectors.settings import FastTextRun
from flairsuite.wordvectors.store import VECTORS_FILE, vectors_folder

MARKER = "adaptation.json"
DIRECTIONS = ("forward", "backward")


def initial_pair(init: str, home: Path, source: Path) -> Path:
    """The path prefix of the pair `init` names (module docstring): relative to the folder of the experiment file
    `source`, else below each model folder's `charlm/`; the first whose two model folders hold their model wins."""
    prefixes = list(dict.fromkeys([source.parent / init, *(charlm_dir(root) / init for root in model_roots(home))]))
    for prefix in prefixes:
        if all((Path(f"{prefix}-{direction}") / MODEL_FILE).is_file() for direction in DIRECTIONS):
            return prefix
    looked = " nor ".join(f"{prefix}-{{{','.join(DIRECTIONS)}}}" for prefix in prefixes)
    raise FlairsuiteError(f"--init {init}: no model folder {looked} holds {MODEL_FILE}")


def init_argument(adaptation: Adaptation, home: Path, prefix: Path) -> str:
    """The `--init` that makes train-charlm read the pair at `prefix`: `init` as written where train-charlm finds that
    pair by it itself (below the home's charlm/), else the prefix."""
    init = str(adaptation.init)
    cwd_folder = Path(f"{init}-{DIRECTIONS[0]}")  # train-charlm --init tries INIT-forward as a path first
    return init if prefix == charlm_dir(home) / init and not cwd_folder.is_dir() else str(prefix)


def adaptation_record(adaptation: Adaptation, home: Path, source: Path) -> dict[str, Any]:
    """What the adapted pair is made from: the initial models' and texts' digests and the settings; a missing initial
    pair is a one-line error naming the experiment file `source` and the `adapt:` block."""
    try:
        prefix = initial_pair(str(adaptation.init), home, source)
    except FlairsuiteError as err:
        raise InputError(source, None, f"adapt: init: {err}") from None
    folders = {direction: Path(f"{prefix}-{direction}") for direction in DIRECTIONS}
    initial = {direction: file_digest(folder / MODEL_FILE) for direction, folder in folders.items()}
    for direction, folder in folders.items():
        if folder.resolve() == (charlm_dir(home) / f"{adaptation.name}-{direction}").resolve():
            raise InputError(source, None, f"adapt: name: {adaptation.name} would overwrite the initial model {folder}: choose another name")
    return {"init": adaptation.init, "initial_sha256": initial, "texts": {str(path): file_digest(path) for path in adaptation.texts},
            **adaptation.settings()}


def _relative(path: str, base: Path) -> str:
    return Path(os.path.relpath(path, base)).as_posix()


def _portable_exclude(argument: str, base: Path) -> str:
    """An --exclude argument with an own corpus's folder relative to `base` (a registered name stays as it is)."""
    if argument.startswith("{"):  # an own corpus's entry as JSON (adaptation_settings._exclude_argument)
        entry = json.loads(argument)
        return json.dumps({**entry, "path": _relative(entry["path"], base)}, sort_keys=True, ensure_ascii=False)
    return _relative(argument, base) if os.path.isabs(argument) else argument


def portable_record(record: dict[str, Any], source: Path) -> dict[str, Any]:
    """`record` (`adaptation_record`, `vectors_record`) with its paths relative to the experiment file's folder."""
    base = source.resolve().parent
    return {**record, "texts": {_relative(path, base): sha for path, sha in record["texts"].items()},
            "exclude": [_portable_exclude(argument, base) for argument in record["exclude"]]}


def current_states(folders: list[Path], record: dict[str, Any], source: Path, artifact: str = MODEL_FILE) -> list[str]:
    """`marker_state` of each folder under the fingerprint of `portable_record(record)`; a folder finished under the
    absolute-path fingerprint of `record` (a marker from before) gets its marker rewritten and counts as done."""
    portable = portable_record(record, source)
    fingerprint, legacy = digest(portable), digest(record)
    states = [marker_state(folder, fingerprint, artifact) for folder in folders]
    for index, folder in enumerate(folders):
        if states[index] != "done" and marker_state(folder, legacy, artifact) == "done":
            write_json(folder / MARKER, {"fingerprint": fingerprint, "finished": True, **portable})
            states[index] = "done"
    return states


def marker_state(folder: Path, fingerprint: str, artifact: str = MODEL_FILE) -> str:
    """`done` (this fingerprint, trained), `begun` (this fingerprint, training began) or `other` for one model folder
    (`artifact`: the file a trained one holds)."""
    try:
        marker = read_yaml(folder / MARKER, "adaptation record") if (folder / MARKER).is_file() else {}
    except FlairsuiteError:
        return "other"
    if not isinstance(marker, dict) or marker.get("fingerprint") != fingerprint:
        return "other"
    return "done" if marker.get("finished") and (folder / artifact).is_file() else "begun"


def charlm_run(adaptation: Adaptation, home: Path, resume: bool, threads: Optional[int], corpora_dir: Optional[str],
               init: Optional[str] = None) -> CharlmRun:
    """The train-charlm run that adapts the pair into `home`'s charlm folder (`init`: its `--init`, default the block's):
    `--resume` or else `--force`, the block's budget and noise where it sets them."""
    return CharlmRun(
        init=init or str(adaptation.init), name=adaptation.name, out_dir=str(charlm_dir(home)), resume=resume, force=not resume,
        max_chars=adaptation.max_chars, hyper={"noise": adaptation.noise} if adaptation.noise is not None else {},
        threads=threads or None, corpora_dir=corpora_dir or None, **text_settings(adaptation),
    )


def text_settings(adaptation: Adaptation) -> dict[str, Any]:
    """The settings both trainers share: the texts, the excluded corpora and the held-out share (where the block sets it)."""
    shared: dict[str, Any] = {"corpus": tuple(str(path) for path in adaptation.texts), "exclude": tuple(adaptation.exclude)}
    return {**shared, "heldout_fraction": adaptation.heldout_fraction} if adaptation.heldout_fraction is not None else shared


Train = Callable[[CharlmRun], Iterable[str]]  # runs train-charlm's library code, yields its report lines
TrainVectors = Callable[[FastTextRun], Iterable[str]]  # ... train-fasttext's


def ensure_adapted(
    adaptation: Adaptation, source: Path, home: Path, train: Train, echo: Callable[[str], None], threads: Optional[int] = None,
    train_vectors: Optional[TrainVectors] = None, corpora_dir: Optional[str] = None,
) -> bool:
    """Train the `adapt:` pair and vectors of the experiment file `source` unless they are current; whether any was
    trained. `train` runs train-charlm on a `CharlmRun`, `train_vectors` train-fasttext on a `FastTextRun`; `threads`
    and `corpora_dir` as their --threads and --corpora-dir (None: their defaults)."""
    trained = ensure_pair(adaptation, source, home, train, echo, threads, corpora_dir) if adaptation.init else False
    if adaptation.fasttext:
        if train_vectors is None:
            raise ValueError("an adapt: block with fasttext needs train_vectors")
        trained = ensure_vectors(adaptation, source, home, train_vectors, echo, threads, corpora_dir) or trained
    return trained


def ensure_pair(
    adaptation: Adaptation, source: Path, home: Path, train: Train, echo: Callable[[str], None], threads: Optional[int],
    corpora_dir: Optional[str],
) -> bool:
    """Train the `adapt:` pair unless it is current; whether it was trained."""
    folders = [charlm_dir(home) / f"{adaptation.name}-{direction}" for direction in DIRECTIONS]
    absolute = adaptation_record(adaptation, home, source)
    states = current_states(folders, absolute, source)
    record = portable_record(absolute, source)
    fingerprint = digest(record)
    if all(state == "done" for state in states):
        echo(f"adapt: charlm/{adaptation.name}-forward and -backward are current (fingerprint {fingerprint[:12]})")
        return False
    resume = all(state in ("done", "begun") for state in states)
    echo(f"adapt: {'continuing' if resume else 'training'} charlm/{adaptation.name}-forward and -backward from {adaptation.init} "
         f"on {len(adaptation.texts)} text file(s)")
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        write_json(folder / MARKER, {"fingerprint": fingerprint, "finished": False, **record})
    init = init_argument(adaptation, home, initial_pair(str(adaptation.init), home, source))
    for line in train(charlm_run(adaptation, home, resume, threads, corpora_dir, init)):
        echo(line)
    for folder in folders:
        write_json(folder / MARKER, {"fingerprint": fingerprint, "finished": True, **record})
    return True


def initial_vectors_of(init: str, home: Path, source: Path) -> InitialVectors:
    """The vectors `fasttext: init` names (module docstring): a folder relative to the experiment file `source`, else
    `INIT-fasttext` below each model folder's `wordvectors/`; the first holding vectors.kv wins."""
    dirs = [wordvectors_dir(root) for root in model_roots(home)]
    candidates = list(dict.fromkeys([source.parent / init, *(vectors_folder(folder, init) for folder in dirs)]))
    found = next((folder for folder in candidates if (folder / VECTORS_FILE).is_file()), None)
    if found is None:
        raise FlairsuiteError(f"--init {init}: no vectors folder {' nor '.join(map(str, candidates))} holds {VECTORS_FILE}")
    below = [folder for folder in dirs if vectors_folder(folder, init) == found]
    vectors = initial_vectors(init, (below[0],)) if below else None  # as train-fasttext --init reads it: errors in its words
    return vectors if vectors is not None and vectors.folder.resolve() == found.resolve() else initial_vectors(str(found), ())


def vectors_init_argument(adaptation: Adaptation, home: Path, initial: InitialVectors) -> str:
    """The `--init` that makes train-fasttext read the `initial` vectors: `fasttext` as written where they are the home's
    (train-fasttext finds them by it), else their folder."""
    init = str(adaptation.fasttext)
    same = initial.folder == vectors_folder(wordvectors_dir(home), init) and not (Path(init) / VECTORS_FILE).is_file()
    return init if same else str(initial.folder)


def vectors_record(adaptation: Adaptation, home: Path, source: Path) -> dict[str, Any]:
    """What the adapted vectors are made from: the initial vectors' digest, the texts' and the settings; initial vectors
    missing or without their full model, or the adapted ones in their place: a one-line error naming `source`."""
    try:
        initial = initial_vectors_of(str(adaptation.fasttext), home, source)
    except FlairsuiteError as err:
        raise InputError(source, None, f"adapt: fasttext: {err}") from None
    if initial.folder.resolve() == vectors_folder(wordvectors_dir(home), adaptation.name).resolve():
        raise InputError(source, None, f"adapt: name: {adaptation.name} would overwrite the initial vectors {initial.folder}: choose another name")
    return {"fasttext": adaptation.fasttext, "initial_sha256": initial.digest, "texts": {str(path): file_digest(path) for path in adaptation.texts},
            **adaptation.vectors_settings()}


def fasttext_run(adaptation: Adaptation, home: Path, threads: Optional[int], corpora_dir: Optional[str], init: Optional[str] = None) -> FastTextRun:
    """The train-fasttext run that adapts the vectors into `home`'s wordvectors folder (`init`: its `--init`, default the
    block's `fasttext`): `--force`, the block's passes where it sets them."""
    return FastTextRun(
        init=init or str(adaptation.fasttext), name=adaptation.name, out_dir=str(wordvectors_dir(home)), force=True,
        config={"epochs": adaptation.epochs} if adaptation.epochs is not None else {}, threads=threads or None,
        corpora_dir=corpora_dir or None, **text_settings(adaptation),
    )


def ensure_vectors(
    adaptation: Adaptation, source: Path, home: Path, train: TrainVectors, echo: Callable[[str], None], threads: Optional[int],
    corpora_dir: Optional[str],
) -> bool:
    """Train the `adapt:` vectors unless they are current; whether they were trained."""
    folder = vectors_folder(wordvectors_dir(home), adaptation.name)
    absolute = vectors_record(adaptation, home, source)
    record = portable_record(absolute, source)
    fingerprint = digest(record)
    if current_states([folder], absolute, source, VECTORS_FILE) == ["done"]:
        echo(f"adapt: wordvectors/{folder.name} is current (fingerprint {fingerprint[:12]})")
        return False
    echo(f"adapt: training wordvectors/{folder.name} from {adaptation.fasttext} on {len(adaptation.texts)} text file(s)")
    init = vectors_init_argument(adaptation, home, initial_vectors_of(str(adaptation.fasttext), home, source))
    for line in train(fasttext_run(adaptation, home, threads, corpora_dir, init)):
        echo(line)
    write_json(folder / MARKER, {"fingerprint": fingerprint, "finished": True, **record})
    return True
