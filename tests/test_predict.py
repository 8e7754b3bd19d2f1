"""`flairsuite predict` and the fast path on a tiny tagger: outputs, equality with plain Flair, one-line errors."""

import json
from pathlib import Path

import flair
import pytest
import torch
from click.testing import CliRunner, Result
from conftest import DAYS, NAMES, PLACES, VERBS, one_error_line, write_file
from flair.data import Dictionary, Sentence, get_spans_from_bio
from flair.embeddings import FlairEmbeddings, StackedEmbeddings, WordEmbeddings
from flair.models import LanguageModel, SequenceTagger
from gensim.models import KeyedVectors

from flairsuite.cli import cli
from flairsuite.embeddings.lstm import Affine
from flairsuite.inference.raw_tags import flair_tags, split, tag
from flairsuite.inference.saved_tagger import load_tagger
from flairsuite.inference.tagger import FastTagger, torch_threads
from flairsuite.models.cse import ClassStartEndTagger
from flairsuite.models.registry import build_tagger, saved_classes
from flairsuite.runtime.precision import native_bfloat16

TEXT = (
    "Am Montag besuchte Anna die Stadt Berlin, sagte der König vor Gericht. "
    "Am Freitag verließ Otto die Stadt Wien.\n\n"
    "Marie   liebte  die Stadt München.\nDer König schwieg."
)


