"""Document context for character LMs (`charlm:NAME-DIRECTION@contextN`): each sentence read with up to N characters of
the neighbouring sentences of its document, the token vectors cut out of that run (FLERT for character LMs)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import train_tiny_embeddings, write_file
from flair.data import Sentence

from flairsuite.corpora.readers import read_column
from flairsuite.corpora.registry import FormatSpec
from flairsuite.corpora.segmentation import split_text
from flairsuite.embeddings import context_chars, parse, resolve
from flairsuite.embeddings.charlm import CharLMFeatures
from flairsuite.embeddings.context import ContextFlairEmbeddings, context_text
from flairsuite.errors import FlairsuiteError
from flairsuite.tagging.cache import cache_path
from flairsuite.tagging.data import LabeledSplit

DOCUMENT = ["Am Montag besuchte Anna die Stadt Berlin .", "Sie sagte das dem König .", "Dann verließ Karl die Stadt Wien ."]
PLAIN = [sentence.replace(" .", ".") for sentence in DOCUMENT]  # as a user writes them


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """Tiny forward and backward German LMs (`charlm/de-*`), trained by the CLI."""
    return train_tiny_embeddings(tmp_path_factory.mktemp("context"), "both")


def linked(texts: list[str]) -> list[Sentence]:
    sentences = [Sentence(text.split()) for text in texts]
    Sentence.set_context_for_sentences(sentences)
    return sentences


def vectors(embedding, sentences: list[Sentence]) -> list[torch.Tensor]:
    embedding.embed(sentences)
    found = [torch.stack([token.get_embedding(embedding.get_names()) for token in sentence]) for sentence in sentences]
    for sentence in sentences:
        sentence.clear_embeddings()
    return found


def test_the_option_is_parsed_and_checked(home: Path) -> None:
    assert parse("charlm:de-forward@context500") == ("charlm", "de-forward@context500")
    assert context_chars("charlm:de-forward@context500") == 500 and context_chars("charlm:de-forward") == 0
    assert context_chars("fasttext:de") == 0
    for bad in ("charlm:de-forward@context0", "charlm:de-forward@contextX", "charlm:de-forward@mean", "charlm:de-forward@context5@context9"):
        with pytest.raises(FlairsuiteError, match="@contextN"):
            parse(bad)
    embedding = resolve("charlm:de-forward@context40", home)
    assert isinstance(embedding, ContextFlairEmbeddings) and embedding.context_chars == 40
    assert embedding.lm.hidden_size == resolve("charlm:de-forward", home).lm.hidden_size  # the same LM file


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_vectors_are_cut_out_of_one_run_over_the_neighbours_and_the_sentence(home: Path, direction: str) -> None:
    embedding = resolve(f"charlm:de-{direction}@context1000", home)  # more than the whole document
    got = vectors(embedding, linked(DOCUMENT))[1]
    whole = " ".join(DOCUMENT)  # the neighbours before and after, and the middle sentence, as one text
    with torch.no_grad():
        states = embedding.lm.get_representation([whole], "\n", " ")[:, 0, :]
    middle, before = DOCUMENT[1].split(), len(DOCUMENT[0]) + 1
    ends = [before + len(" ".join(middle[: k + 1])) for k in range(len(middle))]  # each token's end in `whole`
    starts = [end - len(token) for end, token in zip(ends, middle)]
    # forward: the state after the space that follows the token; backward: after the space before it, read leftwards
    rows = [1 + end for end in ends] if direction == "forward" else [1 + len(whole) - start for start in starts]
    assert torch.allclose(got, states[rows], atol=1e-5)
    alone = vectors(resolve(f"charlm:de-{direction}", home), [Sentence(DOCUMENT[1].split())])[0]
    assert not torch.allclose(got, alone, atol=1e-3)


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_the_fast_path_equals_flair(home: Path, direction: str) -> None:
    embedding = resolve(f"charlm:de-{direction}@context30", home)
    expected = torch.cat(vectors(embedding, linked(DOCUMENT)))
    with torch.inference_mode():
        got = CharLMFeatures(embedding, quantize=False)(linked(DOCUMENT))
    assert torch.allclose(got, expected, atol=1e-5)


def test_n_caps_the_characters_on_each_side(home: Path) -> None:
    forward, backward = resolve("charlm:de-forward@context12", home), resolve("charlm:de-backward@context12", home)
    sentences = linked(DOCUMENT)
    before, _ = context_text(forward, sentences[1], 12)
    _, after = context_text(backward, sentences[1], 12)
    assert before == DOCUMENT[0][-11:] + " " and after == " " + DOCUMENT[2][:11]
    # what lies farther than N characters away changes nothing; what lies within N does
    far = linked(["Ganz anders " + DOCUMENT[0], *DOCUMENT[1:]])
    near = linked([DOCUMENT[0][:-5] + "Köln .", *DOCUMENT[1:]])
    reference = vectors(forward, linked(DOCUMENT))[1]
    assert torch.equal(vectors(forward, far)[1], reference)
    assert not torch.allclose(vectors(forward, near)[1], reference, atol=1e-4)


def test_context_never_crosses_a_document_boundary(home: Path, tmp_path: Path) -> None:
    text = "-DOCSTART- O\n\n" + "".join(
        "\n".join(f"{token} O" for token in sentence.split()) + "\n\n" + ("-DOCSTART- O\n\n" if i == 0 else "")
        for i, sentence in enumerate(DOCUMENT))
    sentences = list(read_column(write_file(tmp_path / "docs.tsv", text), FormatSpec("column", docstart="-DOCSTART-"), "utf-8"))
    split = LabeledSplit.of(sentences)
    assert [" ".join(texts) for texts in split.texts] == DOCUMENT and split.starts == frozenset({1})
    forward, backward = resolve("charlm:de-forward@context1000", home), resolve("charlm:de-backward@context1000", home)
    in_documents = split.flair_sentences(context_chars=1000)
    assert in_documents[1].previous_sentence() is None and in_documents[0].next_sentence() is None
    alone = [Sentence(text.split()) for text in DOCUMENT]
    assert torch.equal(vectors(forward, in_documents)[1], vectors(forward, alone)[1])  # starts a document: nothing before it
    assert torch.equal(vectors(backward, in_documents)[0], vectors(backward, alone)[0])  # ends one: nothing after it
    assert not torch.allclose(vectors(forward, in_documents)[2], vectors(forward, alone)[2], atol=1e-4)
    # Flair's own document boundaries (its -DOCSTART- sentences) stop the walk too
    flair_document = linked(["-DOCSTART-", *DOCUMENT])
    flair_document[0].is_document_boundary = True
    assert context_text(forward, flair_document[1], 1000) == ("", "")


def test_a_sample_links_only_neighbours_in_the_file() -> None:
    from flairsuite.corpora.labeled import kept
    from flairsuite.corpora.readers import TaggedSentence

    sentences = [TaggedSentence(text.split(), ["O"] * len(text.split())) for text in DOCUMENT + ["Ende ."]]
    split = LabeledSplit.of(kept(sentences, [0, 1, 3]))
    assert split.starts == frozenset({2})
    built = split.flair_sentences(context_chars=1000)
    assert built[0].next_sentence() is built[1] and built[2].previous_sentence() is None


def test_the_cache_key_differs_by_n_and_by_documents(home: Path) -> None:
    split = LabeledSplit.of([_tagged(text) for text in DOCUMENT])
    keys = {cache_path(spec, split, home) for spec in ("charlm:de-forward", "charlm:de-forward@context250", "charlm:de-forward@context500")}
    assert len(keys) == 3
    split_in_two = LabeledSplit(split.texts, split.spaces, split.tags, frozenset({1}))
    assert cache_path("charlm:de-forward@context250", split_in_two, home) != cache_path("charlm:de-forward@context250", split, home)
    assert cache_path("charlm:de-forward", split_in_two, home) == cache_path("charlm:de-forward", split, home)  # no context: no change


def _tagged(text: str):
    from flairsuite.corpora.readers import TaggedSentence

    return TaggedSentence(text.split(), ["O"] * len(text.split()), whitespace_after=[True] * len(text.split()))


def test_predict_reads_the_neighbours_of_the_input_text(home: Path) -> None:
    embedding = resolve("charlm:de-forward@context200", home)
    found = split_text(" ".join(PLAIN))
    assert [s.to_tokenized_string() for s in found] == DOCUMENT and found[1].previous_sentence() is found[0]
    with torch.inference_mode():
        features = CharLMFeatures(embedding, quantize=False)
        in_text = features(found)
        alone = features(split_text(PLAIN[1]))
    middle = slice(len(found[0]), len(found[0]) + len(found[1]))
    assert not torch.allclose(in_text[middle], alone, atol=1e-4)


SPLITS = {"train": DOCUMENT * 4, "dev": DOCUMENT, "test": DOCUMENT}


def test_a_tagger_trained_with_context_reloads_and_predicts_with_it(home: Path, tmp_path: Path) -> None:
    for split, sentences in SPLITS.items():
        rows = "\n\n".join("\n".join(f"{t} {'B-place' if t in ('Berlin', 'Wien') else 'O'}" for t in s.split()) for s in sentences)
        write_file(tmp_path / "data" / "names" / f"{split}.tsv", rows + "\n")
    experiment = write_file(tmp_path / "context.yaml", """\
