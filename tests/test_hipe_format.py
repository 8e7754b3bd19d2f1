"""The `hipe` format preset (HIPE-2020/2022 TSV) and the registered `hipe-ajmc-de`.

- The preset is declared once (`format_names.PRESETS`) and expands to `column` keys wherever a format is named: an own
  corpus's `format: hipe` (its own keys winning, e.g. `label: NE-FINE-LIT`), a registry `format: {kind: hipe}`,
  `corpora --input-format hipe`, and the format `train-tagger` tells by a file's header row.
- Reading on tiny files written here: sentences end at `EndOfSentence` (not inside an entity), `NoSpaceAfter` is kept,
  each `# hipe2022:document_id` line begins a document, other `# ` comments are skipped while a token `#00` is read.
- Strict as `column`: a header without the chosen column, a token line of another width than the header, a tag outside
  BIO: one error naming the file and the line.
- On the real AjMC German files ($FLAIRSUITE_CORPORA/hipe2022_ajmc_de, skipped where absent): the counts of the files
  measured by a small parser of this module (not the suite's reader), the shared task's 382 test entities, and the
  registered sizes and checksums.
"""

import os
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import invoke, one_error_line, write_file

from flairsuite.corpora.format_detection import detect_format
from flairsuite.corpora.format_names import INPUT_FORMATS, PRESETS, with_preset
from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.own import corpus_record, own_corpus
from flairsuite.corpora.readers import document_starts
from flairsuite.corpora.registry import FormatSpec, dataset
from flairsuite.errors import InputError

HEADER = "TOKEN\tNE-COARSE-LIT\tNE-COARSE-METO\tNE-FINE-LIT\tNE-FINE-METO\tNE-FINE-COMP\tNE-NESTED\tNEL-LIT\tNEL-METO\tMISC\n"


def row(token: str, coarse: str = "O", fine: str = "", misc: str = "_") -> str:
    """One HIPE token line (fine: the NE-FINE-LIT tag, default the coarse one)."""
    return f"{token}\t{coarse}\t_\t{fine or coarse}\t_\t_\tO\t_\t_\t{misc}\n"


PAGE_1 = ("# hipe2022:document_id = page-1\n# hipe2022:date = 1853-01-01\n"
          + row("Aias", "B-pers", "B-pers.myth") + row("spricht", misc="NoSpaceAfter") + row(".", misc="EndOfSentence")
          + row("Soph.", "B-work", "B-work.primlit", "EndOfSentence") + row("Ai.", "I-work", "I-work.primlit") + row("#00", misc="EndOfSentence"))
PAGE_2 = "# hipe2022:document_id = page-2\n" + row("vgl", misc="NoSpaceAfter") + row(".") + row("v.", "B-scope") + row("12", "I-scope")
TEXT = HEADER + PAGE_1 + "\n" + PAGE_2


def hipe_folder(root: Path, test: str = TEXT, header: str = HEADER) -> Path:
    """A corpus folder of three HIPE files (the test file `test`, the others `TEXT` with `header`)."""
    for split in ("train", "dev"):
        write_file(root / "ajmc" / f"HIPE-{split}.tsv", header + TEXT[len(HEADER):])
    write_file(root / "ajmc" / "HIPE-test.tsv", test)
    return root / "ajmc"


# --- the preset: one declaration, expanded wherever a format is named ------------------------------------------------


def test_the_preset_expands_to_column_keys_and_the_entrys_own_keys_win():
    assert with_preset({"format": "hipe", "label": "NE-FINE-LIT", "path": "x"}) == {
        "format": "column", "sep": "tab", "header": True, "text": "TOKEN", "label": "NE-FINE-LIT", "sentence_end": "MISC:EndOfSentence",
        "comment": "# ", "document_comment": "# hipe2022:document_id", "scheme": "bio", "line_break": "MISC:EndOfLine", "path": "x"}
    assert with_preset({"kind": "hipe"}, "kind")["kind"] == "column"
    assert with_preset({"format": "conllu", "label": "upos"}) == {"format": "conllu", "label": "upos"}
    assert "hipe" in INPUT_FORMATS and set(PRESETS) <= set(INPUT_FORMATS)


