"""`flairsuite charlm-perplexity`: an LM's perplexity per character on a tagging corpus's sentences, on the committed
Danish and Chinese pairs: windowed evaluation equals one direct call of the LM, unknown characters are counted, and
the text is read as the suite's embedding reads it."""

import math
import random
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import invoke, one_error_line

from flairsuite.charlm.perplexity import character_ids, lm_file, sentences_text, text_perplexity

CHARLM = Path(__file__).resolve().parent.parent / "charlm"
DANISH = ("Søren Kierkegaard blev født i København i 1813 , og han døde samme sted i 1855 . "
          "Han skrev mange bøger om tro , angst og fortvivlelse , og de læses stadig over hele verden . ") * 3


@pytest.fixture(scope="module")
def danish_lms():
    from flair.models import LanguageModel

    return {d: LanguageModel.load_language_model(CHARLM / f"da-{d}" / "best-lm.pt") for d in ("forward", "backward")}


def direct_perplexity(model, text: str, characters: int) -> float:
    """One call of the LM over the first `characters` inputs of `text` in its direction, state from zero."""
    ids, _ = character_ids(text, model.dictionary.item2idx)
    ids = torch.from_numpy(ids if model.is_forward_lm else ids[::-1].copy())
    model.eval()
    with torch.no_grad():
        output, _, _ = model(ids[:characters].unsqueeze(1), model.init_hidden(1))
        loss = F.cross_entropy(output.view(-1, output.size(-1)), ids[1 : characters + 1])
    return math.exp(loss.item())


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_windowed_perplexity_equals_one_direct_call(danish_lms, direction: str) -> None:
    model = danish_lms[direction]
    text = DANISH[:501]  # 500 inputs: two windows of 250 in one stream, the state carried between them
    result = text_perplexity(model, text)
    assert (result.characters, result.scored, result.unknown) == (501, 500, 0)
    assert result.perplexity == pytest.approx(direct_perplexity(model, text, 500), rel=1e-4)
    assert result.perplexity < 12  # Danish prose, read by a Danish LM


def test_text_the_lm_never_saw_scores_far_worse(danish_lms) -> None:
    model = danish_lms["forward"]
    characters = list(DANISH)
    random.Random(1).shuffle(characters)  # the same characters out of order, the same order every run
    shuffled = "".join(characters)
    assert text_perplexity(model, shuffled).perplexity > 4 * text_perplexity(model, DANISH).perplexity


def test_unknown_characters_read_as_unk_and_counted(danish_lms) -> None:
    model = danish_lms["forward"]
    item2idx = model.dictionary.item2idx
    ids, unknown = character_ids("sne ☃ og ☃ is", item2idx)
    assert unknown == 2 and list(ids).count(item2idx[b"<unk>"]) == 2
    assert text_perplexity(model, DANISH + "☃☃").unknown_rate == pytest.approx(2 / (len(DANISH) + 2))


def test_text_is_read_as_the_embedding_reads_it() -> None:
    sentences = [["Anna", "skrev", "."], ["Nej", "!"]]
    assert sentences_text(sentences, unspaced=False) == "Anna skrev .\nNej !\n"
    assert sentences_text([["北", "京"], ["好"]], unspaced=True) == "北京\n好\n"
    assert lm_file(CHARLM / "zh-forward").unspaced and not lm_file(CHARLM / "da-forward").unspaced


def test_command_prints_own_and_corpus_perplexity_and_refuses_a_missing_lm(tmp_path: Path) -> None:
    corpus = tmp_path / "breve"
    corpus.mkdir()
    sentences = [DANISH.split(" . ")[0].split(), DANISH.split(" . ")[1].split()]
    tagged = [[f"{token} {'B-PER' if token in ('Søren', 'Han') else 'O'}" for token in tokens] for tokens in sentences]
    text = "\n\n".join("\n".join(lines) for lines in tagged * 4) + "\n"
    for split in ("train", "dev", "test"):
        (corpus / f"{split}.txt").write_text(text, encoding="utf-8")
    result = invoke("charlm-perplexity", str(CHARLM / "da-forward"), str(corpus), "--split", "dev", "--threads", "1")
    assert result.exit_code == 0, result.output
    row = result.output.strip().splitlines()[-1].split()
    own = lm_file(CHARLM / "da-forward").own_valid_perplexity
    assert float(row[1]) == pytest.approx(own, abs=1e-3) and row[-3] == f"{len(sentences_text(sentences * 4, False)):,}"
    assert 1 < float(row[-1]) < 20
    missing = invoke("charlm-perplexity", str(tmp_path / "nowhere"), str(corpus), "--split", "dev")
    assert "no character LM there" in one_error_line(missing)
    (tmp_path / "broken.pt").write_text("not a model", encoding="utf-8")
    broken = invoke("charlm-perplexity", str(tmp_path / "broken.pt"), str(corpus), "--split", "dev")
    assert "broken.pt: not a Flair character LM" in one_error_line(broken)



def test_one_annotated_file_is_the_split_splits_names(tmp_path: Path) -> None:
    tokens = DANISH.split(" . ")[0].split()
    file = tmp_path / "brev.conll"
    file.write_text("\n".join(f"{token} {'B-PER' if token == 'Søren' else 'O'}" for token in tokens) + "\n", encoding="utf-8")
    for splits, split in [((), "test"), (("--split", "dev"), "dev")]:
        result = invoke("charlm-perplexity", str(CHARLM / "da-forward"), str(file), *splits, "--threads", "1")
        assert result.exit_code == 0, result.output
        row = result.output.strip().splitlines()[-1].split()
        assert row[2:4] == ["brev", split] and row[4] == f"{len(sentences_text([tokens], False)):,}"
    both = invoke("charlm-perplexity", str(CHARLM / "da-forward"), str(file), "--split", "dev,test")
    assert one_error_line(both) == f"Error: {file} is one annotated file, so one split: give --split one name (or none: test)"


@pytest.mark.parametrize(
    "summary, message",
    [("[1, 2]", "not a JSON object (a train-charlm summary)"), ('{"valid_ppl": "abc"}', 'valid_ppl must be a positive number (found "abc")')],
)
def test_a_broken_summary_beside_the_lm_is_one_line(tmp_path: Path, summary: str, message: str) -> None:
    folder = tmp_path / "lm"
    folder.mkdir()
    (folder / "best-lm.pt").write_bytes((CHARLM / "da-forward" / "best-lm.pt").read_bytes())
    (folder / "summary.json").write_text(summary, encoding="utf-8")
    corpus = tmp_path / "brev.conll"
    corpus.write_text("Søren B-PER\n", encoding="utf-8")
    result = invoke("charlm-perplexity", str(folder), str(corpus))
    assert one_error_line(result) == f"Error: {folder / 'summary.json'}: {message}"
