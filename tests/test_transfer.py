"""The `transfer:` block (experiments/transfer_settings.py, experiments/transfer.py) on tiny corpora built here.

The target is an own corpus (types pers, loc, work, as AjMC's); the sources are a fake registered Sturm (train split only:
pers, place, date) and a fake GermEval 2014 with only its dev and test files (PER, LOC, ORG), read as the registry says.
The stack is the committed compact word vectors `fasttext:de-quickstart` (cached once per corpus split), the tagger
Map-CRF for 2 epochs a phase: every training takes a second or two.

Covers: the mapping keeps and drops the right entities; joined splits serve the same rows as their parts; one-line
errors for bad blocks (at reading) and for a mapped type no source sentence holds (at run time); `none` runs keep their
ids and fingerprints, transfer runs get their own; end to end through the runner: the sequential target phase starts
from the source phase's weights, joint trains on the union, metrics.json records both, the collector and tables show the
modes as rows, ablation files address them; a run killed between its phases resumes to the uninterrupted result.
"""

from pathlib import Path

import pytest
import torch
from conftest import REPO, write_file

from flairsuite.errors import FlairsuiteError
from flairsuite.experiments import read_experiment, runs
from flairsuite.experiments import transfer as transfer_module
from flairsuite.experiments.identity import run_fingerprint, run_record
from flairsuite.experiments.runner import run_experiment
from flairsuite.files.paths import results_dir
from flairsuite.results.ablation import runs_of, runs_ref
from flairsuite.results.collect import collect, read_runs
from flairsuite.results.tables import report
from flairsuite.tagging.data import LabeledSplit
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.joined_features import JoinedFeatures
from flairsuite.tagging.tagger_training import trained_state
from flairsuite.tagging.type_mapping import map_types

# `word/TAG` carries a BIO tag, a bare word is O
TARGET_TRAIN = """\
Sophokles/B-pers schrieb den Aias/B-work in Athen/B-loc .
Hermann/B-pers las die Ilias/B-work in Leipzig/B-loc .
Der Vers ist verderbt .
Schneidewin/B-pers erklärt den Aias/B-work .
Nauck/B-pers kam nach Berlin/B-loc .
Vgl. die Odyssee/B-work .
Homer/B-pers dichtete in Ionien/B-loc .
Die Stelle ist dunkel ."""
TARGET_DEV = """\
Hermann/B-pers schrieb in Leipzig/B-loc .
Sophokles/B-pers dichtete den Aias/B-work ."""
TARGET_TEST = """\
Nauck/B-pers las die Ilias/B-work in Berlin/B-loc .
Der Vers ist dunkel ."""
STURM_TRAIN = """\
Am Montag/B-date kam Anna/B-pers nach Berlin/B-place .
Karl/B-pers schrieb aus Wien/B-place .
Lieber Herwarth/B-pers Walden/I-pers , herzlichen Dank !
Der Brief blieb liegen ."""
GERMEVAL_DEV = """\
Goethe/B-PER lebte in Weimar/B-LOC .
Die Firma/O Siemens/B-ORG baut in Berlin/B-LOC ."""
GERMEVAL_TEST = """\
Schiller/B-PER starb in Weimar/B-LOC .
Die Universität/B-ORG Jena/I-ORG ehrte Schiller/B-PER ."""
TYPES = "{pers: pers, place: loc, PER: pers, LOC: loc}"
SOURCES = "[sturm, {name: germeval14, splits: [dev, test]}]"
STACK = "fasttext:de-quickstart"


def tagged(text: str) -> list[list[tuple[str, str]]]:
    """(token, tag) of every word of every sentence (line) of `text`."""
    return [[tuple(word.rsplit("/", 1)) if "/" in word[1:] else (word, "O") for word in line.split()] for line in text.splitlines()]


