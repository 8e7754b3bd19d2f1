"""`train-charlm --init`: a trained LM continued on other text (dictionary, hyper-parameters and weights from it, unseen
characters, the digest in the summary, kills and resumes), and `--exclude` cutting more corpora's dev/test sentences."""

import hashlib
import json
import math
import os
import signal
from pathlib import Path

import pytest
import torch
from conftest import invoke, one_error_line
from flair.models import LanguageModel
from test_charlm import SECRET, fixture_text, run_cli, train_args, wait_for_steps

from flairsuite.charlm.initial import extended_state
from flairsuite.charlm.settings import Hyper
from flairsuite.charlm.trainer import evaluate, evaluation_batches
from flairsuite.files import checkpoint
from flairsuite.rawtext.prepare import PreparedCorpus, prepare
from flairsuite.rawtext.settings import PrepareConfig

NEW_CHAR = "Ω"


def new_text(path: Path) -> Path:
    """Other text than the initial model's: other template sentences, with a character that model never saw."""
    lines = [f"{NEW_CHAR}{line.replace('in', 'bei')}" for line in fixture_text(300, seed=5).splitlines()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def init_args(text: Path, root: Path, out: Path, init: Path, max_chars: int, *more: str) -> list[str]:
    return [
        "train-charlm", "--init", str(init), "--name", "new", "--direction", "forward", "--corpus", str(text), "--corpora-dir", str(root),
        "--out", str(out), "--heldout-fraction", "0.1", "--threads", "1", "--max-chars", str(max_chars), *more,
    ]


@pytest.fixture
def corpus_root(tmp_path: Path) -> Path:
    """A corpora folder with a tiny Sturm set whose dev split holds test_charlm's SECRET (as test_charlm's fixture)."""
    root = tmp_path / "corpora"
    (root / "sturm").mkdir(parents=True)
    for split in ("train", "dev", "test"):
        tagged = "\n".join(f"{token} O" for token in (SECRET if split == "dev" else "Hallo").split()) + "\n\n"
        (root / "sturm" / f"{split}_sturm.conll").write_text(tagged, encoding="utf-8")
    return root


@pytest.fixture
def initial(tmp_path: Path, corpus_root: Path) -> Path:
    """A tiny trained forward LM, `tmp_path/init/de-forward` (--init names it by the prefix `tmp_path/init/de`)."""
    text = tmp_path / "raw.txt"
    text.write_text(fixture_text(), encoding="utf-8")
    process = run_cli(*train_args(text, corpus_root, tmp_path / "init", 12000))
    assert process.wait(timeout=300) == 0, process.stdout.read()
    return tmp_path / "init" / "de"


def finished(args: list[str]) -> str:
    process = run_cli(*args)
    output = process.stdout.read()
    assert process.wait(timeout=300) == 0, output
    return output


@pytest.mark.parametrize("new_chars", ["unk", "extend"])
def test_init_continues_the_model_with_its_dictionary_hyper_parameters_and_weights(initial, tmp_path, corpus_root, new_chars) -> None:
    text = new_text(tmp_path / "new.txt")
    output = finished(init_args(text, corpus_root, tmp_path / "out", initial, 6000, "--new-chars", new_chars))
    start = Path(f"{initial}-forward")
    before = json.loads((start / "summary.json").read_text())
    after = json.loads((tmp_path / "out" / "new-forward" / "summary.json").read_text())
    # the initial model's digest, hyper-parameters (no ramp, its last learning rate) and dictionary
    assert after["init"]["sha256"] == hashlib.sha256((start / "best-lm.pt").read_bytes()).hexdigest()
    assert after["init"]["chars_seen"] == before["chars_seen"]
    assert {key: after["hyper"][key] for key in ("hidden_size", "embedding_size", "batch_size", "sequence_length")} == {
        key: before["hyper"][key] for key in ("hidden_size", "embedding_size", "batch_size", "sequence_length")}
    assert after["hyper"]["ramp_chars"] == 0 and after["hyper"]["learning_rate"] == before["history"][-1]["lr"]
    old = LanguageModel.load_language_model(start / "best-lm.pt")
    new = LanguageModel.load_language_model(tmp_path / "out" / "new-forward" / "best-lm.pt")
    if new_chars == "unk":
        assert new.dictionary.idx2item == old.dictionary.idx2item
        assert after["corpus"]["unk_characters"]["occurrences"] >= 300 and after["corpus"]["added_characters"] == []
    else:
        assert new.dictionary.idx2item == [*old.dictionary.idx2item, NEW_CHAR.encode("utf-8")]
        assert after["corpus"]["added_characters"] == [NEW_CHAR]
    assert f"{len(after['corpus']['added_characters'])} added ({new_chars})" in output
    # the counters start afresh; the first point is the initial model on the new valid text, and training improved on it
    assert after["chars_seen"] >= 6000 and after["history"][0]["chars"] == 0 and after["history"][0]["initial"]
    prepared = after["corpus"]
    assert prepared["config"]["base_chars"] == [item.decode("utf-8") for item in old.dictionary.idx2item[1:]]
    assert after["valid_ppl"] < after["history"][0]["valid_ppl"] == pytest.approx(after["init"]["valid_ppl_here"], rel=1e-3)


def test_the_first_point_is_the_initial_model_on_the_new_valid_text(initial, tmp_path, corpus_root) -> None:
    text = new_text(tmp_path / "new.txt")
    finished(init_args(text, corpus_root, tmp_path / "out", initial, 2000))
    summary = json.loads((tmp_path / "out" / "new-forward" / "summary.json").read_text())
    folders = [p.parent for p in (Path(os.environ["FLAIRSUITE_HOME"]) / "cache" / "prepared").glob("*/meta.json")]
    (folder,) = [f for f in folders if json.loads((f / "meta.json").read_text())["config"].get("base_chars")]
    old = LanguageModel.load_language_model(Path(f"{initial}-forward") / "best-lm.pt")
    hyper = Hyper(**summary["hyper"])
    loss = evaluate(old, evaluation_batches(PreparedCorpus(folder).array("valid"), hyper, True), hyper.sequence_length)
    assert summary["history"][0]["valid_ppl"] == pytest.approx(math.exp(loss), rel=1e-5)
    assert summary["history"][0]["lr"] == summary["hyper"]["learning_rate"]


def test_architecture_options_and_a_folder_without_a_model_are_one_line_errors(initial, tmp_path, corpus_root) -> None:
    text = new_text(tmp_path / "new.txt")
    refused = invoke(*init_args(text, corpus_root, tmp_path / "out", initial, 2000, "--hidden-size", "8"))
    assert "has hidden_size 16; an initial model's architecture cannot change" in one_error_line(refused)
    empty = tmp_path / "empty-forward"
    empty.mkdir()
    missing = invoke(*init_args(text, corpus_root, tmp_path / "out", tmp_path / "empty", 2000))
    assert one_error_line(missing) == f"Error: --init {tmp_path / 'empty'}: {empty} holds no best-lm.pt to start from"
    nowhere = invoke(*init_args(text, corpus_root, tmp_path / "out", tmp_path / "nothing", 2000))
    assert "no model folder" in one_error_line(nowhere)
    unnamed = invoke(*[arg for arg in init_args(text, corpus_root, tmp_path / "out", initial, 2000) if arg not in ("--name", "new")])
    assert "needs --name" in one_error_line(unnamed)
    args = init_args(text, corpus_root, tmp_path / "out", initial, 2000)
    textless = invoke(*args[: args.index("--corpus")], *args[args.index("--corpus") + 2 :])
    assert "needs --corpus: the text to continue the models on" in one_error_line(textless)
    assert not (tmp_path / "out" / "new-forward").exists()


def test_sigkill_then_resume_of_an_init_run_continues_exactly(initial, tmp_path, corpus_root) -> None:
    text = new_text(tmp_path / "new.txt")
    finished(init_args(text, corpus_root, tmp_path / "a", initial, 24000))
    killed = run_cli(*init_args(text, corpus_root, tmp_path / "b", initial, 10**9))
    wait_for_steps(tmp_path / "b" / "new-forward" / "checkpoint.pt", 40, killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    finished([*init_args(text, corpus_root, tmp_path / "b", initial, 24000), "--resume"])
    a = json.loads((tmp_path / "a" / "new-forward" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "new-forward" / "summary.json").read_text())
    assert (a["steps"], a["chars_seen"]) == (b["steps"], b["chars_seen"]) and a["steps"] >= 24000 // 80
    assert b["valid_ppl"] == pytest.approx(a["valid_ppl"], rel=1e-5) and a["init"] == b["init"]
    weights_a = checkpoint.load(tmp_path / "a" / "new-forward" / "checkpoint.pt")["model"]
    weights_b = checkpoint.load(tmp_path / "b" / "new-forward" / "checkpoint.pt")["model"]
    assert all(torch.allclose(weights_a[key], weights_b[key], atol=1e-6) for key in weights_a)


def test_a_checkpoint_of_another_initial_model_is_not_resumed(initial, tmp_path, corpus_root) -> None:
    text = new_text(tmp_path / "new.txt")
    killed = run_cli(*init_args(text, corpus_root, tmp_path / "b", initial, 10**9))
    wait_for_steps(tmp_path / "b" / "new-forward" / "checkpoint.pt", 5, killed)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    other = tmp_path / "other" / "de-forward"
    other.mkdir(parents=True)
    for name in ("best-lm.pt", "summary.json"):  # the same model saved again: other bytes would be another digest
        (other / name).write_bytes(Path(f"{initial}-forward", name).read_bytes())
    model = torch.load(other / "best-lm.pt", weights_only=False)
    model["state_dict"]["decoder.bias"] = model["state_dict"]["decoder.bias"] + 0.5
    torch.save(model, other / "best-lm.pt")
    refused = invoke(*init_args(text, corpus_root, tmp_path / "b", tmp_path / "other" / "de", 10**9), "--resume")
    assert "init differ" in one_error_line(refused)


def test_new_rows_start_as_the_unk_row() -> None:
    state = {"encoder.weight": torch.arange(6.0).view(3, 2), "decoder.weight": torch.arange(9.0).view(3, 3),
             "decoder.bias": torch.tensor([7.0, 8.0, 9.0]), "rnn.weight_hh_l0": torch.ones(4, 3)}
    wider = extended_state(state, 5)
    assert wider["encoder.weight"].tolist() == [[0, 1], [2, 3], [4, 5], [0, 1], [0, 1]]
    assert wider["decoder.bias"].tolist() == [7, 8, 9, 7, 7] and wider["decoder.weight"].shape == (5, 3)
    assert torch.equal(wider["rnn.weight_hh_l0"], state["rnn.weight_hh_l0"])


def raw_text_with(path: Path, sentence: str) -> tuple[Path, str]:
    """English fixture text with `sentence` inside its fourth line; the file and the line that follows the sentence."""
    lines = fixture_text(200).splitlines()
    lines[3] = f"{lines[3]} {sentence} {lines[4]}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, lines[4]


def prepared_splits(text: Path, root: Path, out: Path, exclude: tuple[str, ...]) -> str:
    """The English text prepared with `exclude`: its train, valid and test splits joined."""
    config = PrepareConfig(language="en", corpus=(str(text),), heldout_fraction=0.1, exclude=exclude)
    corpus = prepare(config, root, out)
    return "".join(corpus.text_path(split).read_text(encoding="utf-8") for split in ("train", "valid", "test"))


def test_exclude_cuts_the_dev_and_test_sentences_of_named_corpora(tmp_path, corpus_root) -> None:
    """--exclude: a registered dataset of another language than the text's, and an own corpus folder (dev: its own file)."""
    own = tmp_path / "letters"
    own.mkdir()
    mine = "Die Gräfin schrieb aus Lübeck an ihren Bruder ."
    for split, sentence in (("train", "Hallo Welt"), ("dev", mine), ("test", "Ganz andere Worte stehen hier nun .")):
        tags = [f"{token} {'B-LOC' if token in ('Lübeck', 'Welt') else 'O'}" for token in sentence.split()]
        (own / f"{split}.conll").write_text("\n".join(tags) + "\n\n", encoding="utf-8")
    sturm_dev = (corpus_root / "sturm" / "dev_sturm.conll").read_text().split()[::2]
    text, _ = raw_text_with(tmp_path / "raw.txt", mine)

    def prepared_text(*exclude: str) -> str:
        return prepared_splits(text, corpus_root, tmp_path / "prepared", exclude)

    kept = prepared_text()
    assert mine in kept and " ".join(sturm_dev) in kept  # English text: the German sets are not cut by default
    cut = prepared_text("sturm", str(own))
    assert mine not in cut and " ".join(sturm_dev) not in cut
    assert len(kept) - len(cut) == pytest.approx(len(mine) + len(" ".join(sturm_dev)), abs=4)
    bad = invoke("train-charlm", "--lang", "en", "--corpus", str(text), "--corpora-dir", str(corpus_root), "--exclude", "no-such-set",
                 "--out", str(tmp_path / "out"))
    assert "--exclude no-such-set: neither a labeled dataset of the registry nor a corpus folder" in one_error_line(bad)


def test_exclude_reads_an_own_corpus_in_another_format_from_its_entry(tmp_path, corpus_root) -> None:
    """--exclude '{path: ..., format: webanno}': the dev and test sentences of an INCEpTION export (the walk-through's
    WebAnno TSV letters) are cut out as an experiment's entry reads them; a mapping without a path is one line."""
    from flairsuite.corpora.labeled import read_splits
    from flairsuite.corpora.own import own_corpus

    export = Path(__file__).resolve().parent.parent / "experiments" / "walkthrough" / "annotations" / "inception"
    spec = own_corpus({"path": str(export), "format": "webanno"}, Path.cwd())
    dev = [" ".join(s.tokens) for s in read_splits(spec, corpus_root, ["dev"])["dev"].sentences if len(s.tokens) >= 8]
    text, after = raw_text_with(tmp_path / "raw.txt", dev[0])
    assert dev[0] in prepared_splits(text, corpus_root, tmp_path / "prepared", ())
    cut = prepared_splits(text, corpus_root, tmp_path / "prepared", (f"{{path: {export}, format: webanno}}",))
    assert dev[0] not in cut and after in cut
    bad = invoke("train-charlm", "--lang", "en", "--corpus", str(text), "--corpora-dir", str(corpus_root), "--exclude", "{format: webanno}",
                 "--out", str(tmp_path / "out"))
    assert "--exclude {format: webanno}: a corpus written as a mapping needs its path" in one_error_line(bad)
    missing = invoke("train-charlm", "--lang", "en", "--corpus", str(text), "--corpora-dir", str(corpus_root),
                     "--exclude", "{path: nowhere/, format: webanno}", "--out", str(tmp_path / "out"))
    assert one_error_line(missing).startswith("Error: --exclude {path: nowhere/, format: webanno}: ")


LONG_S = "ſ"  # long s: in the own texts, never in the initial model's text


def test_an_init_run_reports_the_characters_your_texts_lose(initial, tmp_path, corpus_root) -> None:
    """With --corpus the dictionary is compared with the user's texts, not the registered corpora: a row per path as given
    (a file, a folder of .txt.gz), read as the run reads them (a word broken at a line end by ⸗ joined: no ⸗ left)."""
    import gzip

    lines = [f"{LONG_S}{line}" for index, line in enumerate(fixture_text(300, seed=5).splitlines()) if index != 7]  # no SECRET
    own = tmp_path / "own.txt"
    own.write_text("\n".join(lines) + "\n", encoding="utf-8")
    letters = tmp_path / "letters"
    letters.mkdir()
    (letters / "a.txt.gz").write_bytes(gzip.compress(f"Anna be{LONG_S}ucht Ber⸗\nlin .\nFranz grüßt Wien .\n".encode()))
    output = finished(init_args(own, corpus_root, tmp_path / "out", initial, 2000, "--corpus", str(letters)))
    summary = json.loads((tmp_path / "out" / "new-forward" / "summary.json").read_text())
    assert "labeled_coverage" not in summary
    mine, folder = summary["text_coverage"]
    assert (mine["dataset"], mine["split"], folder["dataset"], folder["split"]) == (str(own), "text", str(letters), "text")
    assert (mine["characters"], mine["unk"], mine["unk_distinct"], mine["unseen"]) == (len("".join("".join(lines).split())), 299, 1, 0)
    assert mine["unk_examples"] == [[LONG_S, 299]] and folder["unk_examples"] == [[LONG_S, 1]]
    assert folder["characters"] == len("AnnabeſuchtBerlin.FranzgrüßtWien.")
    assert "characters of your texts outside the LM's dictionary (<unk>) and never in its training text:" in output
    assert "characters of the labeled corpora" not in output
    row = next(line for line in output.splitlines() if line.split()[:2] == [str(own), "text"])
    assert row.split()[2:] == [f"{mine['characters']:,}", f"{mine['unk_rate'] * 100:.3f}", "1", "0.000", f"{LONG_S}×299"]
