"""Experiment files: validation errors (one line, file and key named), grid expansion, settings precedence, fingerprint."""

import copy
import re
import subprocess
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import provide_derived_corpora

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments import CorpusChoice, fingerprint, load_experiment, runs
from flairsuite.experiments.identity import run_record
from flairsuite.models.registry import LINEAR_TRAIN, PAPER_TRAIN, TAGGERS, default_train, tagger_spec
from flairsuite.models.settings import LATER_SETTINGS, TrainSettings

EXAMPLES = Path(__file__).resolve().parent.parent / "experiments"
NER = "sturm, arendt, germeval14, ler, hipe-ajmc-de, conll03-de, conll03-en, wnut17, danish-ner, dane, cluener"
LABELED = f"{NER}, ud-en-ewt, ud-de-gsd, ud-da-ddt, ud-zh-gsdsimp"
BASE: dict[str, Any] = {
    "name": "t3",
    "corpora": ["sturm", {"name": "ler", "granularity": "coarse"}],
    "embeddings": {
        "proposed": ["charlm:de-forward", "charlm:de-backward"],
        "proposed+word": ["charlm:de-forward", "charlm:de-backward", "fasttext:de"],
    },
    "taggers": ["bilstm-crf", "map-crf", "map"],
    "seeds": [1, 2, 3],
    "train": {"max_epochs": 20},
    "tagger_train": {"map": {"learning_rate": 0.05}},
}


def write(tmp_path: Path, data: Any, name: str = "t3.yaml") -> Path:
    """`data` as a YAML file below tmp_path (key order kept)."""
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def variant(**changes: Any) -> dict[str, Any]:
    """BASE with keys replaced; a value of None removes the key."""
    data = copy.deepcopy(BASE)
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


def error(path: Path) -> str:
    with pytest.raises(FlairsuiteError) as info:
        load_experiment(path)
    message = str(info.value)
    assert "\n" not in message
    return message