def column(text: str, germeval: bool = False) -> str:
    """The sentences of `text` as a column file: `token tag` (GermEval: `#\\t` comment, `n TAB token TAB tag TAB O`)."""
    sentences = []
    for number, sentence in enumerate(tagged(text)):
        if germeval:
            lines = [f"#\tsource {number}"] + [f"{i}\t{token}\t{tag}\tO" for i, (token, tag) in enumerate(sentence, 1)]
        else:
            lines = [f"{token} {tag}" for token, tag in sentence]
        sentences.append("\n".join(lines))
    return "\n\n".join(sentences) + "\n"


@pytest.fixture
def corpora(tmp_path: Path, monkeypatch) -> Path:
    """A datasets folder with the fake Sturm (train only) and GermEval (dev and test only), an own target corpus beside it,
    and the clone's committed models found ($FLAIRSUITE_MODELS)."""
    monkeypatch.setenv("FLAIRSUITE_MODELS", str(REPO))
    root = tmp_path / "corpora"
    write_file(root / "sturm" / "train_sturm.conll", column(STURM_TRAIN))
    write_file(root / "germeval2014" / "NER-de-dev.tsv", column(GERMEVAL_DEV, germeval=True))
    write_file(root / "germeval2014" / "NER-de-test.tsv", column(GERMEVAL_TEST, germeval=True))
    for split, text in (("train", TARGET_TRAIN), ("dev", TARGET_DEV), ("test", TARGET_TEST)):
        write_file(tmp_path / "comm" / f"{split}.txt", column(text))
    return root


def experiment(folder: Path, transfer: str = f"{{from: {SOURCES}, types: {TYPES}, modes: [none, sequential, joint], source_train: {{max_epochs: 2}}}}",
               extra: str = "", name: str = "transfer-test", stacks: str = f"{{word: [{STACK}]}}") -> Path:
    """An experiment file in `folder` on the own corpus `comm/` with the given `transfer:` block (none: without one)."""
    lines = [f"name: {name}", "corpora: [{name: comm, path: comm/}]", f"embeddings: {stacks}", "taggers: [map-crf]", "seeds: [1]",
             "train: {max_epochs: 2}", extra, *([f"transfer: {transfer}"] if transfer else [])]
    return write_file(folder / f"{name}.yaml", "\n".join(lines) + "\n")


def split_of(text: str) -> LabeledSplit:
    return LabeledSplit([tuple(t for t, _ in s) for s in tagged(text)], [bytes([1] * len(s)) for s in tagged(text)],
                        [[tag for _, tag in s] for s in tagged(text)])


def test_mapping_keeps_mapped_types_and_drops_the_others():
    split = split_of("Die Universität/B-ORG Jena/I-ORG ehrte Schiller/B-PER Goethe/B-PER in Weimar/B-LOC Land/I-LOC .")
    mapped = map_types(split, {"PER": "pers", "LOC": "loc"})
    assert mapped.split.tags == [["O", "O", "O", "O", "B-pers", "B-pers", "O", "B-loc", "I-loc", "O"]]  # two neighbours stay two
    assert dict(mapped.kept) == {"PER": 2, "LOC": 1} and dict(mapped.dropped) == {"ORG": 1}
    assert mapped.split.texts == split.texts and mapped.split.spaces == split.spaces  # the same tokens: the same cached vectors
    assert map_types(split, {"ORG": "work"}).split.tags == [["O", "B-work", "I-work", "O", "O", "O", "O", "O", "O", "O"]]


def test_joined_splits_serve_the_rows_of_their_parts():
    first, second = split_of(STURM_TRAIN), split_of(GERMEVAL_DEV)
    arrays = [torch.arange(split.tokens * 2, dtype=torch.float16).reshape(-1, 2).numpy() + offset for split, offset in ((first, 0), (second, 1000))]
    parts = [SplitFeatures(first, [arrays[0]]), SplitFeatures(second, [arrays[1]])]
    joined = JoinedFeatures(parts)
    assert len(joined) == len(first) + len(second) and joined.split.tags == first.tags + second.tags
    batch = joined.batch([5, 0, 3, 4])  # sentences 0 and 3 of Sturm, 0 and 1 of GermEval's dev
    for position, index in enumerate(batch.order):
        part, local = (parts[0], index) if index < len(first) else (parts[1], index - len(first))
        expected = part.batch([local]).tensor[0, : int(batch.lengths[position])]
        assert torch.equal(batch.tensor[position, : int(batch.lengths[position])], expected)


