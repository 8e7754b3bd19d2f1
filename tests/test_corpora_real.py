"""Integration tests: every dataset in $FLAIRSUITE_CORPORA loads with the counts its PROVENANCE.md gives.

Expected numbers are copied from each folder's PROVENANCE.md; the only differences allowed are
the repairs the loader logs (asserted explicitly where they occur).
"""

import os
from collections import Counter
from pathlib import Path

import pytest

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.loading import load_corpus
from flairsuite.corpora.registry import dataset
from flairsuite.corpora.stats import corpus_stats
from flairsuite.errors import FlairsuiteError

ROOT = Path(os.environ["FLAIRSUITE_CORPORA"]) if os.environ.get("FLAIRSUITE_CORPORA") else None
pytestmark = [
    pytest.mark.corpora,
    pytest.mark.skipif(ROOT is None, reason="FLAIRSUITE_CORPORA is not set (point it at ../shared/corpora)"),
]

# name, options, split -> (sentences, tokens, {type: entities}) from PROVENANCE.md
NER_COUNTS = {
    ("sturm", ()): {
        "train": (2636, 29424, {"pers": 763, "date": 612, "place": 374}),
        "dev": (326, 3710, {"pers": 84, "date": 51, "place": 59}),
        "test": (285, 3583, {"pers": 83, "date": 59, "place": 59}),
    },
    ("arendt", ()): {
        "train": (8582, 125066, {"person": 1303, "place": 891, "ethnicity": 867, "organization": 377, "event": 49, "language": 14}),
        "dev": (1073, 16471, {"person": 217, "ethnicity": 111, "place": 85, "organization": 39, "event": 2, "language": 2}),
        "test": (1073, 16602, {"person": 182, "ethnicity": 115, "place": 111, "organization": 39, "event": 6, "language": 4}),
    },
    ("germeval14", ()): {
        "dev": (2200, 41653, {"LOC": 763, "PER": 711, "ORG": 496, "OTH": 269, "LOCderiv": 235, "ORGpart": 91,
                              "LOCpart": 52, "OTHpart": 18, "PERpart": 18, "OTHderiv": 16, "ORGderiv": 3, "PERderiv": 2}),
        "test": (5100, 96499, {"LOC": 1706, "PER": 1639, "ORG": 1150, "OTH": 697, "LOCderiv": 561, "ORGpart": 172,
                               "LOCpart": 109, "PERpart": 44, "OTHpart": 42, "OTHderiv": 39, "PERderiv": 11, "ORGderiv": 8}),
    },
    ("ler", (("granularity", "coarse"),)): {
        "train": (53984, 1746235, {"LIT": 2452, "LOC": 2054, "NRM": 17090, "ORG": 6391, "PER": 2729, "REG": 2823, "RS": 10238}),
        "dev": (6666, 214443, {"LIT": 264, "LOC": 195, "NRM": 1887, "ORG": 807, "PER": 348, "REG": 334, "RS": 1209}),
        "test": (6673, 216768, {"LIT": 314, "LOC": 250, "NRM": 2039, "ORG": 796, "PER": 324, "REG": 354, "RS": 1245}),
    },
    ("wnut17", ()): {
        "train": (3394, 62730, {"person": 660, "location": 548, "group": 264, "corporation": 221, "product": 142, "creative-work": 140}),
        "dev": (1009, 15733, {"person": 470, "product": 114, "creative-work": 105, "location": 74, "group": 39, "corporation": 34}),
        "test": (1287, 23394, {"person": 429, "group": 165, "location": 150, "creative-work": 142, "product": 127, "corporation": 66}),
    },
    ("danish-ner", ()): {
        "train": (604, 10069, {"PER": 151, "LOC": 102, "ORG": 63, "MISC": 24}),
        "dev": (564, 10332, {"PER": 156, "LOC": 103, "ORG": 68, "MISC": 21}),
        "test": (565, 10023, {"PER": 169, "LOC": 97, "ORG": 94, "MISC": 30}),
    },
    ("danish-ner", (("train_size", "5k"),)): {
        "train": (272, 4669, {"PER": 68, "LOC": 39, "ORG": 33, "MISC": 13}),
    },
    ("cluener", ()): {
        # PROVENANCE: company 2980 spans in train, one of them (line 1507) overlaps a book span ...
        "train": (10748, 401764, {"name": 3755, "organization": 3210, "position": 3141, "company": 2980 - 2, "address": 2891,
                                  "game": 2376, "government": 1835, "scene": 1521, "book": 1139, "movie": 1123}),
        "dev": (1343, 50260, {"name": 465, "position": 433, "company": 378, "address": 373, "organization": 367, "game": 295,
                              "government": 247, "scene": 209, "book": 154, "movie": 151}),
    },
}
# ... and the repairs each logs (every other split: none)
REPAIRS = {
    ("danish-ner", (), "dev"): {"I-X after another type -> B-X": 1},  # PROVENANCE: dev line 9739, Cole I-LOC after I-PER
    ("cluener", (), "train"): {"overlapping span dropped": 2},  # line 1507: two company spans inside one book span
}
POS_COUNTS = {
    "ud-en-ewt": {"train": (12544, 204577), "dev": (2001, 25147), "test": (2077, 25094)},
    "ud-de-gsd": {"dev": (799, 12480), "test": (977, 16499)},
    "ud-da-ddt": {"dev": (564, 10332), "test": (565, 10023)},
    "ud-zh-gsdsimp": {"dev": (500, 12663), "test": (500, 12012)},
}


