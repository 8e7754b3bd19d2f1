"""`flairsuite evaluate` on a tiny trained tagger and an own corpus folder: the scores equal seqeval's on the tags it
writes, the tags equal `predict`'s, and bad requests are one line."""

import shutil
from pathlib import Path

import flair
import pytest
import torch
from click.testing import CliRunner
from conftest import one_error_line
from flair.data import Dictionary, Sentence
from seqeval.metrics import classification_report
from seqeval.scheme import IOB2, Entities
from test_predict import labeled, tiny_embeddings, train

from flairsuite.cli import cli
from flairsuite.inference.raw_tags import tag
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.inference.tagger import torch_threads
from flairsuite.models.registry import build_tagger


def column_lines(sentence: Sentence) -> str:
    tags = ["O"] * len(sentence)
    for span in sentence.get_spans("ner"):
        first = span.tokens[0].idx - 1
        tags[first : first + len(span)] = [f"B-{span.tag}"] + [f"I-{span.tag}"] * (len(span) - 1)
    return "\n".join(f"{token.text} {found}" for token, found in zip(sentence, tags))


@pytest.fixture(scope="module")
def model_and_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A Map-CRF trained a little on the template sentences, and a corpus folder whose test split holds unseen ones
    plus a sentence with a type the model never learned (`work`)."""
    folder = tmp_path_factory.mktemp("evaluate")
    flair.set_seed(1)
    dictionary = Dictionary(add_unk=False)
    for kind in ("pers", "place"):
        dictionary.add_item(kind)
    dictionary.span_labels = True
    with torch_threads(1):
        model = train(build_tagger("map-crf", tiny_embeddings(folder), dictionary, "ner"), steps=60)
    model.save(folder / "model.pt")
    corpus = folder / "letters"
    corpus.mkdir()
    (corpus / "train.txt").write_text("\n\n".join(column_lines(labeled(i)) for i in range(20)) + "\n", encoding="utf-8")
    (corpus / "dev.txt").write_text("\n\n".join(column_lines(labeled(i)) for i in range(20, 23)) + "\n", encoding="utf-8")
    test = [column_lines(labeled(i)) for i in range(23, 33)] + ["Anna B-pers\nlas I-pers\nFaust B-work\n. O"]
    (corpus / "test.txt").write_text("\n\n".join(test) + "\n", encoding="utf-8")
    return folder / "model.pt", corpus


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_scores_are_seqevals_on_the_tags_it_writes(model_and_corpus, tmp_path):
    model, corpus = model_and_corpus
    result = run("evaluate", str(model), str(corpus), "--predictions", str(tmp_path / "p.tsv"))
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in (tmp_path / "p.tsv").read_text(encoding="utf-8").split("\n\n")[0].splitlines()]
    sentences = [[line.split("\t") for line in block.splitlines()] for block in (tmp_path / "p.tsv").read_text(encoding="utf-8").strip().split("\n\n")]
    gold, predicted = [[row[1] for row in s] for s in sentences], [[row[2] for row in s] for s in sentences]
    assert len(sentences) == 11 and rows[0][0] == "Am"
    # the tags are the model's own on the corpus tokens as they stand
    tokens = [[row[0] for row in s] for s in sentences]
    assert predicted == [[found for found, _ in s] for s in tag(load_tagger(model), [Sentence(t) for t in tokens], True, None)]
    report = classification_report(gold, predicted, mode="strict", scheme=IOB2, output_dict=True, zero_division=0)
    micro = report["micro avg"]
    assert f"| **all (micro)** | {micro['precision'] * 100:.2f} | {micro['recall'] * 100:.2f} | **{micro['f1-score'] * 100:.2f}** |" in result.output
    assert f"| pers | {report['pers']['precision'] * 100:.2f} | {report['pers']['recall'] * 100:.2f} |" in result.output
    assert "| work | 0.00 | 0.00 | 0.00 | 1 |" in result.output
    assert "warning: the model never learned type 'work' (1 in test): every one is a miss" in result.output
    assert "test (test.txt): 11 sentences" in result.output


@pytest.mark.parametrize("fmt, kind", [("webanno", "webanno"), ("conll", "column"), ("jsonl", "jsonl")])
def test_predictions_for_annotation_tools_read_back_as_the_corpus_tokens_and_predicted_spans(model_and_corpus, tmp_path, fmt, kind):
    from collections import Counter

    from flair.data import get_spans_from_bio

    from flairsuite.corpora.formats import read_tagged
    from flairsuite.corpora.registry import FormatSpec

    model, corpus = model_and_corpus
    assert run("evaluate", str(model), str(corpus), "--predictions", str(tmp_path / "p.tsv")).exit_code == 0
    result = run("evaluate", str(model), str(corpus), "--predictions", str(tmp_path / f"p.{fmt}"), "--format", fmt)
    assert result.exit_code == 0, result.output
    sentences = [[line.split("\t") for line in block.splitlines()] for block in (tmp_path / "p.tsv").read_text(encoding="utf-8").strip().split("\n\n")]
    expected = []
    for rows in sentences:  # the predicted tags as Flair (and predict) read spans from them: an I- after O starts one
        tags = ["O"] * len(rows)
        for indices, _, kind_found in get_spans_from_bio([row[2] for row in rows], [1.0] * len(rows)):
            tags[indices[0] : indices[-1] + 1] = [f"B-{kind_found}"] + [f"I-{kind_found}"] * (len(indices) - 1)
        expected.append(tags)
    read = list(read_tagged(tmp_path / f"p.{fmt}", FormatSpec(kind=kind), "utf-8", Counter()))
    assert [s.tokens for s in read] == [[row[0] for row in rows] for rows in sentences]
    assert [s.tags for s in read] == expected and any(tag != "O" for tags in expected for tag in tags)


def test_a_predictions_format_needs_predictions(model_and_corpus):
    model, corpus = model_and_corpus
    assert one_error_line(run("evaluate", str(model), str(corpus), "--format", "webanno")) == (
        "Error: --format webanno is the format of --predictions: give --predictions FILE too"
    )


def test_only_the_scored_split_need_be_there_and_one_file_is_that_split(model_and_corpus, tmp_path):
    model, corpus = model_and_corpus
    batch = tmp_path / "new-batch"
    batch.mkdir()
    shutil.copy(corpus / "test.txt", batch / "letters-1923.txt")
    whole = run("evaluate", str(model), str(corpus))
    alone = run("evaluate", str(model), str(batch / "letters-1923.txt"))  # one annotated file, no train or dev beside it
    assert alone.exit_code == 0, alone.output
    assert "letters-1923 test (letters-1923.txt): 11 sentences" in alone.output
    table = [line for line in whole.output.splitlines() if line.startswith("| ")]
    assert table == [line for line in alone.output.splitlines() if line.startswith("| ")]  # the same tokens, the same scores
    missing = one_error_line(run("evaluate", str(model), str(batch), "--split", "dev"))
    assert f"{batch}: no dev file" in missing
    (batch / "train-notes.txt").write_text("not a corpus file\n", encoding="utf-8")  # beside the file: never read
    assert run("evaluate", str(model), str(batch / "letters-1923.txt")).exit_code == 0
    overwrite = one_error_line(run("evaluate", str(model), str(batch / "letters-1923.txt"), "--predictions", str(batch / "letters-1923.txt")))
    assert "is a file of the corpus" in overwrite and (batch / "letters-1923.txt").read_text() == (corpus / "test.txt").read_text()
    assert "no such file or folder" in one_error_line(run("evaluate", str(model), str(batch / "gone.txt")))
    empty = batch / "all-outside.txt"
    empty.write_text("Anna O\nlas O\n. O\n", encoding="utf-8")
    assert "no entity tag at all, only O" in one_error_line(run("evaluate", str(model), str(empty)))  # nothing to score


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--option", "task=pos"), "predicts entity spans, and letters is a pos corpus"),
        (("--entity-fix", "--option", "task=pos"), "predicts entity spans, and letters is a pos corpus"),
    ],
)
def test_bad_requests_are_one_line(model_and_corpus, extra, message):
    model, corpus = model_and_corpus
    assert message in one_error_line(run("evaluate", str(model), str(corpus), *extra))
    unknown = run("evaluate", str(model), str(corpus), "--split", "validation")
    assert unknown.exit_code == 2 and "'validation' is not one of 'train', 'dev', 'test'" in unknown.output


def test_a_missing_model_is_one_line(model_and_corpus, tmp_path):
    _, corpus = model_and_corpus
    assert "model file not found" in one_error_line(run("evaluate", str(tmp_path / "none.pt"), str(corpus)))


def test_a_pos_tagger_is_scored_by_token_accuracy(tmp_path):
    words = {"Anna": "PROPN", "liest": "VERB", "Otto": "PROPN", "schreibt": "VERB", ".": "PUNCT"}
    texts = ["Anna liest .", "Otto schreibt .", "Anna schreibt .", "Otto liest ."]
    sentences = []
    for text in texts * 5:
        sentence = Sentence(text)
        for token in sentence:
            token.add_label("upos", words[token.text])
        sentences.append(sentence)
    dictionary = Dictionary(add_unk=False)
    for upos in sorted(set(words.values())):
        dictionary.add_item(upos)
    flair.set_seed(1)
    with torch_threads(1):
        model = build_tagger("map", tiny_embeddings(tmp_path), dictionary, "upos")
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        for _ in range(40):
            loss, count = model.forward_loss(sentences)
            optimizer.zero_grad()
            (loss / count).backward()
            optimizer.step()
    model.save(tmp_path / "pos.pt")
    test = tmp_path / "test.conllu"
    rows = ["# sent_id = 1", "1\tAnna\tAnna\tPROPN\t_\t_\t0\troot\t_\t_", "2\tliest\tlesen\tVERB\t_\t_\t1\tdep\t_\t_", "3\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_",
            "", "# sent_id = 2", "1\tOtto\tOtto\tDET\t_\t_\t0\troot\t_\t_", "2\t.\t.\tPUNCT\t_\t_\t1\tpunct\t_\t_"]
    test.write_text("\n".join(rows) + "\n\n", encoding="utf-8")
    result = run("evaluate", str(tmp_path / "pos.pt"), str(test), "--input-format", "conllu", "--label", "3", "--option", "task=pos")
    assert result.exit_code == 0, result.output
    assert "| **all** | **80.00** | 5 |" in result.output  # Otto is tagged PROPN, the file says DET: 4 of 5 right
    assert "| DET | 0.00 | 1 |" in result.output and "warning: the model never learned tag 'DET' (1 in test)" in result.output
    assert "entity" not in result.output
    spans = one_error_line(run("evaluate", str(tmp_path / "pos.pt"), str(test), "--input-format", "conllu", "--label", "3", "--option", "task=pos",
                               "--predictions", str(tmp_path / "pos.tsv"), "--format", "webanno"))
    assert spans.startswith("Error: --format webanno writes entity spans, and test is a pos corpus: use --format column")


def test_per_type_scores_count_the_entities_found_as_strict_iob2_does():
    from flairsuite.tagging.scoring import strict_scores

    gold = [["B-PER", "I-PER", "O", "B-LOC", "O"], ["B-ORG", "O", "B-PER"]]
    found = [["B-PER", "I-PER", "B-LOC", "B-LOC", "I-ORG"], ["I-ORG", "B-MISC", "B-PER"]]  # an I- without its B- is no entity
    per_type = strict_scores(gold, found)["per_type"]
    assert {name: (s["support"], s["predicted"]) for name, s in per_type.items()} == {"PER": (2, 2), "LOC": (1, 2), "ORG": (1, 0), "MISC": (0, 1)}
    for s in per_type.values():  # right = precision x found = recall x gold
        assert round(s["precision"] * s["predicted"]) == round(s["recall"] * s["support"])


def test_by_seen_splits_recall_by_the_entities_of_train(model_and_corpus, tmp_path):
    """The line of --by-seen equals the counts made here from the tags it wrote and the train file, by seqeval's chunks."""
    model, corpus = model_and_corpus
    result = run("evaluate", str(model), str(corpus), "--by-seen", "--predictions", str(tmp_path / "p.tsv"))
    assert result.exit_code == 0, result.output

    def chunks(blocks: list[list[list[str]]], column: int) -> set[tuple[int, int, int, str]]:
        tags = [[row[column] for row in block] for block in blocks]
        return {(e.sent_id, e.start, e.end, e.tag) for s in Entities(tags, IOB2).entities for e in s}

    def blocks(path: Path, sep: str) -> list[list[list[str]]]:
        return [[line.split(sep) for line in block.splitlines()] for block in path.read_text(encoding="utf-8").strip().split("\n\n")]

    train = blocks(corpus / "train.txt", " ")
    known = {(tuple(row[0] for row in train[s][a:b]), kind) for s, a, b, kind in chunks(train, 1)}
    test = blocks(tmp_path / "p.tsv", "\t")
    gold, found = chunks(test, 1), chunks(test, 2)

    def is_known(chunk: tuple[int, int, int, str]) -> bool:
        s, a, b, kind = chunk
        return (tuple(row[0] for row in test[s][a:b]), kind) in known

    seen = {c for c in gold if is_known(c)}
    new = gold - seen
    assert seen and new  # the test split holds both: template names from train and the unseen `Faust`
    wrong = found - gold
    expected = (f"recall on entities seen in train (same tokens and type): {100 * len(seen & found) / len(seen):.1f} % of {len(seen)}; "
                f"on new ones: {100 * len(new & found) / len(new):.1f} % of {len(new)}; false positives: "
                f"{sum(map(is_known, wrong))} with a training entity's tokens and type, {len(wrong) - sum(map(is_known, wrong))} other")
    assert expected in result.output.splitlines()
    assert "recall on entities seen" not in run("evaluate", str(model), str(corpus)).output  # only when asked


