"""Words cut at line ends in labelled corpora (issue 76): `Ber` `¬` `lin`, the hyphen a token flagged `EndOfLine` in MISC.

- Reading: a corpus's `line_break: COLUMN:FLAG` (the `hipe` preset: `MISC:EndOfLine`) keeps which tokens are break marks:
  a flagged hyphen between a piece ending with a letter and one starting with a letter, unless the piece after it is a
  conjunction; an unflagged hyphen and a flagged word are none. A corpus without the key reads and records as before;
  a key whose flag never occurs is one warning.
- The character LMs of a tagger trained on such a corpus (`JoinedFlairEmbeddings`) read the cut word whole: every token
  of `Ber ¬ lin` gets the vector of `Berlin` in the sentence without the cut, in Flair's path and the fast one; a
  sentence without marks gets exactly the vectors it gets today.
- The cached vectors of a split with marks are keyed apart; a saved tagger reloads with the joined reading and tags a
  broken sentence alike in the fast path and in Flair's, in `evaluate` too.
"""

import logging
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import invoke, train_tiny_embeddings, write_file
from flair.data import Dictionary, Sentence

from flairsuite.corpora.break_marks import break_marks, mark_breaks, marks_of
from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.own import corpus_record, own_corpus
from flairsuite.embeddings import resolve, stack
from flairsuite.embeddings.charlm import CharLMFeatures
from flairsuite.embeddings.context import sentence_text
from flairsuite.embeddings.joined import JoinedFlairEmbeddings, with_joined_breaks
from flairsuite.tagging.cache import cache_path
from flairsuite.tagging.data import LabeledSplit

HEADER = "TOKEN\tNE-COARSE-LIT\tNE-COARSE-METO\tNE-FINE-LIT\tNE-FINE-METO\tNE-FINE-COMP\tNE-NESTED\tNEL-LIT\tNEL-METO\tMISC\n"


def row(token: str, tag: str = "O", misc: str = "_") -> str:
    return f"{token}\t{tag}\t_\t{tag}\t_\t_\tO\t_\t_\t{misc}\n"


PAGE = ("# hipe2022:document_id = page-1\n"
        + row("Die") + row("Reise") + row("nach") + row("Ber", "B-loc", "NoSpaceAfter") + row("¬", "I-loc", "EndOfLine|NoSpaceAfter")
        + row("lin", "I-loc") + row("und") + row("Haus", misc="NoSpaceAfter") + row("-", misc="EndOfLine") + row("und")  # a suspended compound
        + row("Ost", "B-loc", "NoSpaceAfter") + row("-", "I-loc", "NoSpaceAfter") + row("see", "I-loc") + row(".", misc="EndOfSentence")
        + row("Lasker", "B-pers", "NoSpaceAfter") + row("¬", "I-pers", "EndOfLine") + row("Schüler", "I-pers") + row("las")
        + row("Zeitung", misc="EndOfLine") + row(".", misc="EndOfSentence|EndOfLine"))
BROKEN = "Die Reise nach Ber ¬ lin und Haus - und Ost - see ."


def hipe_corpus(root: Path, page: str = PAGE) -> Path:
    for split in ("train", "dev", "test"):
        write_file(root / "news" / f"news-{split}.tsv", HEADER + page)
    return root / "news"