@pytest.mark.parametrize("key", list(NER_COUNTS), ids=lambda k: "-".join([k[0], *(v for _, v in k[1])]))
def test_ner_counts_match_provenance(key: tuple) -> None:
    name, options = key
    spec = dataset(name, **dict(options))
    expected = NER_COUNTS[key]
    stats = corpus_stats(spec, ROOT, list(expected))
    for split, (sentences, tokens, per_type) in expected.items():
        assert stats.summary.loc[split, "sentences"] == sentences
        assert stats.summary.loc[split, "tokens"] == tokens
        assert stats.summary.loc[split, "entities"] == sum(per_type.values())
        assert stats.types[split][stats.types[split] > 0].to_dict() == per_type
        repairs = stats.repairs[split][stats.repairs[split] > 0].to_dict() if split in stats.repairs else {}
        assert repairs == REPAIRS.get((name, options, split), {})


def test_germeval_inner_level_counts() -> None:
    stats = corpus_stats(dataset("germeval14", level="inner"), ROOT, ["dev", "test"])
    assert stats.summary["entities"].to_dict() == {"dev": 212, "test": 515}


def test_ler_fine_has_19_types_with_the_coarse_totals() -> None:
    data = read_splits(dataset("ler"), ROOT, ["dev"])["dev"]
    fine = Counter(tag[2:] for s in data.sentences for tag in s.tags if tag.startswith("B-"))
    assert len(fine) == 19
    assert sum(fine.values()) == 5044
    assert fine["GS"] + fine["VO"] + fine["EUN"] == 1887  # coarse NRM in dev


@pytest.mark.parametrize("name", list(POS_COUNTS))
def test_pos_counts_match_provenance(name: str) -> None:
    expected = POS_COUNTS[name]
    stats = corpus_stats(dataset(name), ROOT, list(expected))
    for split, (sentences, words) in expected.items():
        assert (stats.summary.loc[split, "sentences"], stats.summary.loc[split, "tokens"]) == (sentences, words)
    assert set(stats.types.index) == set(dataset(name).types)


@pytest.mark.parametrize("name", ["germeval14", "ud-de-gsd", "ud-da-ddt", "ud-zh-gsdsimp"])
def test_missing_train_split_is_an_error_not_a_sample(name: str) -> None:
    with pytest.raises(FlairsuiteError, match=rf"train split not found .*corpora fetch {name}.*--split dev,test"):
        load_corpus(name, ROOT)


def test_flair_corpus_of_sturm_has_the_provenance_spans() -> None:
    corpus = load_corpus("sturm", ROOT)
    assert (len(corpus.train), len(corpus.dev), len(corpus.test)) == (2636, 326, 285)
    labels = Counter(span.get_label("ner").value for s in corpus.test for span in s.get_spans("ner"))
    assert labels == {"pers": 83, "date": 59, "place": 59}
    assert sum(len(s) for s in corpus.train) == 29424


def test_flair_corpus_of_ler_coarse_dev_test_only() -> None:
    corpus = load_corpus("ler", ROOT, ["dev", "test"], granularity="coarse")
    assert corpus.train is None or len(corpus.train) == 0
    labels = Counter(span.get_label("ner").value for s in corpus.dev for span in s.get_spans("ner"))
    assert labels == NER_COUNTS[("ler", (("granularity", "coarse"),))]["dev"][2]