ERRORS = [
    ({"seeds": None}, "missing key 'seeds': add e.g. `seeds: [1, 2, 3]`"),
    ({"name": None}, "missing key 'name': add e.g. `name: sturm-table3`"),
    ({"tagger": ["map"]}, "unknown key 'tagger'. Did you mean taggers, tagger_train?"),
    ({"name": "a/b"}, 'name: "a/b" is not a usable folder name: use letters, digits and . _ + - (starting with a letter or digit)'),
    ({"corpora": ["strum"]}, "corpora: unknown dataset 'strum'. Did you mean sturm?"),
    ({"corpora": [{"name": "ler", "level": "inner"}]}, "corpora: dataset 'ler' has no option 'level' (its options: granularity)"),
    (
        {"corpora": [{"name": "ler", "granularity": "medium"}]},
        "corpora: dataset 'ler': option granularity=medium is not one of: fine, coarse",
    ),
    ({"corpora": ["raw-de"]}, f"corpora: 'raw-de' is a raw-text set for language models, not a labeled corpus: use one of {LABELED}"),
    (
        {"corpora": ["sturm", {"name": "ud-de-gsd", "tags": "xpos"}], "taggers": ["map", "cse"]},
        "taggers: cse tags entity spans only, and corpus 'ud-de-gsd (xpos)' is pos (one tag per token (e.g. UD upos or xpos), scored by "
        "token accuracy): use bilstm-crf, bilstm512-crf, bilstm-crf-noproj, map-crf, map, or put the NER and pos corpora in separate experiments",
    ),
    (
        {"corpora": ["ud-en-ewt"], "taggers": ["bilstm-lcrf-ner"]},
        "taggers: bilstm-lcrf-ner tags entity spans only, and corpus 'ud-en-ewt' is pos (one tag per token (e.g. UD upos or xpos), scored by "
        "token accuracy): use bilstm-crf, bilstm512-crf, bilstm-crf-noproj, map-crf, map, or put the NER and pos corpora in separate experiments",
    ),
    (
        {"corpora": ["ud-en-ewt"], "entity_fix": [False, True]},
        "entity_fix: Entity-Fix repairs BIO entity tags, and corpus 'ud-en-ewt' is pos (one tag per token (e.g. UD upos or xpos), scored by "
        "token accuracy): remove true from entity_fix or the corpus",
    ),
    ({"corpora": [{"name": "ud-en-ewt", "tags": "feats"}]}, "corpora: dataset 'ud-en-ewt': option tags=feats is not one of: upos, xpos"),
    (
        {"corpora": ["cluener"]},
        "corpora: 'cluener' has no labeled test split (test.json (labels hidden by the CLUE leaderboard; not loaded)): add dev_fraction, "
        "e.g. {name: cluener, dev_fraction: 0.1}, to select models on that share of train and report on its dev split",
    ),
    (
        {"corpora": [{"name": "sturm", "dev_fraction": 0.1}]},
        "corpora: sturm: dev_fraction is for datasets without a labeled test split (e.g. cluener) and own corpora",
    ),
    (
        {"corpora": [{"name": "cluener", "dev_fraction": 1}]},
        "corpora: cluener: dev_fraction must be a share of train in (0, 1), e.g. 0.1 (found 1)",
    ),
    (
        {"corpora": [{"granularity": "coarse"}]},
        'corpora: entry {"granularity": "coarse"} needs a dataset name or a folder, as `sturm`, `{name: ler, granularity: coarse}` '
        "or `{name: letters, path: data/letters/}`",
    ),
    ({"corpora": []}, "key 'corpora' is empty: list at least one, e.g. `corpora: [sturm, {name: ler, granularity: coarse}]`"),
    ({"corpora": "sturm"}, "key 'corpora' must be a list, e.g. `corpora: [sturm, {name: ler, granularity: coarse}]`"),
    ({"corpora": ["sturm", "sturm"]}, "corpora: 'sturm' is listed twice: remove one"),
    ({"corpora": ["ler", {"name": "ler", "granularity": "fine"}]}, "corpora: 'ler' is listed twice: remove one"),
    (
        {"corpora": [{"name": "ler", "subsample": 0}]},
        "corpora: ler: subsample must be a fraction of train in (0, 1], e.g. 0.1 (found 0)",
    ),
    (
        {"corpora": [{"name": "ler", "subsample": 1.5}]},
        "corpora: ler: subsample must be a fraction of train in (0, 1], e.g. 0.1 (found 1.5)",
    ),
    (
        {"corpora": [{"name": "ler", "subsample": "10%"}]},
        'corpora: ler: subsample must be a fraction of train in (0, 1], e.g. 0.1 (found "10%")',
    ),
    (
        {"taggers": ["bilstm"]},
        'taggers: unknown tagger "bilstm" (known: bilstm-crf, bilstm512-crf, bilstm-crf-noproj, map-crf, map, lcrf-ner, bilstm-lcrf-ner, cse)',
    ),
    ({"taggers": []}, "key 'taggers' is empty: list at least one, e.g. `taggers: [bilstm-crf, map-crf, map]`"),
    ({"taggers": ["map", "map"], "tagger_train": {}}, "taggers: map is listed twice: remove one"),
    ({"embeddings": {"proposed": ["charlm:de"]}}, "embeddings: proposed: embedding spec 'charlm:de': write charlm:NAME-forward or charlm:NAME-backward"),
    ({"embeddings": {"classic": ["glove:en"]}}, "embeddings: classic: unknown embedding kind 'glove'. Known: charlm, fasttext, char, lexicon, bert."),
    ({"embeddings": {"classic": ["fasttext"]}}, "embeddings: classic: embedding spec 'fasttext' needs a name, e.g. fasttext:de"),
    ({"embeddings": {"classic": []}}, "embeddings: 'classic' must be a non-empty list of embedding specs, e.g. [fasttext:de]"),
    ({"embeddings": {"classic": "fasttext:de"}}, "embeddings: 'classic' must be a non-empty list of embedding specs, e.g. [fasttext:de]"),
    ({"embeddings": {}}, "key 'embeddings' must name at least one stack, e.g. `embeddings: {proposed: [charlm:de-forward, charlm:de-backward]}`"),
    (
        {"embeddings": {"my stack": ["char"]}},
        'embeddings: "my stack" is not a usable folder name: use letters, digits and . _ + - (starting with a letter or digit)',
    ),
    ({"embeddings": {"w": ["fasttext:de", "fasttext:de"]}}, "embeddings: w: fasttext:de is listed twice: remove one"),
    ({"embeddings": {"a": ["char"], "b": ["char"]}}, "embeddings: stacks 'a' and 'b' are the same: remove one"),
    ({"seeds": [1, 1.5]}, "seeds: 1.5 is not an integer seed (0 to 2^32 - 1), e.g. `seeds: [1, 2, 3]`"),
    ({"seeds": ["1"]}, 'seeds: "1" is not an integer seed (0 to 2^32 - 1), e.g. `seeds: [1, 2, 3]`'),
    ({"seeds": [True]}, "seeds: true is not an integer seed (0 to 2^32 - 1), e.g. `seeds: [1, 2, 3]`"),
    ({"seeds": []}, "key 'seeds' is empty: list at least one, e.g. `seeds: [1, 2, 3]`"),
    ({"seeds": [2, 1, 2]}, "seeds: 2 is listed twice: remove one"),
    ({"train": {"lr": 0.1}}, "train: unknown training setting 'lr'. Known: " + ", ".join(TrainSettings.keys()) + "."),
    ({"train": {"max_epoch": 5}}, "train: unknown training setting 'max_epoch'. Did you mean max_epochs?"),
    ({"train": {"optimizer": "rmsprop"}}, 'train.optimizer must be one of: sgd, adam, adamw (found "rmsprop")'),
    ({"train": {"max_epochs": 0}}, "train.max_epochs must be a positive integer (found 0)"),
    ({"train": [20]}, "train must be a mapping of training settings, e.g. {max_epochs: 20}"),
    ({"tagger_train": {"map": {"anneal_factor": 2}}}, "tagger_train.map.anneal_factor must be a number in (0, 1] (found 2)"),
    (
        {"taggers": ["bilstm-crf"]},
        'tagger_train: "map" is not in taggers (bilstm-crf): add it there or remove this entry',
    ),
    (
        {"tagger_train": {"lstm": {"max_epochs": 2}}},
        'tagger_train: "lstm" is not in taggers (bilstm-crf, map-crf, map): add it there or remove this entry',
    ),
]