def labeled(i: int) -> Sentence:
    """A training sentence with a person and a place."""
    day, verb, name, place = DAYS[i % 4], VERBS[i // 4 % 4], NAMES[i % 5], PLACES[i // 5 % 5]
    sentence = Sentence(f"Am {day} {verb} {name} die Stadt {place} , sagte der König .")
    sentence[3:4].add_label("ner", "pers")
    sentence[6:7].add_label("ner", "place")
    return sentence


def tiny_embeddings(folder: Path) -> StackedEmbeddings:
    """Forward and backward character LMs (hidden 16, untrained) and 16-dim word vectors of the training words."""
    characters = Dictionary(add_unk=True)
    for char in sorted(set(TEXT + "".join(NAMES + PLACES + VERBS + DAYS)) | {"\n", " "}):
        characters.add_item(char)
    lms = [FlairEmbeddings(LanguageModel(characters, forward, hidden_size=16, nlayers=1, embedding_size=8)) for forward in (True, False)]
    words = sorted({token.text for i in range(20) for token in labeled(i)})
    vectors = KeyedVectors(vector_size=16)
    vectors.add_vectors(words, torch.randn(len(words), 16).numpy())
    vectors.save(str(folder / "vectors.kv"))
    return StackedEmbeddings([*lms, WordEmbeddings(str(folder / "vectors.kv"))])


def train(model: SequenceTagger, steps: int = 100) -> SequenceTagger:
    """A few Adam steps on the template sentences, enough to tag persons and places."""
    sentences = [labeled(i) for i in range(20)]
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    model.train()
    for step in range(steps):
        batch = sentences[step % 2 :: 2]
        loss, count = model.forward_loss(batch)
        optimizer.zero_grad()
        (loss / count).backward()
        optimizer.step()
    model.eval()
    return model


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Five registered taggers (four SequenceTaggers and CSE) over the tiny stack, trained a little and saved."""
    folder = tmp_path_factory.mktemp("predict")
    flair.set_seed(1)
    embeddings = tiny_embeddings(folder)
    dictionary = Dictionary(add_unk=False)
    for kind in ("pers", "place"):
        dictionary.add_item(kind)
    dictionary.span_labels = True  # as Corpus.make_label_dictionary marks span types
    paths = {}
    with torch_threads(1):  # tiny matrices: a second thread only costs
        for name in ("bilstm-crf", "bilstm-crf-noproj", "map-crf", "map", "cse"):
            path = folder / f"{name}.pt"
            train(build_tagger(name, embeddings, dictionary, "ner")).save(path)
            paths[name] = path
    return paths


def sentences() -> list[Sentence]:
    """The test text's sentences and a few of the training template, as fresh sentences."""
    return [Sentence(TEXT.replace("\n", " ")), *(Sentence(labeled(i).to_tokenized_string()) for i in range(20, 26))]


@pytest.mark.parametrize("name", ["bilstm-crf", "bilstm-crf-noproj", "map-crf", "map"])
def test_fast_path_equals_plain_flair(models: dict[str, Path], name: str) -> None:
    model = SequenceTagger.load(models[name])
    expected = flair_tags(model, sentences(), 32)
    exact = FastTagger(model, quantize=False, batch_size=3).tag(sentences())
    assert [[tag for tag, _ in row] for row in exact] == [[tag for tag, _ in row] for row in expected]
    scores = [(c, e) for row, ref in zip(exact, expected) for (tag, c), (_, e) in zip(row, ref) if tag != "O"]
    assert scores and all(abs(c - e) < 1e-4 for c, e in scores)  # Flair gives "O" tokens no score
    quantised = FastTagger(model).tag(sentences())
    pairs = [(q, e) for row, ref in zip(quantised, expected) for (q, _), (e, _) in zip(row, ref)]
    assert sum(q == e for q, e in pairs) >= 0.95 * len(pairs)


def test_fast_path_quantises_the_lms_and_the_taggers_recurrence_and_keeps_its_input_map_in_floating_point(models: dict[str, Path]) -> None:
    model = SequenceTagger.load(models["bilstm-crf"])
    default = FastTagger(model)
    lm_recurrences = [r.hidden for f in default.featurizers for r in getattr(f, "recurrences", [])]
    assert lm_recurrences and all(affine.packed is not None for affine in lm_recurrences)  # the model's character LMs: int8
    head = default.head
    assert all(r.hidden.packed is not None for r in head.recurrences)  # the tagger's recurrence: int8
    kind = torch.bfloat16 if native_bfloat16(torch.device("cpu")) else torch.float32  # its input map: bfloat16 where native
    assert all(affine.packed is None and affine.weight.dtype == kind for affine in head.inputs)
    assert head.output.packed is None and head.output.weight.dtype == torch.float32
    plain = FastTagger(model, head="float32").head
    assert all(affine.packed is None and affine.weight.dtype == torch.float32
               for affine in (*plain.inputs, *(r.hidden for r in plain.recurrences), plain.output))
    whole = FastTagger(model, head="int8").head
    assert all(affine.packed is not None for affine in (*whole.inputs, *(r.hidden for r in whole.recurrences)))
    assert FastTagger(model, quantize=False).head.recurrences[0].hidden.packed is None  # no quantisation: float32 throughout
    with pytest.raises(ValueError, match="head arithmetic must be one of mixed, float32, int8"):
        FastTagger(model, head="int4")


def test_bfloat16_affine_keeps_small_inputs_beside_large_ones() -> None:
    generator = torch.Generator().manual_seed(0)
    weight, bias = torch.randn(8, 6, generator=generator), torch.randn(8, generator=generator)
    small, large = torch.rand(50, 3, generator=generator) * 0.1, torch.randn(50, 3, generator=generator) * 50
    x = torch.cat([small, large], dim=1)
    got = Affine(weight, bias, False, bfloat16=True)(x)
    exact = torch.nn.functional.linear(x, weight, bias)
    assert got.dtype == torch.float32 and not torch.equal(got, exact)
    # about 8 significant bits a value: the error is bounded by the size of the products summed
    assert ((got - exact).abs() <= 2**-6 * (x.abs() @ weight.abs().T)).all()
    # the small block's share of the result, read alone: within its own precision; int8's one scale for the row, set by
    # the large block, leaves nothing of it
    alone = torch.cat([small, torch.zeros_like(large)], dim=1)
    error = Affine(weight, None, False, bfloat16=True)(alone) - torch.nn.functional.linear(alone, weight)
    assert (error.abs() <= 2**-6 * (alone.abs() @ weight.abs().T)).all()
    by_row = Affine(weight, None, True)(x) - Affine(weight, None, True)(torch.cat([torch.zeros_like(small), large], dim=1))
    assert torch.count_nonzero(by_row) == 0


def test_fast_embeddings_equal_flair_embeddings(models: dict[str, Path]) -> None:
    from flairsuite.inference.embed import stack_featurizers

    model = SequenceTagger.load(models["bilstm-crf"])
    flair_sentences = sentences()
    model.embeddings.embed(flair_sentences)
    names = model.embeddings.get_names()
    expected = torch.stack([token.get_embedding(names) for sentence in flair_sentences for token in sentence])
    with torch.inference_mode():
        parts = [featurize(sentences()) for featurize in stack_featurizers(model.embeddings, quantize=False)]
    assert torch.allclose(torch.cat(parts, dim=1), expected, atol=1e-5)


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["predict", *args], catch_exceptions=False)