BAD_BLOCKS = [
    ("{from: [sturm], types: {pers: pers}, modes: [joint], epochs: 3}", "transfer: unknown key 'epochs'"),
    ("{from: [sturm], types: {pers: pers}}", "transfer: missing key 'modes'"),
    ("{from: [sturm], types: {pers: pers}, modes: [jointly]}", 'transfer.modes: unknown mode "jointly"'),
    ("{from: [sturm], types: {pers: pers}, modes: [none]}", "transfer.modes: none alone"),
    ("{from: [sturm], types: {PER: pers}, modes: [joint]}", 'transfer.types: "PER" is no type of the sources (sturm: pers, place, date)'),
    ("{from: [sturm], types: {place: place}, modes: [joint]}", "transfer.types: place -> \"place\": corpus 'comm' has no type \"place\""),
    ("{from: [sturm], types: {pers: pers}, modes: [joint], source_train: {max_epochs: 2}}", "transfer.source_train: only the sequential mode"),
    ("{from: [sturm], types: {pers: pers}, modes: [sequential], source_train: {max_epochs: 0}}", "transfer.source_train.max_epochs must be"),
    ("{from: [sturm, sturm], types: {pers: pers}, modes: [joint]}", "transfer.from: sturm is listed twice"),
    ("{from: [{name: sturm, splits: [valid]}], types: {pers: pers}, modes: [joint]}", 'transfer.from: sturm: unknown split "valid"'),
    ("{from: [{name: sturm, train: {max_epochs: 3}}], types: {pers: pers}, modes: [joint]}", "transfer.from: sturm: train is not for a source"),
    ("{from: [stürm], types: {pers: pers}, modes: [joint]}", "transfer.from: unknown dataset"),
    ("{from: [{path: comm/}], types: {pers: pers}, modes: [joint]}", "transfer.from: comm is a corpus of the experiment"),
    ("{from: [ud-en-ewt], types: {NOUN: pers}, modes: [joint]}", "transfer.from: ud-en-ewt is pos"),
]


@pytest.mark.parametrize("block,message", BAD_BLOCKS)
def test_bad_blocks_are_one_line_errors_naming_the_key(corpora, block, message):
    with pytest.raises(FlairsuiteError) as raised:
        read_experiment(experiment(corpora.parent, block))
    text = str(raised.value)
    assert message in text and "\n" not in text, text


def test_fine_tuning_and_transfer_are_refused(corpora):
    with pytest.raises(FlairsuiteError, match="transfer: transfer runs train frozen stacks"):
        read_experiment(experiment(corpora.parent, extra="fine_tune: [false, true]", stacks="{word: [fasttext:de], bert: [bert:de-cpu]}"))