@pytest.mark.parametrize("changes, message", ERRORS)
def test_errors_name_file_and_key(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    path = write(tmp_path, variant(**changes))
    assert error(path) == f"{path}: {message}"


def test_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, ["sturm"])
    assert error(path) == f"{path}: must be a mapping with the keys name, corpora, embeddings, taggers, seeds (see experiments/README.md)"


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: t3\ncorpora: [sturm\ntaggers: [map]\n", encoding="utf-8")
    assert error(path) == f"{path}:3: not valid YAML: expected ',' or ']', but got ':'"


def test_duplicate_yaml_key_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text("name: t3\nembeddings:\n  proposed: [char]\n  proposed: [fasttext:de]\n", encoding="utf-8")
    assert error(path) == f"{path}:4: not valid YAML: duplicate key 'proposed': each name may appear once"


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "none.yaml"
    assert error(path) == f"{path}: experiment file not found"


def test_experiment_file_not_in_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: t3\n# Gr\xfc\xdfe\ncorpora: [sturm]\n")
    assert error(path) == f"{path}:2: not valid utf-8: byte 0xfc at column 5 (convert the file, e.g. with iconv)"


def test_grid_expansion_and_run_ids(tmp_path: Path) -> None:
    config = load_experiment(write(tmp_path, BASE))
    grid = runs(config)
    assert len(grid) == 2 * 2 * 3 * 3
    ids = [run.run_id for run in grid]
    assert len(set(ids)) == len(ids)
    assert ids[0] == "sturm/proposed/bilstm-crf/seed-1"
    assert ids[-1] == "ler-coarse/proposed+word/map/seed-3"
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", part) for run_id in ids for part in run_id.split("/"))
    last = grid[-1]
    assert (last.experiment, last.embeddings, last.tagger, last.seed) == ("t3", "proposed+word", "map", 3)
    assert last.embedding_specs == ("charlm:de-forward", "charlm:de-backward", "fasttext:de")
    assert last.corpus == CorpusChoice("ler", {"granularity": "coarse"}, None)


def test_corpus_labels_keys_and_options(tmp_path: Path) -> None:
    corpora = [
        "sturm",
        {"name": "ler", "granularity": "coarse", "subsample": 0.1},
        {"name": "germeval14", "level": "inner"},
        {"name": "ler", "granularity": "fine"},
        {"name": "danish-ner", "train_size": "5k", "subsample": 1},
    ]
    config = load_experiment(write(tmp_path, variant(corpora=corpora)))
    assert [c.label for c in config.corpora] == ["sturm", "ler (coarse, 10% train)", "germeval14 (inner)", "ler", "danish-ner (5k)"]
    assert [c.key for c in config.corpora] == ["sturm", "ler-coarse-10pct", "germeval14-inner", "ler", "danish-ner-5k"]
    assert [c.options for c in config.corpora] == [{}, {"granularity": "coarse"}, {"level": "inner"}, {}, {"train_size": "5k"}]
    assert [c.subsample for c in config.corpora] == [None, 0.1, None, None, None]


def test_train_settings_precedence(tmp_path: Path) -> None:
    data = variant(train={"max_epochs": 20, "learning_rate": 0.2}, tagger_train={"map": {"learning_rate": 0.05, "patience": 1}})
    settings = {run.tagger: run.train_settings for run in runs(load_experiment(write(tmp_path, data)))}
    assert settings["bilstm-crf"] == {**default_train("bilstm-crf"), "max_epochs": 20, "learning_rate": 0.2}
    assert settings["map-crf"] == {**default_train("map-crf"), "max_epochs": 20, "learning_rate": 0.2}
    assert settings["map"] == {**default_train("map"), "max_epochs": 20, "learning_rate": 0.05, "patience": 1}


def test_corpus_entries_override_the_settings_on_their_corpus(tmp_path: Path) -> None:
    """An epoch cap for one corpus (full LER) applies after the experiment's settings there, and nowhere else."""
    capped = {"name": "ler", "granularity": "coarse", "train": {"max_epochs": 10}, "tagger_train": {"bilstm-crf": {"max_epochs": 4}}}
    plain = runs(load_experiment(write(tmp_path, BASE, "plain.yaml")))
    grid = runs(load_experiment(write(tmp_path, variant(corpora=["sturm", capped]), "capped.yaml")))
    settings = {(run.corpus.key, run.tagger): run.train_settings for run in grid}
    assert settings["ler-coarse", "map"] == {**default_train("map"), "max_epochs": 10, "learning_rate": 0.05}
    assert settings["ler-coarse", "map-crf"] == {**default_train("map-crf"), "max_epochs": 10}
    assert settings["ler-coarse", "bilstm-crf"] == {**default_train("bilstm-crf"), "max_epochs": 4}
    assert settings["sturm", "bilstm-crf"] == {**default_train("bilstm-crf"), "max_epochs": 20}
    # the runs elsewhere keep their fingerprints; the capped corpus keeps its name, folder and column
    assert [run_record(r) for r in grid if r.corpus.name == "sturm"] == [run_record(r) for r in plain if r.corpus.name == "sturm"]
    ler = grid[-1].corpus
    assert (ler.key, ler.label, ler.options) == ("ler-coarse", "ler (coarse)", {"granularity": "coarse"})
    assert ler.train_note == "trained with max_epochs 10; bilstm-crf: max_epochs 4 on this corpus"
    assert plain[-1].corpus.train_note is None


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"train": {"max_epoch": 5}}, "corpora: ler: train: unknown training setting 'max_epoch'. Did you mean max_epochs?"),
        ({"train": [5]}, "corpora: ler: train must be a mapping of training settings, e.g. {max_epochs: 20}"),
        ({"tagger_train": {"map": {"anneal_factor": 2}}}, "corpora: ler: tagger_train.map.anneal_factor must be a number in (0, 1] (found 2)"),
        ({"tagger_train": ["map"]}, "corpora: ler: tagger_train must map taggers to settings, e.g. `tagger_train: {map: {learning_rate: 0.05}}`"),
        (
            {"tagger_train": {"cse": {"max_epochs": 2}}},
            'corpora: ler (coarse): tagger_train: "cse" is not in taggers (bilstm-crf, map-crf, map): add it there or remove this entry',
        ),
    ],
)
def test_bad_corpus_overrides_are_one_line_errors(tmp_path: Path, entry: dict[str, Any], message: str) -> None:
    path = write(tmp_path, variant(corpora=[{"name": "ler", "granularity": "coarse", **entry}]))
    assert error(path).endswith(f": {message}")