name: context
corpora: [{path: data/names/}]
embeddings: {pair: [charlm:de-forward@context200, charlm:de-backward@context200]}
taggers: [map-crf]
seeds: [1]
train: {max_epochs: 2}
""")
    env = {**os.environ, "FLAIRSUITE_HOME": str(home), "OMP_NUM_THREADS": "1"}
    command = Path(sys.executable).with_name("flairsuite")
    done = subprocess.run([str(command), "tag", str(experiment), "--threads", "1"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    model_path = home / "results" / "context" / "names" / "pair" / "map-crf" / "seed-1" / "model.pt"

    from flair.models import SequenceTagger

    loaded = SequenceTagger.load(model_path).embeddings
    parts = sorted(loaded.embeddings, key=lambda e: e.name)
    assert [type(e).__name__ for e in parts] == ["ContextFlairEmbeddings"] * 2 and {e.context_chars for e in parts} == {200}
    fresh = resolve("charlm:de-forward@context200", home)
    reloaded = next(e for e in parts if e.is_forward_lm)
    assert torch.allclose(torch.cat(vectors(reloaded, linked(DOCUMENT))), torch.cat(vectors(fresh, linked(DOCUMENT))))

    from flairsuite.inference.raw_tags import split, tag
    from flairsuite.inference.saved_tagger import load_tagger

    model = load_tagger(model_path)
    for fast in (True, False):  # the fast path and Flair's own predict read the same neighbours
        in_text = tag(model, split(" ".join(PLAIN[:2])), fast, None)[1]
        alone = tag(model, split(PLAIN[1]), fast, None)[0]
        assert [c for _, c in in_text] != pytest.approx([c for _, c in alone], abs=1e-6)
    done = subprocess.run([str(command), "predict", str(model_path), "-", "--format", "json"], input=" ".join(PLAIN), env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert [json.loads(line)["text"] for line in done.stdout.splitlines()] == PLAIN


def test_serve_links_each_document_and_retraining_reads_documents_as_they_are() -> None:
    from flairsuite.serve.engine import Tokens
    from flairsuite.serve.fit import Labeled, held_out, linked_sentences

    text = "Anna kam . Karl ging ."
    found, _ = Tokens(text, [[(0, 4), (5, 8), (9, 10)], [(11, 15), (16, 20), (21, 22)]]).flair_sentences()
    assert found[1].previous_sentence() is found[0] and found[0].previous_sentence() is None
    documents = [[Labeled([f"d{d}s{s}"], ["O"]) for s in range(3)] for d in range(5)]
    split = held_out(documents)
    assert [s.starts_document for s in split.train] == [True, False, False] * 4  # every document whole, marked at its start
    linked = linked_sentences(split.train)
    assert linked[1].previous_sentence() is linked[0] and linked[3].previous_sentence() is None and linked[2].next_sentence() is None
    single = held_out([documents[0] + documents[1]])  # one document: its sentences are shared out, neighbours where both are kept
    kept_ids = [s.tokens[0] for s in single.train]
    order = [s.tokens[0] for s in documents[0] + documents[1]]
    expected = [i == 0 or order.index(kept_ids[i]) != order.index(kept_ids[i - 1]) + 1 for i in range(len(kept_ids))]
    assert [s.starts_document for s in single.train] == expected


def test_evaluate_and_flair_corpora_link_the_sentences_of_each_document(tmp_path: Path) -> None:
    from flairsuite.corpora.loading import linked

    text = "".join("\n".join(f"{t} O" for t in s.split()) + "\n\n" + ("-DOCSTART- O\n\n" if i == 1 else "") for i, s in enumerate(DOCUMENT))
    read = list(read_column(write_file(tmp_path / "docs.tsv", text), FormatSpec("column", docstart="-DOCSTART-"), "utf-8"))
    found = linked([Sentence(s.tokens) for s in read], read)
    assert found[1].previous_sentence() is found[0] and found[1].next_sentence() is None and found[2].previous_sentence() is None