def test_none_runs_keep_their_ids_and_fingerprints(corpora):
    plain = runs(read_experiment(experiment(corpora.parent, transfer="", name="plain")).config)
    grid = runs(read_experiment(experiment(corpora.parent, name="plain")).config)
    assert [run.run_id for run in grid] == ["comm/word/map-crf/seed-1", "comm/word/transfer-sequential/map-crf/seed-1",
                                            "comm/word/transfer-joint/map-crf/seed-1"]
    artifacts = ["digest"]
    assert run_record(grid[0]) == run_record(plain[0]) and run_fingerprint(grid[0], artifacts) == run_fingerprint(plain[0], artifacts)
    fingerprints = {run_fingerprint(run, artifacts) for run in grid}
    assert len(fingerprints) == 3
    sequential = run_record(grid[1])["transfer"]
    assert sequential["mode"] == "sequential" and sequential["types"] == {"pers": "pers", "place": "loc", "PER": "pers", "LOC": "loc"}
    assert [source["splits"] for source in sequential["sources"]] == [["train"], ["dev", "test"]]
    assert sequential["source_train"]["max_epochs"] == 2 and "source_train" not in run_record(grid[2])["transfer"]
    other_sources = runs(read_experiment(experiment(corpora.parent, "{from: [sturm], types: {pers: pers}, modes: [none, sequential]}",
                                                    name="plain")).config)
    assert run_fingerprint(other_sources[0], artifacts) == run_fingerprint(plain[0], artifacts)
    assert run_fingerprint(other_sources[1], artifacts) not in fingerprints  # the sources and mapping are in the fingerprint


class PhaseSpy:
    """Wraps `train_tagger` in experiments/transfer.py: records the trained weights at entry and exit of every call; with
    `fail_at`, that call (counted from 1) raises instead, as a kill would stop the run."""

    def __init__(self, train_tagger, fail_at: int = 0) -> None:
        self.train_tagger, self.fail_at, self.calls = train_tagger, fail_at, []

    def __call__(self, model, train, dev, settings, seed, checkpoint, desc="", **options):
        if len(self.calls) + 1 == self.fail_at:
            raise RuntimeError("killed")
        entry = trained_state(model)
        progress = self.train_tagger(model, train, dev, settings, seed, checkpoint, desc, **options)
        self.calls.append({"desc": desc, "sentences": len(train), "entry": entry, "exit": trained_state(model)})
        return progress


def same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[key], b[key]) for key in a)


def model_weights(path: Path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=False)["state_dict"]


def test_transfer_runs_end_to_end(corpora, tmp_path, monkeypatch):
    spy = PhaseSpy(transfer_module.train_tagger)
    monkeypatch.setattr(transfer_module, "train_tagger", spy)
    home, cache = tmp_path / "home", tmp_path / "cache"
    out = run_experiment(read_experiment(experiment(tmp_path)), home, corpora, echo=lambda line: None, cache=cache)
    assert out == results_dir(home) / "transfer-test"
    assert len(list(cache.rglob("*.npy"))) == 6  # the target's 3 splits, Sturm's train, GermEval's dev and test: each embedded once
    none, sequential, joint = (out / "comm" / "word" / segment / "map-crf" / "seed-1" for segment in ("", "transfer-sequential", "transfer-joint"))
    # sequential: the source phase on the 8 source sentences, then the target phase from exactly its weights
    source_phase, target_phase, joint_call = spy.calls
    assert source_phase["sentences"] == 8 and target_phase["sentences"] == 8 and joint_call["sentences"] == 16
    assert same_weights(target_phase["entry"], source_phase["exit"]) and not same_weights(source_phase["entry"], source_phase["exit"])
    assert same_weights(source_phase["entry"], joint_call["entry"])  # same seed, same initial weights
    assert not same_weights(model_weights(sequential / "model.pt"), model_weights(none / "model.pt"))
    assert not any((run / name).exists() for run in (sequential, joint) for name in (*transfer_module.PHASE_FILES, "checkpoint.pt"))
    metrics = {run.metrics["run"]: run.metrics for run in read_runs(out)}
    plain, seq, jnt = (metrics[str(run.relative_to(out))] for run in (none, sequential, joint))
    assert "transfer" not in plain and "transfer_details" not in plain
    details = seq["transfer_details"]
    assert seq["transfer"]["mode"] == "sequential" and details["mode"] == "sequential"
    assert [(s["source"], s["sentences"]) for s in details["sources"]] == [("sturm", 4), ("germeval14 (dev+test)", 4)]
    assert details["sources"][0]["entities_kept"] == {"pers": 3, "place": 2} and details["sources"][0]["entities_dropped"] == {"date": 1}
    assert details["entities_kept"] == {"LOC": 3, "PER": 3, "pers": 3, "place": 2} and details["entities_dropped"] == {"ORG": 2, "date": 1}
    assert details["source_phase"]["epochs"] == 2 and len(details["source_phase"]["history"]) == 2 and seq["epochs"] == 2
    assert jnt["transfer_details"]["training_sentences"] == 16 and "source_phase" not in jnt["transfer_details"]
    # the collector and the tables: one row per mode
    frame = collect(out)
    assert sorted(frame["transfer"]) == ["joint", "none", "sequential"]
    table = report(frame, None)
    assert "| embeddings | transfer | tagger | comm |" in table
    assert all(f"| word | {mode} | map-crf |" in table for mode in ("none", "sequential", "joint"))
    ref = runs_ref("transfer-test/word/transfer-joint/map-crf", Path("ablation.yaml"), "runs")
    assert ref.transfer == "joint" and str(ref) == "transfer-test/word/transfer-joint/map-crf"
    assert list(runs_of(frame, ref)["run"]) == ["comm/word/transfer-joint/map-crf/seed-1"]
    assert list(runs_of(frame, runs_ref("transfer-test/word/map-crf", Path("a.yaml"), "baseline"))["run"]) == ["comm/word/map-crf/seed-1"]