def test_train_settings_are_the_one_source_of_defaults() -> None:
    paper = {"learning_rate": 0.1, "mini_batch_size": 32, "max_epochs": 150, "anneal_factor": 0.5, "patience": 3, "optimizer": "sgd",
             "train_with_dev": False}
    assert TrainSettings().record() == PAPER_TRAIN.record() == paper  # the settings added later stay out while at their defaults
    assert asdict(TrainSettings()) == {**paper, "schedule": "plateau", "warmup_fraction": 0.1, "epoch_samples": None, "bucket_batches": None,
                                      "precision": "float32", "decoder_learning_rate": None, "dev_every": 1}
    assert LINEAR_TRAIN.record() == {**paper, "optimizer": "adam", "learning_rate": 0.01}
    for name in TAGGERS:
        defaults = default_train(name)
        assert tuple(defaults) == tuple(key for key in TrainSettings.keys() if key not in LATER_SETTINGS)
        assert TrainSettings(**defaults) == tagger_spec(name).train  # constructing checks every value


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"max_epochs": 0}, "max_epochs must be a positive integer (found 0)"),
        ({"learning_rate": True}, "learning_rate must be a positive number (found true)"),
        ({"learning_rate": float("inf")}, "learning_rate must be a positive number (found Infinity)"),
        ({"decoder_learning_rate": float("nan")}, "decoder_learning_rate must be a positive number, or null for learning_rate (found NaN)"),
        ({"optimizer": ["sgd"]}, 'optimizer must be one of: sgd, adam, adamw (found ["sgd"])'),
        ({"schedule": "cosine"}, 'schedule must be one of: plateau, linear (found "cosine")'),
        ({"warmup_fraction": 1}, "warmup_fraction must be a number in [0, 1) (found 1)"),
        ({"epoch_samples": 0}, "epoch_samples must be a positive integer, or null for one pass over train (found 0)"),
        ({"train_with_dev": 1}, "train_with_dev must be true or false (found 1)"),
    ],
)
def test_train_settings_check_themselves(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(FlairsuiteError) as info:
        TrainSettings(**changes)
    assert str(info.value) == message
    with pytest.raises(FlairsuiteError) as info:
        TrainSettings.from_mapping("train", changes)
    assert str(info.value) == f"train.{message}"


def test_train_settings_keep_the_values_as_written(tmp_path: Path) -> None:
    """Run records (and so fingerprints) hold the settings as the file wrote them: an int learning rate stays an int."""
    data = variant(train={"learning_rate": 1, "anneal_factor": 1}, tagger_train=None)
    settings = runs(load_experiment(write(tmp_path, data)))[0].train_settings
    assert type(settings["learning_rate"]) is int and type(settings["anneal_factor"]) is int
    assert type(default_train("map")["learning_rate"]) is float


def test_exponent_numbers_read_as_floats(tmp_path: Path) -> None:
    """`5e-5` is a float as in YAML 1.2 (PyYAML's YAML 1.1 would make it the string "5e-5"); quoted it stays a string."""
    path = tmp_path / "e.yaml"
    path.write_text("name: e\ncorpora: [sturm]\nembeddings: {p: [charlm:de-forward]}\ntaggers: [map]\nseeds: [1]\n"
                    "train: {learning_rate: 5e-5}\n", encoding="utf-8")
    settings = runs(load_experiment(path))[0].train_settings
    assert settings["learning_rate"] == 5e-5 and type(settings["learning_rate"]) is float
    path.write_text(path.read_text(encoding="utf-8").replace("5e-5", "'5e-5'"), encoding="utf-8")
    with pytest.raises(FlairsuiteError, match=r"learning_rate must be a positive number \(found \"5e-5\"\)"):
        load_experiment(path)


def test_fingerprint_ignores_order_and_sees_values(tmp_path: Path) -> None:
    reference = fingerprint(load_experiment(write(tmp_path, BASE)))
    reordered = {
        "seeds": [3, 1, 2],
        "tagger_train": BASE["tagger_train"],
        "taggers": ["map", "bilstm-crf", "map-crf"],
        "embeddings": dict(reversed(BASE["embeddings"].items())),
        "train": BASE["train"],
        "corpora": [{"granularity": "coarse", "name": "ler"}, "sturm"],
        "name": "t3",
    }
    assert fingerprint(load_experiment(write(tmp_path, reordered, "reordered.yaml"))) == reference
    for changed in (
        variant(train={"max_epochs": 21}),
        variant(seeds=[1, 2, 4]),
        variant(name="t4"),
        variant(tagger_train=None),
        variant(embeddings={"proposed": ["charlm:de-backward", "charlm:de-forward"]}),
    ):
        assert fingerprint(load_experiment(write(tmp_path, changed, "changed.yaml"))) != reference


BERT_STACKS = {"proposed": ["charlm:de-forward", "charlm:de-backward"], "bert": ["bert:de-cpu"], "bert+lm": ["charlm:de-forward", "bert:de-cpu@mean"]}


def test_fine_tune_axis_adds_runs_below_ft_for_stacks_with_a_bert(tmp_path: Path) -> None:
    data = variant(embeddings=BERT_STACKS, fine_tune=[False, True], entity_fix=[False, True], seeds=[1])
    grid = runs(load_experiment(write(tmp_path, data)))
    frozen_ids = [f"{c}/{s}/{t}/seed-1" for c in ("sturm", "ler-coarse") for s in BERT_STACKS for t in BASE["taggers"]]
    tuned_ids = [f"{c}/{s}/ft/{t}/seed-1" for c in ("sturm", "ler-coarse") for s in ("bert", "bert+lm") for t in BASE["taggers"]]
    assert sorted(run.run_id for run in grid) == sorted(frozen_ids + tuned_ids)  # no fine-tuned `proposed`: nothing in it to fine-tune
    assert all(run.entity_fix == (False, True) for run in grid)
    tuned = {run.run_id: run for run in grid if run.fine_tune}
    frozen = {run.run_id: run for run in grid if not run.fine_tune}
    assert set(tuned) == set(tuned_ids) and set(frozen) == set(frozen_ids)
    # fine-tuned runs: the paper's batch and length (LER 50 x 5,000 samples), Flair's AdamW 5e-5 with linear warm-up and decay;
    # `train` and `tagger_train` (frozen runs' overrides) do not reach them
    paper = {"mini_batch_size": 16, "epoch_samples": 5000, "optimizer": "adamw", "learning_rate": 5e-5, "schedule": "linear",
             "warmup_fraction": 0.1, "bucket_batches": 50}
    for run in tuned.values():
        assert {key: run.train_settings[key] for key in paper} == paper
        assert run.train_settings["max_epochs"] == (50 if run.corpus.name == "ler" else 30)
    assert frozen["sturm/bert/map/seed-1"].train_settings == {**default_train("map"), "max_epochs": 20, "learning_rate": 0.05}
    single = runs(load_experiment(write(tmp_path, variant(embeddings={"bert": ["bert:de-cpu"]}, fine_tune=True, seeds=[1]), "one.yaml")))
    assert [run.run_id for run in single][:3] == ["sturm/bert/ft/bilstm-crf/seed-1", "sturm/bert/ft/map-crf/seed-1", "sturm/bert/ft/map/seed-1"]
    assert all(run.fine_tune for run in single)


def test_only_keeps_the_matching_part_of_the_grid(tmp_path: Path) -> None:
    """`only`: frozen stacks with one tagger, the fine-tuned BERT with another (a stack comparison's rows)."""
    only = ["*/proposed/bilstm-crf/*", "*/bert/map/*", "*/bert/ft/map-crf/*", "sturm/bert+lm/ft/*/seed-1"]
    data = variant(embeddings=BERT_STACKS, fine_tune=[False, True], seeds=[1, 2], only=only)
    config = load_experiment(write(tmp_path, data))
    kept = [run.run_id for run in runs(config)]
    full = [run.run_id for run in runs(load_experiment(write(tmp_path, variant(embeddings=BERT_STACKS, fine_tune=[False, True], seeds=[1, 2]), "full.yaml")))]
    expected = [f"{c}/proposed/bilstm-crf/seed-{s}" for c in ("sturm", "ler-coarse") for s in (1, 2)]
    expected += [f"{c}/bert/map/seed-{s}" for c in ("sturm", "ler-coarse") for s in (1, 2)]
    expected += [f"{c}/bert/ft/map-crf/seed-{s}" for c in ("sturm", "ler-coarse") for s in (1, 2)]
    expected += [f"sturm/bert+lm/ft/{t}/seed-1" for t in BASE["taggers"]]
    assert sorted(kept) == sorted(expected)
    assert kept == [run_id for run_id in full if run_id in kept]  # the file's order
    assert fingerprint(config) != fingerprint(load_experiment(tmp_path / "full.yaml"))  # a narrowed grid is another experiment


@pytest.mark.parametrize(
    "only, message",
    [
        (["*/bert/ft/lcrf-ner/*"], "only: */bert/ft/lcrf-ner/* matches no run of the grid (run ids look like sturm/proposed/bilstm-crf/seed-1)"),
        ("*/bert/*", "key 'only' must be a list, e.g. `only: ['*/proposed+word/bilstm-crf/*', '*/bert/ft/lcrf-ner/*']`"),
        (["*/bert/*", 3], "only: 3 is not a run-id pattern, e.g. `only: ['*/proposed+word/bilstm-crf/*', '*/bert/ft/lcrf-ner/*']`"),
        (["*/bert/*", "*/bert/*"], "only: */bert/* is listed twice: remove one"),
    ],
)
def test_bad_only_patterns_are_one_line_errors(tmp_path: Path, only: Any, message: str) -> None:
    path = write(tmp_path, variant(embeddings=BERT_STACKS, fine_tune=[False, True], seeds=[1], only=only))
    assert error(path) == f"{path}: {message}"


def test_fine_tune_overrides_and_fingerprints(tmp_path: Path) -> None:
    data = variant(embeddings=BERT_STACKS, fine_tune=[False, True], fine_tune_train={"max_epochs": 2, "epoch_samples": 64})
    config = load_experiment(write(tmp_path, data))
    tuned = [run for run in runs(config) if run.fine_tune]
    assert {(run.train_settings["max_epochs"], run.train_settings["epoch_samples"]) for run in tuned} == {(2, 64)}
    # the frozen runs of a file are the same runs (same records, ids, settings) with or without the fine-tuning axis
    plain = load_experiment(write(tmp_path, variant(embeddings=BERT_STACKS), "plain.yaml"))
    assert [run for run in runs(config) if not run.fine_tune] == runs(plain)
    assert fingerprint(config) != fingerprint(plain)
    assert fingerprint(load_experiment(write(tmp_path, variant(embeddings=BERT_STACKS, fine_tune=[False]), "off.yaml"))) == fingerprint(plain)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"fine_tune": True}, "fine_tune: true needs a stack with a bert: embedding to fine-tune, e.g. `embeddings: {bert: [bert:de-cpu]}`"),
        ({"fine_tune": [False, True]}, "fine_tune: true needs a stack with a bert: embedding to fine-tune, e.g. `embeddings: {bert: [bert:de-cpu]}`"),
        ({"fine_tune": True, "embeddings": BERT_STACKS},
         "fine_tune: stack 'proposed' has no bert: embedding to fine-tune: add false to fine_tune or remove the stack"),
        ({"fine_tune": "yes", "embeddings": BERT_STACKS}, "fine_tune: write true, false or a list of them, e.g. `fine_tune: [false, true]`"),
        ({"fine_tune": [True, True], "embeddings": BERT_STACKS}, "fine_tune: true is listed twice: remove one"),
        ({"fine_tune": [], "embeddings": BERT_STACKS}, "key 'fine_tune' is empty: list at least one, e.g. `fine_tune: [false, true]`"),
        ({"fine_tune_train": {"max_epochs": 2}, "embeddings": BERT_STACKS}, "fine_tune_train: no run fine-tunes: add `fine_tune: true` or remove this key"),
        ({"fine_tune": True, "embeddings": {"bert": ["bert:de-cpu"]}, "fine_tune_train": {"schedule": "cosine"}},
         'fine_tune_train.schedule must be one of: plateau, linear (found "cosine")'),
        ({"embeddings": {"bert": ["bert:de-cpu@max"]}},
         "embeddings: bert: embedding spec 'bert:de-cpu@max': unknown option '@max': options are @first or @mean (sub-token pooling) "
         "and @lastN or @layerK (layers), e.g. bert:de-cpu@mean@last4"),
    ],
)
def test_fine_tune_errors_name_file_and_key(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    path = write(tmp_path, variant(**changes))
    assert error(path) == f"{path}: {message}"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_example_files_validate(path: Path) -> None:
    provide_derived_corpora(path)
    assert runs(load_experiment(path))


def test_sturm_table3_layout() -> None:
    config = load_experiment(EXAMPLES / "sturm-table3.yaml")
    assert config.name == "sturm-table3"
    assert list(config.embeddings) == ["proposed", "proposed+word", "classic"]
    assert config.taggers == ["bilstm-crf", "map-crf", "map"]
    assert len(runs(config)) == 27


def test_quickstart_needs_only_committed_embeddings() -> None:
    """The quickstart's stack resolves from a fresh clone: every artifact is a committed file (no training, no download)."""
    from importlib.resources import files

    from flairsuite.embeddings import existing_artifact

    repo = Path(__file__).resolve().parents[1]
    config = load_experiment(Path(str(files("flairsuite.experiments") / "quickstart.yaml")))
    specs = {spec for stack in config.embeddings.values() for spec in stack}
    assert "fasttext:de-quickstart" in specs
    committed = set(subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout.split())
    for spec in specs:
        path = existing_artifact(spec, repo)
        assert str(path.relative_to(repo)) in committed, spec


def test_cluener_takes_dev_from_train_and_reports_on_its_official_dev(tmp_path: Path) -> None:
    config = load_experiment(write(tmp_path, variant(corpora=[{"name": "cluener", "dev_fraction": 0.1, "subsample": 0.5}])))
    corpus = config.corpora[0]
    assert (corpus.label, corpus.key) == ("cluener (dev 10% of train, 50% train)", "cluener-dev10pct-50pct")
    spec = corpus.spec()
    assert spec.dev_fraction == 0.1 and list(spec.splits) == ["train", "test"] and spec.splits["test"].files == ("dev.json",)
    assert "test is the official dev split (the test labels are hidden)" in corpus.split_note
    assert runs(config)[0].run_id == "cluener-dev10pct-50pct/proposed/bilstm-crf/seed-1"
    records = [run_record(run) for run in runs(config)]
    assert all(record["dev_fraction"] == 0.1 for record in records)
    plain = load_experiment(write(tmp_path, variant(corpora=["sturm"]), "plain.yaml"))
    assert all("dev_fraction" not in run_record(run) for run in runs(plain))  # other corpora's fingerprints stay as they were