def test_the_registry_reads_ajmc_de_with_the_preset():
    spec = dataset("hipe-ajmc-de")
    expected = {("kind" if key == "format" else key): value for key, value in PRESETS["hipe"].items()}
    assert spec.format == FormatSpec(**{**expected, "line_break": None})  # AjMC marks no line ends: the registry says so
    assert spec.types == ("pers", "work", "loc", "object", "date", "scope") and spec.license == "CC BY 4.0"
    assert [spec.splits[split].files[0] for split in ("train", "dev", "test")] == [
        f"HIPE-2022-v2.1-ajmc-{split}-de.tsv" for split in ("train", "dev", "test")]


def test_an_own_corpus_in_hipe_format_keeps_sentences_spaces_and_documents(tmp_path):
    spec = own_corpus({"path": "ajmc", "format": "hipe"}, hipe_folder(tmp_path).parent)
    sentences = read_splits(spec, tmp_path / "ajmc")["test"].sentences
    # `Soph.` carries EndOfSentence inside the entity Soph. Ai.: no end there; `#00` is a token, not a comment
    assert [s.tokens for s in sentences] == [["Aias", "spricht", "."], ["Soph.", "Ai.", "#00"], ["vgl", ".", "v.", "12"]]
    assert sentences[1].tags == ["B-work", "I-work", "O"] and sentences[2].tags == ["O", "O", "B-scope", "I-scope"]
    assert sentences[0].whitespace_after == [True, False, True] and sentences[2].whitespace_after[0] is False
    assert document_starts(sentences) == [2] and spec.types == ("pers", "scope", "work") and spec.scheme_rule == "given"
    assert corpus_record(spec)["format"]["document_comment"] == "# hipe2022:document_id"


def test_label_picks_another_hipe_column(tmp_path):
    spec = own_corpus({"path": "ajmc", "format": "hipe", "label": "NE-FINE-LIT"}, hipe_folder(tmp_path).parent)
    assert spec.types == ("pers.myth", "scope", "work.primlit")


def test_input_format_hipe_on_the_command_line(tmp_path):
    folder = hipe_folder(tmp_path)
    result = invoke("corpora", "stats", str(folder), "--input-format", "hipe")
    assert result.exit_code == 0, result.output
    assert re.search(r"^test\s+HIPE-test\.tsv\s+3\s+10\s+3\s+", result.output, re.M)
    assert "hipe" in invoke("corpora", "check", "--help").output


def test_train_tagger_tells_hipe_files_by_their_header(tmp_path):
    detected = detect_format(write_file(tmp_path / "page.tsv", TEXT))
    assert detected.entry == {"format": "hipe"} and detected.what.startswith("HIPE TSV")
    assert detect_format(hipe_folder(tmp_path)).entry == {"format": "hipe"}


# --- strict: one error naming the file and the line ----------------------------------------------------------------


@pytest.mark.parametrize("entry, test, line, message", [
    ({"label": "NE-FINE-LIT"}, HEADER.replace("NE-FINE-LIT", "NE-FINE") + PAGE_1, 1, "label: no column named 'NE-FINE-LIT' in the header line"),
    ({}, HEADER + PAGE_1 + row("v.", "B-scope").replace("\n", "\tx\n"), 10, "11 tab-separated columns, but line 1 has 10"),
    ({}, HEADER + PAGE_1 + "v.\tB-scope\t_\n", 10, "expected at least 10 tab-separated columns, found 3"),
    ({}, HEADER + PAGE_1 + row("v.", "E-scope"), 10, "tag 'E-scope' is BIOES, but the corpus says scheme: bio"),
    ({}, HEADER + PAGE_1 + row("v.", "X-scope"), 10, "ill-formed tag 'X-scope'"),
])
def test_bad_hipe_input_is_one_error_at_its_line(tmp_path, entry, test, line, message):
    folder = hipe_folder(tmp_path, test)
    with pytest.raises(InputError, match=re.escape(f"{folder / 'HIPE-test.tsv'}:{line}: {message}")):
        own_corpus({"path": "ajmc", "format": "hipe", **entry}, tmp_path)