def test_column_output(models: dict[str, Path], tmp_path: Path) -> None:
    text = write_file(tmp_path / "text.txt", TEXT)
    result = run(str(models["bilstm-crf"]), str(text))
    assert result.exit_code == 0, result.output
    blocks = result.stdout.rstrip("\n").split("\n\n")
    assert len(blocks) == 4  # Flair's splitter: three sentences, one more after the paragraph break
    rows = [line.split("\t") for line in blocks[0].splitlines()]
    assert [token for token, _ in rows][:7] == ["Am", "Montag", "besuchte", "Anna", "die", "Stadt", "Berlin"]
    assert all(tag == "O" or tag[:2] in ("B-", "I-") for _, tag in rows)
    assert dict(rows)["Anna"] == "B-pers" and dict(rows)["Berlin"] == "B-place"
    assert "tagged 4 sentences" in result.stderr


def test_json_output_to_file(models: dict[str, Path], tmp_path: Path) -> None:
    text = write_file(tmp_path / "text.txt", TEXT)
    out = tmp_path / "out" / "tagged.jsonl"
    result = run(str(models["bilstm-crf"]), str(text), "--format", "json", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    objects = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(objects) == 4
    assert objects[2]["text"] == "Marie   liebte  die Stadt München."
    found = set()
    for sentence in objects:
        assert TEXT[sentence["start_char"] :].startswith(sentence["text"])
        assert len(sentence["tags"]) == len(sentence["tokens"])
        for span in sentence["spans"]:
            surface = TEXT[span["start_char"] : span["end_char"]]
            assert surface.startswith(sentence["tokens"][span["start"]]) and surface.endswith(sentence["tokens"][span["end"] - 1])
            assert 0.0 <= span["confidence"] <= 1.0
            found.add((surface, span["type"]))
    assert {("Anna", "pers"), ("Berlin", "place")} <= found


def test_zero_width_characters_keep_offsets_in_the_file(models: dict[str, Path], tmp_path: Path) -> None:
    """Flair's Sentence drops U+200B and U+FEFF before tokenising; offsets still point into the file (JSON and TEI)."""
    original = "Am Mon\u200btag besuchte\ufeff Anna die Stadt Berlin, sagte der König vor Gericht."
    text = write_file(tmp_path / "zw.txt", original)
    result = run(str(models["bilstm-crf"]), str(text), "--format", "json")
    assert result.exit_code == 0, result.output
    found = set()
    for sentence in (json.loads(line) for line in result.stdout.splitlines()):
        for span in sentence["spans"]:
            found.add((original[span["start_char"] : span["end_char"]], span["type"]))
    assert {("Anna", "pers"), ("Berlin", "place")} <= found  # after the dropped characters, not shifted by them
    tei = run(str(models["bilstm-crf"]), str(text), "--format", "tei")  # it used to stop: "token offsets do not match"
    assert tei.exit_code == 0, tei.output
    assert ">Anna</" in tei.stdout and ">Berlin</" in tei.stdout and "Mon\u200btag" in tei.stdout


def never_fast(*args, **kwargs):
    raise AssertionError("--no-fast built the fast tagger")


def test_plain_flair_cli_path(models: dict[str, Path], tmp_path: Path, monkeypatch) -> None:
    text = write_file(tmp_path / "text.txt", TEXT)
    with monkeypatch.context() as patched:
        patched.setattr("flairsuite.inference.raw_tags.FastTagger", never_fast)  # --no-fast is the model's own predict
        plain = run(str(models["map"]), str(text), "--no-fast", "--batch-size", "2")
    assert plain.exit_code == 0, plain.output
    exact = FastTagger(SequenceTagger.load(models["map"]), quantize=False).tag(split(TEXT))
    assert [line.split("\t")[1] for line in plain.stdout.splitlines() if line] == [tag for row in exact for tag, _ in row]




@pytest.mark.parametrize(
    "content, message",
    [
        (None, "file not found"),
        (b"", "no text to tag: the file is empty or blank"),
        (b" \n\t\n", "no text to tag: the file is empty or blank"),
        (b"Anna ging nach Berlin.\nC\xe4sar kam.\n", "2: not valid utf-8: byte 0xe4 at column 2"),
    ],
)
def test_bad_input_is_one_error_line(models: dict[str, Path], tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "input.txt"
    if content is not None:
        path.write_bytes(content)
    line = one_error_line(run(str(models["map"]), str(path)))
    assert line.startswith(f"Error: {path}") and message in line


def test_bad_model_is_one_error_line(models: dict[str, Path], tmp_path: Path) -> None:
    text = write_file(tmp_path / "text.txt", TEXT)
    assert "model file not found" in one_error_line(run(str(tmp_path / "none.pt"), str(text)))
    garbage = write_file(tmp_path / "garbage.pt", b"not a model")
    assert "not a loadable flairsuite tagger model" in one_error_line(run(str(garbage), str(text)))
    foreign = tmp_path / "classifier.pt"
    torch.save({"__cls__": "TextClassifier", "state_dict": {}}, foreign)
    line = one_error_line(run(str(foreign), str(text)))
    assert line == f"Error: {foreign}: a TextClassifier, not a flairsuite tagger model (one of ClassStartEndTagger, SequenceTagger)"
    lm = tmp_path / "lm.pt"
    SequenceTagger.load(models["map"]).embeddings.embeddings[0].lm.save(lm)
    assert one_error_line(run(str(lm), str(text))).startswith(f"Error: {lm}: ")


@pytest.mark.parametrize("fmt", ["column", "json"])
@pytest.mark.parametrize("name, content", [("letter.xml", "Anna ging nach Berlin."), ("letter.txt", "\ufeff <TEI><p>Anna</p></TEI>")])
def test_xml_input_to_a_plain_text_format_is_tagged_as_text_and_said(models: dict[str, Path], tmp_path: Path, fmt: str, name: str, content: str) -> None:
    path = write_file(tmp_path / name, content)
    result = run(str(models["map"]), str(path), "--format", fmt)
    assert result.exit_code == 0 and "Anna" in result.stdout
    assert result.stderr.strip().endswith("the file looks like TEI/XML and was read as plain text, markup included (--format tei or html tag its text blocks)")
    plain = run(str(models["map"]), str(write_file(tmp_path / "plain.txt", "Anna ging nach Berlin.")), "--format", fmt)
    assert "TEI/XML" not in plain.stderr


def test_folder_as_input_is_one_error_line(models: dict[str, Path], tmp_path: Path) -> None:
    expected = f"Error: {tmp_path}: a folder: give --out DIR, the folder for their outputs (one file per input)"  # a folder takes --out DIR
    assert one_error_line(run(str(models["map"]), str(tmp_path))) == expected


def test_entity_fix_option_repairs_raw_tags(models: dict[str, Path], tmp_path: Path) -> None:
    model = SequenceTagger.load(models["map"])
    with torch.no_grad():  # every token's best tag becomes I-place: ill-formed at each sentence start
        model.linear.bias[model.label_dictionary.get_idx_for_item("I-place")] += 100.0
    model.save(tmp_path / "stray.pt")
    text = write_file(tmp_path / "text.txt", TEXT)
    raw, repaired = (run(str(tmp_path / "stray.pt"), str(text), "--keep-raw-spans", *flag) for flag in ([], ["--entity-fix"]))
    assert raw.exit_code == repaired.exit_code == 0, raw.output + repaired.output
    raw_blocks = [[line.split("\t") for line in block.splitlines()] for block in raw.stdout.rstrip("\n").split("\n\n")]
    fixed_blocks = [[line.split("\t") for line in block.splitlines()] for block in repaired.stdout.rstrip("\n").split("\n\n")]
    assert all(tag == "I-place" for block in raw_blocks for _, tag in block)
    for raw_rows, fixed_rows in zip(raw_blocks, fixed_blocks, strict=True):
        assert [token for token, _ in fixed_rows] == [token for token, _ in raw_rows]
        assert [tag for _, tag in fixed_rows] == ["B-place"] + ["I-place"] * (len(raw_rows) - 1)


def test_load_tagger_accepts_the_classes_of_the_registry(models: dict[str, Path]) -> None:
    assert saved_classes() == {"SequenceTagger": SequenceTagger, "ClassStartEndTagger": ClassStartEndTagger}
    assert type(load_tagger(models["map"])) is SequenceTagger
    assert type(load_tagger(models["cse"])) is ClassStartEndTagger


def cse_spans(path: Path, sentences: list[Sentence]) -> list[list[tuple[int, int, str, float]]]:
    """The spans `ClassStartEndTagger.predict` gives per sentence: (first token, end exclusive, type, confidence)."""
    model = ClassStartEndTagger.load(path)
    model.predict(sentences)
    return [[(s.tokens[0].idx - 1, s.tokens[-1].idx, s.tag, s.score) for s in sentence.get_spans("ner")] for sentence in sentences]


def bio_spans(tagged: list[list[tuple[str, float]]]) -> list[list[tuple[int, int, str, float]]]:
    """Spans read from (tag, confidence) rows as `predict --format json` reads them."""
    return [
        [(ids[0], ids[-1] + 1, kind, score) for ids, score, kind in get_spans_from_bio([t for t, _ in row], [c for _, c in row])] for row in tagged
    ]


def test_cse_fast_and_plain_paths_give_cse_spans(models: dict[str, Path]) -> None:
    expected = cse_spans(models["cse"], sentences())
    assert sum(map(len, expected)) >= 7  # every sentence's person and place, and some in the test text
    model = load_tagger(models["cse"])
    plain = flair_tags(model, sentences(), 32)
    exact = FastTagger(model, quantize=False, batch_size=3).tag(sentences())
    quantised = tag(model, sentences(), True, None)
    assert [[t for t, _ in row] for row in exact] == [[t for t, _ in row] for row in plain] == [[t for t, _ in row] for row in quantised]
    for found, tolerance in ((plain, 1e-9), (exact, 1e-5), (quantised, 2e-2)):
        spans = bio_spans(found)
        assert [[span[:3] for span in row] for row in spans] == [[span[:3] for span in row] for row in expected]
        assert all(abs(a[3] - b[3]) <= tolerance for row, ref in zip(spans, expected) for a, b in zip(row, ref))


@pytest.mark.parametrize("flags", [[], ["--no-fast"]])
def test_cse_cli_json_spans(models: dict[str, Path], tmp_path: Path, flags: list[str]) -> None:
    text = write_file(tmp_path / "text.txt", TEXT)
    result = run(str(models["cse"]), str(text), "--format", "json", *flags)
    assert result.exit_code == 0, result.output
    objects = [json.loads(line) for line in result.stdout.splitlines()]
    expected = cse_spans(models["cse"], split(TEXT))
    assert [[(s["start"], s["end"], s["type"]) for s in o["spans"]] for o in objects] == [[span[:3] for span in row] for row in expected]
    tolerance = 1e-4 if flags else 2e-2  # --no-fast: CSE's own confidences, rounded to 4 places
    assert all(abs(s["confidence"] - span[3]) <= tolerance for o, row in zip(objects, expected) for s, span in zip(o["spans"], row))
    surfaces = {(TEXT[s["start_char"] : s["end_char"]], o["tokens"][s["start"]], s["type"]) for o in objects for s in o["spans"]}
    assert {kind for _, _, kind in surfaces} == {"pers", "place"} and all(surface == token for surface, token, _ in surfaces)
    columns = run(str(models["cse"]), str(text), *flags)
    assert [line.split("\t")[1] for line in columns.stdout.splitlines() if line] == [t for o in objects for t in o["tags"]]


def test_cse_fast_and_plain_cli_tags_agree(models: dict[str, Path], tmp_path: Path, monkeypatch) -> None:
    text = write_file(tmp_path / "text.txt", TEXT)
    fast = run(str(models["cse"]), str(text))
    with monkeypatch.context() as patched:
        patched.setattr("flairsuite.inference.raw_tags.FastTagger", never_fast)
        plain = run(str(models["cse"]), str(text), "--no-fast")
    assert fast.exit_code == plain.exit_code == 0, fast.output + plain.output
    assert fast.stdout == plain.stdout