def test_by_seen_needs_a_train_split_and_entities(model_and_corpus, tmp_path):
    model, corpus = model_and_corpus
    alone = tmp_path / "letters-1923.txt"
    shutil.copy(corpus / "test.txt", alone)
    assert run("evaluate", str(model), str(alone)).exit_code == 0  # without --by-seen the file alone is enough
    assert ("--by-seen compares with the train split, and letters-1923 has none here (its splits: test)"
            in one_error_line(run("evaluate", str(model), str(alone), "--by-seen")))
    folder = tmp_path / "batch"
    folder.mkdir()
    shutil.copy(corpus / "test.txt", folder / "test.txt")
    assert f"{folder}: no train file" in one_error_line(run("evaluate", str(model), str(folder), "--by-seen"))
    assert "a PoS corpus has none" in one_error_line(run("evaluate", str(model), str(corpus), "--by-seen", "--option", "task=pos"))


def test_by_seen_on_a_dev_share_compares_with_the_rest_of_train(model_and_corpus, tmp_path):
    """A corpus folder whose dev is a share of train (`--dev-fraction`): the entities of the dev sentences are new unless
    another training sentence holds them; here every sentence names its own person and place, so all of dev's are new."""
    model, corpus = model_and_corpus
    folder = tmp_path / "shared-dev"
    folder.mkdir()
    sentences = [f"Heute O\nkam O\nXaver{i} B-pers\nnach O\nOrt{i} B-place\n. O" for i in range(10)]
    (folder / "train.txt").write_text("\n\n".join(sentences) + "\n", encoding="utf-8")
    shutil.copy(corpus / "test.txt", folder / "test.txt")
    result = run("evaluate", str(model), str(folder), "--dev-fraction", "0.3", "--split", "dev", "--by-seen")
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("recall on entities seen"))
    assert "seen in train (same tokens and type): none in the split; on new ones:" in line and line.count(" of 6;") == 1