def test_a_run_killed_between_its_phases_resumes_to_the_same_model(corpora, tmp_path, monkeypatch):
    path = experiment(tmp_path, f"{{from: {SOURCES}, types: {TYPES}, modes: [sequential], source_train: {{max_epochs: 2}}}}")
    cache, original = tmp_path / "cache", transfer_module.train_tagger
    run_id = "comm/word/transfer-sequential/map-crf/seed-1"
    whole = run_experiment(read_experiment(path), tmp_path / "whole", corpora, echo=lambda line: None, cache=cache) / run_id
    monkeypatch.setattr(transfer_module, "train_tagger", PhaseSpy(original, fail_at=2))
    with pytest.raises(RuntimeError, match="killed"):
        run_experiment(read_experiment(path), tmp_path / "killed", corpora, echo=lambda line: None, cache=cache)
    killed = results_dir(tmp_path / "killed") / "transfer-test" / run_id
    assert (killed / transfer_module.SOURCE_PHASE_FILE).is_file() and not (killed / "metrics.json").exists()
    spy = PhaseSpy(original)
    monkeypatch.setattr(transfer_module, "train_tagger", spy)
    run_experiment(read_experiment(path), tmp_path / "killed", corpora, echo=lambda line: None, cache=cache)
    assert [call["sentences"] for call in spy.calls] == [8]  # the target phase only: the source phase is not trained again
    assert same_weights(model_weights(killed / "model.pt"), model_weights(whole / "model.pt"))
    resumed, uninterrupted = (read_runs(folder)[0].metrics for folder in (killed, whole))
    assert resumed["test"] == uninterrupted["test"] and resumed["history"] == uninterrupted["history"]
    assert {key: value for key, value in resumed["transfer_details"]["source_phase"].items() if key != "seconds"} == \
           {key: value for key, value in uninterrupted["transfer_details"]["source_phase"].items() if key != "seconds"}
    assert not (killed / transfer_module.SOURCE_PHASE_FILE).exists()


def test_a_mapped_type_no_source_sentence_holds_stops_the_run(corpora, tmp_path):
    path = experiment(tmp_path, f"{{from: {SOURCES}, types: {{PER: pers, OTH: work}}, modes: [joint]}}")
    with pytest.raises(FlairsuiteError) as raised:
        run_experiment(read_experiment(path), tmp_path / "home", corpora, echo=lambda line: None, cache=tmp_path / "cache")
    assert str(raised.value) == ("comm/word/transfer-joint/map-crf/seed-1: transfer.types: no entity of type 'OTH' in the sources read "
                                 "(sturm, germeval14 (dev+test)): remove it from transfer.types or add a source that has it")
