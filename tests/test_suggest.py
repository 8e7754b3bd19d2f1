"""`flairsuite suggest` with the tiny saved models: ranking by uncertainty, near-duplicates kept apart, the model's tags
in the annotation formats, documents, corpus files with their labels ignored, one-line errors."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import invoke, one_error_line, write_file
from flair.data import Sentence

from flairsuite.inference.raw_tags import tag
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.models.selection import jaccard, pick, ranked, word_set
from flairsuite.suggest.output import token_spans
from flairsuite.suggest.pool import Pool
from flairsuite.suggest.scoring import sentence_scores
from flairsuite.suggest.suggestion import suggest
from flairsuite.suggest.texts import read_units

MODELS = Path(__file__).parent / "fixtures" / "saved-models"
LETTER = (
    "Lieber Herwarth Walden, herzlichen Dank für den Brief aus Berlin!\n"
    "Lieber Herwarth Walden, herzlichen Dank für den Brief aus Berlin.\n"
    "Am Montag besuchte Anna die Stadt Wien.\n"
    "Otto verließ München, sagte der König.\n"
    "Die Bilder sind angekommen.\n"
    "Franz Marc schrieb aus Sindelsdorf an Else Lasker-Schüler.\n"
)


def test_cli_ranks_and_writes_the_top_n(tmp_path):
    letter = write_file(tmp_path / "letter.txt", LETTER)
    out = tmp_path / "next.conll"
    command = [str(Path(sys.executable).with_name("flairsuite")), "suggest", str(MODELS / "lcrf-ner.pt"), str(letter), "--n", "5",
               "--out", str(out), "--format", "conll", "--threads", "1", "--keep-raw-spans", "--unit", "sentence"]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert rows[0] == ["rank", "uncertainty", "source", "text"] and [row[0] for row in rows[1:]] == ["1", "2", "3", "4", "5"]
    values = [float(row[1]) for row in rows[1:]]
    assert values == sorted(values, reverse=True) and all(0 < v < 1 for v in values)
    assert sum(row[3].startswith("Lieber Herwarth Walden") for row in rows[1:]) == 1  # its near-duplicate is passed over
    assert {row[2] for row in rows[1:]} <= {f"{letter}:{n}" for n in range(1, 7)}
    assert "ranked 6 sentences by uncertainty; chose 5, passing over 1 near-duplicates" in result.stderr
    blocks = out.read_text().strip().split("\n\n")
    assert len(blocks) == 5 and all(len(line.split(" ")) == 2 for block in blocks for line in block.splitlines())
    # the pre-annotations are the model's own spans (as Flair reads its tags), in ranked order
    model = load_tagger(MODELS / "lcrf-ner.pt")
    first = [line.split(" ")[0] for line in blocks[0].splitlines()]
    expected = ["O"] * len(first)
    for start, end, kind, _ in token_spans(tag(model, [Sentence(first)], True, None)[0]):
        expected[start:end] = [f"B-{kind}"] + [f"I-{kind}"] * (end - start - 1)
    assert [line.split(" ")[1] for line in blocks[0].splitlines()] == expected


def test_softmax_head_ranks_by_mean_token_entropy(tmp_path):
    letter = write_file(tmp_path / "letter.txt", LETTER)
    found = suggest(MODELS / "map.pt", letter, 6, "column", measure="uncertainty")
    entropy = suggest(MODELS / "map.pt", letter, 6, "column", measure="entropy")
    assert found.ranking.replace("uncertainty", "entropy") == entropy.ranking  # the same measure for a softmax head
    units = read_units(letter, "sentence", "words")
    model = load_tagger(MODELS / "map.pt")
    scores = sentence_scores(model, [u.sentences[0] for u in units])
    best = max(range(len(units)), key=lambda i: scores[i].entropy)
    assert found.ranking.splitlines()[1].split("\t")[2] == units[best].source
    assert all(abs(s.uncertainty - s.entropy) < 1e-12 and s.best_log_probability is None for s in scores)


def test_documents_of_a_folder_in_webanno(tmp_path):
    for i, text in enumerate(["Am Montag besuchte Anna die Stadt Wien.", LETTER, "Die Bilder sind angekommen. Der Brief blieb liegen."]):
        write_file(tmp_path / "letters" / f"{i}.txt", text)
    out = tmp_path / "next.tsv"
    result = invoke("suggest", str(MODELS / "lcrf-ner.pt"), str(tmp_path / "letters"), "--n", "2", "--unit", "document", "--out", str(out),
                    "--format", "webanno")
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.splitlines()[1:]]
    assert len(rows) == 2 and all(row[2].endswith(".txt:1") for row in rows)
    assert out.read_text().startswith("#FORMAT=WebAnno TSV 3")


def test_corpus_file_labels_are_ignored(tmp_path):
    gold = "Anna B-place\nreiste O\nnach O\nWien B-pers\n. O\n\nDer O\nBrief O\nkam O\n. O\n"
    corpus = write_file(tmp_path / "pool.conll", gold)
    out = tmp_path / "next.tsv"
    result = invoke("suggest", str(MODELS / "map.pt"), str(corpus), "--n", "2", "--out", str(out), "--keep-raw-spans", "--unit", "sentence",
                    "--min-tokens", "1")
    assert result.exit_code == 0, result.output
    model = load_tagger(MODELS / "map.pt")
    written = {tuple(line.split("\t")[0] for line in block.splitlines()): [line.split("\t")[1] for line in block.splitlines()]
               for block in out.read_text().strip().split("\n\n")}
    for tokens, tags in written.items():
        assert tags == [t for t, _ in tag(model, [Sentence(list(tokens))], True, None)[0]]
    assert {row.split("\t")[2] for row in result.stdout.splitlines()[1:]} == {f"{corpus}:1", f"{corpus}:7"}


def test_near_duplicate_rule():
    assert jaccard(word_set(["Lieber", "Karl", "!"]), word_set(["lieber", "Karl", ","])) == 1.0
    assert jaccard(word_set("Am Montag kam Anna".split()), word_set("Am Dienstag kam Anna".split())) == pytest.approx(3 / 5)


def test_errors_are_one_line(tmp_path):
    letter = write_file(tmp_path / "letter.txt", LETTER)
    assert "has no per-token tag distribution" in one_error_line(invoke("suggest", str(MODELS / "cse.pt"), str(letter), "--out", str(tmp_path / "o")))
    assert "no such file or folder" in one_error_line(invoke("suggest", str(MODELS / "map.pt"), str(tmp_path / "nope"), "--out", str(tmp_path / "o")))
    blank = write_file(tmp_path / "blank.txt", "\n\n")
    assert str(blank) in one_error_line(invoke("suggest", str(MODELS / "map.pt"), str(blank), "--out", str(tmp_path / "o")))
    assert not (tmp_path / "o").exists()


def test_a_folder_passes_over_editions_and_other_files(tmp_path):
    """A folder of letters with the TEI editions `predict` wrote beside them: only the text is ranked, the rest counted."""
    folder = tmp_path / "letters"
    letter = write_file(folder / "brief.txt", LETTER)
    write_file(folder / "brief.xml", '<?xml version="1.0"?>\n<TEI><text><body><p><persName>Anna</persName> reiste.</p></body></text></TEI>\n')
    write_file(folder / "brief.html", "<html><body><p>Anna reiste nach Wien.</p></body></html>\n")
    out = tmp_path / "next.conll"
    command = [str(Path(sys.executable).with_name("flairsuite")), "suggest", str(MODELS / "map.pt"), str(folder), "--n", "10",
               "--out", str(out), "--format", "conll", "--threads", "1"]
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert result.returncode == 0, result.stderr[-2000:]
    sources = {row.split("\t")[2].rsplit(":", 1)[0] for row in result.stdout.splitlines()[1:]}
    assert sources == {str(letter)}
    assert "<" not in out.read_text()
    assert "passed over 2 files that are neither text nor a corpus (1 .html, 1 .xml)" in result.stderr


def candidates(count: int, seed: int) -> list:
    """Random scored units of few words (many repeated word sets, near-duplicates among the rest), values with ties."""
    import random

    from flairsuite.suggest.candidates import Candidate

    rng = random.Random(seed)
    words = ["lieber", "herr", "walden", "marc", "grüße", "anna", "wien", "!", ".", "kam", "ging"]
    return [Candidate(i, f"t:{i}", [[rng.choice(words) for _ in range(rng.randint(1, 4))]], [], round(rng.random(), 1), "") for i in range(count)]


def chosen_sources(found: list, n: int) -> list[str]:
    order = ranked([c.value for c in found])
    return [found[i].source for i in pick(order, [c.tokens[0] for c in found], n)]


def test_the_pool_keeps_what_the_near_duplicate_rule_needs():
    """Fed unit by unit, the bounded pool gives the choice made over all units while it can hold every set of words,
    and keeps one place for a word set repeated thousands of times."""
    for seed in range(200):
        units = candidates(60, seed)
        n = seed % 9 + 1
        pool = Pool(size=10**6, fill=n)
        for unit in units:
            pool.add(unit)
        assert chosen_sources(pool.candidates(), n) == chosen_sources(units, n)
    from flairsuite.suggest.candidates import Candidate

    pool = Pool(size=20, fill=3)
    for i in range(5000):
        words = [["Lieber", "Herr", "Walden", "!"], ["Anna", "kam", str(i), "."]][i % 2]
        pool.add(Candidate(i, f"t:{i}", [words], [], 0.9 if i % 2 == 0 else 0.8 * i / 5000, ""))
    kept = pool.candidates()
    assert pool.seen == 5000 and len(kept) <= 20 + 3
    sources = chosen_sources(kept, 5)
    assert sources[0] == "t:0" and sum(source in {f"t:{i}" for i in range(0, 5000, 2)} for source in sources) == 1  # the formula once
    assert sources[1:] == ["t:4999", "t:4997", "t:4995", "t:4993"]


def test_plain_text_read_in_parts_gives_the_sentences_and_lines_of_the_whole(tmp_path, monkeypatch):
    import functools

    import flairsuite.suggest.units as module
    from flairsuite.inference import stream, textfile

    text = LETTER * 3 + "\n\nDas 𝔄𝔫𝔫𝔞-Blatt kam.\r\nOtto ging nach Köln.\n"
    letter = write_file(tmp_path / "letter.txt", "\ufeff" + text)
    line = text.count("\n", 0, text.index("Das 𝔄")) + 1
    whole = [(u.source, [t.text for t in u.sentences[0]]) for u in read_units(letter, "sentence", "words")]
    documents = [(u.source, len(u.sentences)) for u in read_units(letter, "document", "words")]
    monkeypatch.setattr(module, "text_parts", functools.partial(stream.text_parts, window=100))
    monkeypatch.setattr(module, "chunks", functools.partial(textfile.chunks, read_bytes=3))
    assert [(u.source, [t.text for t in u.sentences[0]]) for u in read_units(letter, "sentence", "words")] == whole
    assert whole[-2:] == [(f"{letter}:{line}", ["Das", "𝔄𝔫𝔫𝔞-Blatt", "kam", "."]), (f"{letter}:{line + 1}", ["Otto", "ging", "nach", "Köln", "."])]
    assert [(u.source, len(u.sentences)) for u in read_units(letter, "document", "words")] == documents
    assert documents == [(f"{letter}:1", len(whole) - 2), (f"{letter}:{line}", 2)]