def test_a_bad_hipe_file_is_one_line_on_the_command_line(tmp_path):
    folder = hipe_folder(tmp_path, HEADER + PAGE_1 + row("v.", "X-scope"))
    assert one_error_line(invoke("corpora", "check", str(folder), "--input-format", "hipe")).startswith(f"Error: {folder / 'HIPE-test.tsv'}:10: ")


# --- the real AjMC German files ------------------------------------------------------------------------------------

ROOT = Path(os.environ["FLAIRSUITE_CORPORA"]) if os.environ.get("FLAIRSUITE_CORPORA") else None
AJMC = ROOT / "hipe2022_ajmc_de" if ROOT else None
real = pytest.mark.skipif(AJMC is None or not AJMC.is_dir(), reason="$FLAIRSUITE_CORPORA/hipe2022_ajmc_de is not there")
# measured with `independent_counts` on HIPE-2022 v2.1 (PROVENANCE.md gives the same): sentences, tokens, entities by type
AJMC_COUNTS = {
    "train": (1024, 22695, {"pers": 620, "work": 321, "loc": 31, "object": 6, "date": 2, "scope": 759}),
    "dev": (192, 4702, {"pers": 162, "work": 70, "loc": 10, "object": 4, "scope": 157}),
    "test": (224, 4845, {"pers": 128, "work": 74, "loc": 2, "object": 2, "scope": 176}),
}


def independent_counts(path: Path) -> tuple[int, int, Counter]:
    """Sentences, token rows and NE-COARSE-LIT entities of a HIPE file, by this parser alone: a sentence ends at each
    EndOfSentence flag and at a page's end without one; an entity starts at B-X, or at an I-X after no X."""
    pages: list[list[list[str]]] = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        if line.startswith("# hipe2022:document_id"):
            pages.append([])
        elif line.strip() and not line.startswith("# "):
            pages[-1].append(line.split("\t"))
    sentences = tokens = 0
    entities: Counter = Counter()
    for page in pages:
        ends = ["EndOfSentence" in cells[-1].split("|") for cells in page]
        sentences += sum(ends) + (not ends[-1])
        tokens += len(page)
        previous = "O"
        for cells in page:
            assert len(cells) == 10, cells
            tag = cells[1]
            if tag.startswith("B-") or (tag.startswith("I-") and previous[2:] != tag[2:]):
                entities[tag[2:]] += 1
            previous = tag
    return sentences, tokens, entities


@real
@pytest.mark.corpora
@pytest.mark.parametrize("split", list(AJMC_COUNTS))
def test_ajmc_de_counts_match_the_files(split):
    sentences, tokens, per_type = AJMC_COUNTS[split]
    assert independent_counts(AJMC / f"HIPE-2022-v2.1-ajmc-{split}-de.tsv") == (sentences, tokens, per_type)
    from flairsuite.corpora.stats import corpus_stats

    stats = corpus_stats(dataset("hipe-ajmc-de"), ROOT, [split])
    assert (stats.summary.loc[split, "sentences"], stats.summary.loc[split, "tokens"]) == (sentences, tokens)
    assert stats.types[split][stats.types[split] > 0].to_dict() == per_type
    if split == "test":
        assert stats.summary.loc[split, "entities"] == 382  # HIPE-2022's NERC-Coarse ajmc German test: TP + FN of every system


@real
@pytest.mark.corpora
def test_ajmc_de_files_are_the_registered_ones_and_corpora_stats_prints_them():
    from flairsuite.corpora.fetch import verify

    spec = dataset("hipe-ajmc-de")
    for entry in spec.splits.values():
        assert verify(AJMC / entry.files[0], entry, entry.url) == "size, sha256, git blob verified"
    result = invoke("corpora", "stats", "hipe-ajmc-de", "--corpora-dir", str(ROOT))
    assert result.exit_code == 0, result.output
    assert re.search(r"^test\s+HIPE-2022-v2\.1-ajmc-test-de\.tsv\s+224\s+4845\s+382\s+", result.output, re.M)
    pages = read_splits(spec, ROOT, ["test"])["test"].sentences
    assert len(document_starts(pages)) == 15  # 16 pages