def tag_news(home: Path, tmp_path: Path, monkeypatch):
    """`flairsuite tag` in-process, from `tmp_path` with `home`, on the experiment `news`: `map` on the LM pair `home` holds,
    one epoch, trained on the HIPE page (`hipe_corpus` below data/); its result."""
    hipe_corpus(tmp_path / "data")
    experiment = write_file(tmp_path / "news.yaml", "name: news\ncorpora: [{path: data/news/, format: hipe}]\n"
                                                    "embeddings: {pair: [charlm:de-forward, charlm:de-backward]}\n"
                                                    "taggers: [map]\nseeds: [1]\ntrain: {max_epochs: 1}\n")
    monkeypatch.setenv("FLAIRSUITE_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    return invoke("tag", str(experiment), "--threads", "1")


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """Tiny forward and backward German LMs (`charlm/de-*`), trained by the CLI."""
    return train_tiny_embeddings(tmp_path_factory.mktemp("breaks"), "both")


def vectors(embedding, sentence: Sentence) -> torch.Tensor:
    embedding.embed([sentence])
    found = torch.stack([token.get_embedding(embedding.get_names()) for token in sentence])
    sentence.clear_embeddings()
    return found


def broken(text: str = BROKEN, marks: tuple[int, ...] = (4,)) -> Sentence:
    return mark_breaks(Sentence(text.split()), marks)


# --- reading ---------------------------------------------------------------------------------------------------------


def test_a_hipe_corpus_keeps_its_break_marks_and_records_the_key(tmp_path: Path) -> None:
    spec = own_corpus({"path": "news", "format": "hipe"}, hipe_corpus(tmp_path).parent)
    assert spec.format.line_break == "MISC:EndOfLine" and corpus_record(spec)["format"]["line_break"] == "MISC:EndOfLine"
    sentences = read_splits(spec, tmp_path)["test"].sentences
    assert [s.line_ends for s in sentences] == [[4, 8], [1, 4, 5]]  # what carries the flag
    split = LabeledSplit.of(sentences)
    # `¬` between Ber and lin is a mark; `-` before `und` (a suspended compound), the unflagged `-` of Ost-see, a
    # flagged word (Zeitung) and a flagged `.` at the sentence's end are none
    assert split.breaks == {0: (4,), 1: (1,)} and split.tags[0][3:6] == ["B-loc", "I-loc", "I-loc"]
    assert marks_of(split.flair_sentence(0)) == [4] and marks_of(split.flair_sentence(1)) == [1]
    assert split.tagged(1).line_ends == [1] and (split + split).breaks == {0: (4,), 1: (1,), 2: (4,), 3: (1,)}
    assert break_marks(["a", "¬"], [1]) == [] and break_marks(["Ber", "-", "lin"], [1]) == [1] and break_marks(["18", "-", "48"], [1]) == []


def test_without_the_key_nothing_is_marked_nor_recorded(tmp_path: Path, caplog) -> None:
    entry = {"path": "news", "format": "hipe", "line_break": None}
    spec = own_corpus(entry, hipe_corpus(tmp_path).parent)
    assert "line_break" not in corpus_record(spec)["format"]
    assert LabeledSplit.of(read_splits(spec, tmp_path)["test"].sentences).breaks == {}
    unmarked = own_corpus({"path": "news", "name": "plain", "format": "hipe"}, hipe_corpus(tmp_path / "plain", PAGE.replace("EndOfLine", "_")).parent)
    with caplog.at_level(logging.WARNING, logger="flairsuite"):
        read_splits(unmarked, tmp_path)
    assert [r.getMessage() for r in caplog.records] == [
        "plain: line_break MISC:EndOfLine: no token of train, dev, test carries the flag, so no word is read joined "
        "(a corpus without line-end marks: `line_break: null`)"]


def test_a_long_sentence_cut_keeps_the_marks_of_its_pieces() -> None:
    from collections import Counter

    from flairsuite.corpora.long_sentences import split_long
    from flairsuite.corpora.readers import TaggedSentence

    def pieces(max_tokens: int) -> list[list[int]]:
        sentence = TaggedSentence(["a", "b", "Ber", "¬", "lin", "c"], ["O"] * 6, [], [True] * 6, line_ends=[3])
        return [break_marks(piece.tokens, piece.line_ends) for piece in split_long(sentence, max_tokens, Counter())]

    assert pieces(5) == [[3], []] and pieces(3) == [[], []]  # a cut between the pieces of a word leaves no mark


# --- what the LMs read -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_every_token_of_a_cut_word_gets_the_whole_words_vector(home: Path, direction: str) -> None:
    plain, joined = resolve(f"charlm:de-{direction}", home), resolve(f"charlm:de-{direction}", home, join_breaks=True)
    assert isinstance(joined, JoinedFlairEmbeddings) and joined.name == plain.name and joined.lm is not plain.lm
    assert sentence_text(joined, broken()) == "Die Reise nach Berlin und Haus - und Ost - see ."
    whole = Sentence("Die Reise nach Berlin und Haus - und Ost - see .".split())
    got, expected = vectors(joined, broken()), vectors(plain, whole)
    assert torch.equal(got[[0, 1, 2, 3, 4, 5]], expected[[0, 1, 2, 3, 3, 3]]) and torch.equal(got[6:], expected[4:])
    with torch.inference_mode():  # the fast path reads the same
        assert torch.allclose(CharLMFeatures(joined, quantize=False)([broken()]), got, atol=1e-5)
    # a compound keeps its hyphen, as `predict` keeps it in raw text
    assert sentence_text(joined, broken("Lasker ¬ Schüler las", (1,))) == "Lasker-Schüler las"


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_a_sentence_without_marks_reads_as_today(home: Path, direction: str) -> None:
    plain, joined = resolve(f"charlm:de-{direction}@context40", home), resolve(f"charlm:de-{direction}@context40", home, join_breaks=True)
    document = [Sentence("Sie fuhr nach Ber ¬ lin .".split()), Sentence("Sie sagte das dem König .".split())]
    Sentence.set_context_for_sentences(document)
    assert torch.equal(vectors(joined, document[1]), vectors(plain, document[1]))
    assert torch.equal(vectors(resolve(f"charlm:de-{direction}", home), broken()), vectors(resolve(f"charlm:de-{direction}", home), Sentence(BROKEN.split())))
    mark_breaks(document[0], [4])  # a neighbour's cut word is read whole too (by the forward LM, which reads what comes before)
    assert torch.equal(vectors(joined, document[1]), vectors(plain, document[1])) == (direction == "backward")


def test_the_cache_key_differs_between_joined_and_plain_reading(home: Path, tmp_path: Path) -> None:
    spec = own_corpus({"path": "news", "format": "hipe"}, hipe_corpus(tmp_path).parent)
    split = LabeledSplit.of(read_splits(spec, tmp_path)["test"].sentences)
    unmarked = LabeledSplit(split.texts, split.spaces, split.tags, split.starts)
    assert cache_path("charlm:de-forward", split, home) != cache_path("charlm:de-forward", unmarked, home)
    assert cache_path("char", split, home) == cache_path("char", unmarked, home)  # what reads tokens keeps its key


# --- a saved tagger --------------------------------------------------------------------------------------------------


def test_a_saved_tagger_reads_joined_in_the_fast_path_and_in_flairs(home: Path, tmp_path: Path, monkeypatch) -> None:
    from flairsuite import evaluate as evaluation
    from flairsuite.inference.raw_tags import flair_tags
    from flairsuite.inference.saved_tagger import load_tagger
    from flairsuite.inference.tagger import FastTagger
    from flairsuite.models.registry import build_tagger

    dictionary = Dictionary(add_unk=False)
    dictionary.span_labels = True
    for kind in ("loc", "pers"):
        dictionary.add_item(kind)
    torch.manual_seed(1)
    model = build_tagger("bilstm-crf", stack(["charlm:de-forward", "charlm:de-backward"], home, join_breaks=True), dictionary, "ner")
    model.save(tmp_path / "model.pt")
    loaded = load_tagger(tmp_path / "model.pt")
    assert [type(e).__name__ for e in loaded.embeddings.embeddings] == ["JoinedFlairEmbeddings"] * 2
    sentences = [broken(), broken("Lasker ¬ Schüler las Zeitung .", (1,))]
    fast = FastTagger(loaded, quantize=False).tag(sentences)
    flair = flair_tags(loaded, [broken(), broken("Lasker ¬ Schüler las Zeitung .", (1,))], 32)
    assert [[tag for tag, _ in tags] for tags in fast] == [[tag for tag, _ in tags] for tags in flair]
    assert [c for tags in fast for _, c in tags] == pytest.approx([c for tags in flair for _, c in tags], abs=1e-4)
    plain = FastTagger(with_joined_breaks(load_tagger(tmp_path / "model.pt")), quantize=False).tag(sentences)
    assert plain == fast  # with_joined_breaks leaves a joined stack as it is
    # `evaluate` on the HIPE files gives the model the marks
    seen: list[list[int]] = []
    tag = evaluation.tag
    monkeypatch.setattr(evaluation, "tag", lambda model, given, *rest: seen.extend(marks_of(s) for s in given) or tag(model, given, *rest))
    spec = own_corpus({"path": "news", "format": "hipe"}, hipe_corpus(tmp_path).parent)
    results = [evaluation.evaluate(tmp_path / "model.pt", spec, tmp_path, "test", fast, None, False) for fast in (True, False)]
    assert seen == [[4], [1]] * 2 and results[0].predicted == results[1].predicted


def test_flairsuite_tag_trains_a_joined_tagger_on_a_hipe_corpus(home: Path, tmp_path: Path, monkeypatch) -> None:
    result = tag_news(home, tmp_path, monkeypatch)
    assert result.exit_code == 0, result.output
    from flair.models import SequenceTagger

    model = SequenceTagger.load(home / "results" / "news" / "news" / "pair" / "map" / "seed-1" / "model.pt")
    assert {type(e).__name__ for e in model.embeddings.embeddings} == {"JoinedFlairEmbeddings"}
    # the vectors it trained on (the cache) read `Ber ¬ lin` as one word too
    spec = own_corpus({"path": "data/news", "format": "hipe"}, tmp_path)
    split = LabeledSplit.of(read_splits(spec, tmp_path)["train"].sentences)
    array = np.load(cache_path("charlm:de-forward", split, home), mmap_mode="r")
    assert (array[3] == array[4]).all() and (array[4] == array[5]).all() and not (array[2] == array[3]).all()


def test_one_entity_per_cut_word_after_decoding():
    """`tagging.cut_words`: the tokens of a cut word take the type of the first tagged one, B- then I- (I- where the word
    continues an entity), all O where none is tagged; chains of marks are one word; sentences without marks unchanged."""
    from flairsuite.tagging.cut_words import cut_word_groups, one_entity_per_word, whole_words

    assert cut_word_groups([2]) == [[1, 2, 3]] and cut_word_groups([4, 2]) == [[1, 2, 3, 4, 5]]
    assert cut_word_groups([1, 5]) == [[0, 1, 2], [4, 5, 6]]
    # "von Soph ¬ okles" split as three entities: one word, one entity
    assert one_entity_per_word(["O", "B-pers", "B-pers", "B-pers", "O"], [2]) == ["O", "B-pers", "I-pers", "I-pers", "O"]
    assert one_entity_per_word(["O", "O", "O", "B-loc", "O"], [2]) == ["O", "B-loc", "I-loc", "I-loc", "O"]  # only the last piece tagged
    assert one_entity_per_word(["B-pers", "I-pers", "O", "O"], [2]) == ["B-pers", "I-pers", "I-pers", "I-pers"]  # continues
    assert one_entity_per_word(["O", "B-work", "O", "I-pers"], [2]) == ["O", "B-work", "I-work", "I-work"]  # the first type wins
    assert one_entity_per_word(["O", "O", "O"], [1]) == ["O", "O", "O"]
    assert whole_words([["B-pers", "B-pers", "B-pers"], ["B-loc", "B-loc"]], {0: (1,)}) == [["B-pers", "I-pers", "I-pers"], ["B-loc", "B-loc"]]


def test_tag_and_evaluate_score_a_cut_word_as_one_entity(home: Path, tmp_path: Path, monkeypatch) -> None:
    """Whatever the tagger decodes, `tag` (scores and predictions.tsv) and `evaluate` see each cut word's tokens as one
    word's tags: a decoder that starts an entity on every token gives `Ber ¬ lin` B-loc I-loc I-loc."""
    from flairsuite import evaluate as evaluation
    from flairsuite.experiments import runner

    everywhere = lambda features, kind="loc": [[f"B-{kind}"] * len(texts) for texts in features.split.texts]  # noqa: E731
    monkeypatch.setattr(runner, "decode", lambda model, features: everywhere(features))
    assert tag_news(home, tmp_path, monkeypatch).exit_code == 0
    rows = (home / "results" / "news" / "news" / "pair" / "map" / "seed-1" / "predictions.tsv").read_text(encoding="utf-8").splitlines()
    predicted = [line.split("\t")[-1] for line in rows if line.strip()]
    assert predicted[3:6] == ["B-loc", "I-loc", "I-loc"] and predicted[2] == predicted[6] == "B-loc"  # Ber ¬ lin; nach, und
    assert predicted[14:17] == ["B-loc", "I-loc", "I-loc"]  # Lasker ¬ Schüler
    monkeypatch.setattr(evaluation, "tag", lambda model, given, *rest: [[("B-pers", 1.0)] * len(s) for s in given])
    spec = own_corpus({"path": "news", "format": "hipe"}, tmp_path / "data")
    result = evaluation.evaluate(home / "results" / "news" / "news" / "pair" / "map" / "seed-1" / "model.pt", spec, tmp_path / "data", "test",
                                 True, None, False)
    assert result.predicted[0][3:6] == ["B-pers", "I-pers", "I-pers"] and result.predicted[1][:3] == ["B-pers", "I-pers", "I-pers"]