def test_flair_corpus_of_ud_pos_has_token_labels() -> None:
    corpus = load_corpus("ud-de-gsd", ROOT, ["dev"])
    tags = Counter(token.get_label("upos").value for s in corpus.dev for token in s)
    assert sum(tags.values()) == 12480 and set(tags) <= set(dataset("ud-de-gsd").types)
    assert any(token.whitespace_after == 0 for s in corpus.dev for token in s)  # SpaceAfter=No is kept


def test_cluener_characters_are_tokens() -> None:
    corpus = load_corpus("cluener", ROOT, ["dev"])
    sentence = corpus.dev[0]
    assert all(len(token.text) == 1 for token in sentence)
    assert sentence.to_original_text() == sentence.to_plain_string().replace(" ", "")


RAW_DOCUMENTS = {
    # PROVENANCE: non-empty lines (documents) and characters; the character counts there include
    # one newline per line plus the empty separator lines between novels, which are not document text.
    "raw-de": {"eltec": (179354, 59236539 - 179354 - 97), "courts": (51029, 10800920 - 51029), "news": (1028, None)},
    "raw-en": {"eltec": (68801, 19353851 - 68801 - 24)},
    "raw-da": {"adl": (49391, 11046832 - 49391 - 28)},
}


@pytest.mark.parametrize("name", list(RAW_DOCUMENTS))
def test_raw_text_documents_match_provenance(name: str) -> None:
    stats = corpus_stats(dataset(name), ROOT)
    for source, (documents, characters) in RAW_DOCUMENTS[name].items():
        assert stats.summary.loc[source, "documents"] == documents
        if characters is not None:
            assert stats.summary.loc[source, "characters"] == characters


def test_raw_zh_streams_every_novel_and_the_cluener_train_text() -> None:
    stats = corpus_stats(dataset("raw-zh"), ROOT)
    assert list(stats.summary.index) == ["sanguo", "shuihu", "hongloumeng", "xiyou", "cluener-train"]
    assert (stats.summary["documents"] > 1000).all()
    assert stats.summary.loc["cluener-train", "documents"] == 10748  # every train record of CLUENER, one document each


# --- own corpora from real data: annotation exports, long documents ------------------------------

WALKTHROUGH = Path(__file__).resolve().parent.parent / "experiments" / "walkthrough" / "annotations"


def test_the_shipped_inception_export_holds_sturms_sentences_as_they_are():
    """The walk-through's WebAnno TSV export, read back, is Sturm's first 720 train sentences, token for token and tag for tag."""
    from flairsuite.corpora.own import own_corpus

    spec = own_corpus({"path": "inception", "format": "webanno"}, WALKTHROUGH)
    exported = read_splits(spec, WALKTHROUGH)["train"].sentences
    sturm = read_splits(dataset("sturm"), ROOT, ["train"])["train"].sentences[:720]
    assert [(s.tokens, s.tags) for s in exported] == [(s.tokens, s.tags) for s in sturm]


def test_sturm_joined_into_long_documents_splits_back_without_losing_an_entity(tmp_path):
    """Sturm's sentences joined 80 to a document (no blank line between them) are split at 250 tokens, at periods only,
    keeping every token and entity."""
    from flairsuite.corpora.own import own_corpus

    sentences = read_splits(dataset("sturm"), ROOT, ["train"])["train"].sentences
    documents = [sentences[i : i + 80] for i in range(0, len(sentences), 80)]
    text = "\n".join("".join(f"{t} {g}\n" for s in document for t, g in zip(s.tokens, s.tags)) for document in documents)
    for split in ("train", "dev", "test"):
        (tmp_path / "long").mkdir(exist_ok=True)
        (tmp_path / "long" / f"{split}.txt").write_text(text, encoding="utf-8")
    stats = corpus_stats(own_corpus({"path": "long"}, tmp_path), tmp_path / "long")
    assert stats.summary.loc["train", "tokens"] == 29424 and stats.types["train"].to_dict() == {"date": 612, "pers": 763, "place": 374}
    assert stats.repairs["train"].to_dict() == {"sentence over max_tokens split": 33, "cut after sentence-final punctuation": 104}
    assert stats.summary.loc["train", "sentences"] == 33 + 104
