"""The `bert:NAME` embedding kind on tiny BERTs built here (absolute + full, relative + full, relative + WWA).

Covers: the spec grammar and its one-line errors; the cache key (config, weights, tokenizer; not
train-bert's own files); Flair's vectors equal a direct call of the model on the same sub-tokens
(first-subtoken and mean pooling, layer choice); no network; the switch to fine-tuning. Then
`flairsuite tag` on a fake Sturm with `fine_tune: [false, true]` and every head (Entity-Fix too):
only the BERT trains, the char-LM stays cached; exact resume of a fine-tuned run (also after a real SIGKILL of
`flairsuite tag`); the saved taggers
load in fresh processes (plain Flair without flairsuite for the absolute BERT, after
`import flairsuite.bert` for relative/WWA ones) and run in `flairsuite predict`.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import flair
import pytest
import torch
from conftest import german_text, train_tiny_embeddings, write_file
from flair.data import Sentence
from flair.embeddings import TransformerWordEmbeddings
from flair.models import SequenceTagger
from safetensors.torch import load_file
from test_tag_grid import DEV, TEST, TRAIN, read_predictions, tag, write_sturm
from transformers import AutoModel, AutoTokenizer

from flairsuite import embeddings
from flairsuite.bert.build import build_model, save_model
from flairsuite.bert.settings import settings_from
from flairsuite.bert.vocabulary import continuation_ids, hf_tokenizer, train_wordpiece
from flairsuite.embeddings import artifact_digest, artifact_path, resolve, set_trainable, stack, token_vectors
from flairsuite.errors import FlairsuiteError
from flairsuite.experiments.corpus_choice import CorpusChoice
from flairsuite.experiments.run_data import embedding_modules, tag_dictionary
from flairsuite.files.paths import bert_dir
from flairsuite.models.registry import build_tagger, fine_tune_train
from flairsuite.models.settings import TrainSettings
from flairsuite.tagging.data import load_labeled
from flairsuite.tagging.features import SplitFeatures
from flairsuite.tagging.tagger_training import TaggerTraining, train_tagger

REPO = Path(__file__).resolve().parents[1]
MODELS = {"abs": ("absolute", "full"), "rel": ("relative", "full"), "wwa": ("relative", "wwa")}
HEADS = ["bilstm-crf", "map-crf", "map", "lcrf-ner", "cse"]
WORDS = "Am 12. März kam Herwarth Walden nach Donaudampfschifffahrtsgesellschaft .".split()


def save_tiny_bert(folder: Path, text: Path, positions: str, attention: str, seed: int) -> None:
    """A randomly initialised 2-layer BERT (hidden 16) with a 120-piece WordPiece vocabulary, saved as train-bert saves one."""
    overrides = {"positions": positions, "attention": attention, "layers": 2, "hidden_size": 16, "heads": 2, "seq_len": 64,
                 "vocab_size": 120, "relative_clip": 4, "window": 2}
    settings = settings_from("cpu", overrides)
    tokenizer = train_wordpiece(text, settings.vocab_size, min_frequency=1)
    torch.manual_seed(seed)
    model = build_model(settings, tokenizer.get_vocab_size(), continuation_ids(tokenizer))
    save_model(model, hf_tokenizer(tokenizer, settings.seq_len), folder)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A home with a tiny `charlm/de-forward` and the tiny BERTs `bert/abs`, `bert/rel`, `bert/wwa`."""
    root = tmp_path_factory.mktemp("bert-kind")
    home = train_tiny_embeddings(root, "forward")
    sentences = [" ".join(word.rsplit("/", 1)[0] for word in line.split()) for line in (TRAIN + "\n" + DEV + "\n" + TEST).splitlines()]
    text = write_file(root / "wordpiece.txt", "\n".join(sentences) + "\n" + german_text(40))
    for seed, (name, (positions, attention)) in enumerate(MODELS.items()):
        save_tiny_bert(bert_dir(home) / name, text, positions, attention, seed)
    return home


# ---------------------------------------------------------------------------------------------------------------------
# the kind
# ---------------------------------------------------------------------------------------------------------------------


def test_specs_resolve_with_pooling_and_layers(home: Path) -> None:
    assert embeddings.parse("bert:rel@mean@last2") == ("bert", "rel@mean@last2")
    assert artifact_path("bert:rel@mean", home) == home / "bert" / "rel" / "config.json"
    chosen = {spec: resolve(spec, home) for spec in ("bert:rel", "bert:rel@mean", "bert:rel@last2", "bert:rel@layer0@first")}
    assert all(isinstance(e, TransformerWordEmbeddings) and e.embedding_length == 16 and not e.fine_tune for e in chosen.values())
    assert [(e.subtoken_pooling, e.layer_indexes) for e in chosen.values()] == [("first", [-1]), ("mean", [-1]), ("first", [-1, -2]), ("first", [0])]
    model = chosen["bert:rel"].model  # no separator token added: the vocabulary stays as trained
    assert len(chosen["bert:rel"].tokenizer) == model.config.vocab_size == model.get_input_embeddings().num_embeddings
    assert stack(["charlm:de-forward", "bert:wwa"], home).embedding_length == 16 + 16
    assert embeddings.build_command("bert:de-cpu@mean") == "flairsuite train-bert --lang de"
    assert embeddings.build_command("bert:de-paper") == "flairsuite train-bert --lang de --preset paper"
    assert embeddings.build_command("bert:mine") == "flairsuite train-bert --lang LANG --name mine"


OPTIONS = "options are @first or @mean (sub-token pooling) and @lastN or @layerK (layers), e.g. bert:de-cpu@mean@last4"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("bert", "embedding spec 'bert' needs a name, e.g. bert:de-cpu"),
        ("bert:@mean", "embedding spec 'bert:@mean': write bert:NAME, with options after it, e.g. bert:de-cpu@mean"),
        ("bert:rel@max", f"embedding spec 'bert:rel@max': unknown option '@max': {OPTIONS}"),
        ("bert:rel@last0", f"embedding spec 'bert:rel@last0': unknown option '@last0': {OPTIONS}"),
        ("bert:rel@mean@first", f"embedding spec 'bert:rel@mean@first': give at most one pooling and one layer option: {OPTIONS}"),
        ("bert:rel@last2@layer-1", f"embedding spec 'bert:rel@last2@layer-1': give at most one pooling and one layer option: {OPTIONS}"),
        ("bert:rel@last4", "bert:rel@last4: {home}/bert/rel has 2 layers and the embedding layer: choose layers -3 to 2 (@last3: all)"),
        ("bert:rel@layer3", "bert:rel@layer3: {home}/bert/rel has 2 layers and the embedding layer: choose layers -3 to 2 (@last3: all)"),
        ("bert:de-cpu", "{home}/bert/de-cpu/config.json not found: run `flairsuite train-bert --lang de`"),
        ("bert:news@mean", "{home}/bert/news/config.json not found: run `flairsuite train-bert --lang LANG --name news`"),
    ],
)
def test_bad_specs_are_one_line_errors(home: Path, spec: str, message: str) -> None:
    with pytest.raises(FlairsuiteError) as caught:
        stack(["char", spec], home)
    assert str(caught.value) == message.format(home=home)


def test_digest_covers_config_weights_and_tokenizer_not_training_files(home: Path, tmp_path: Path) -> None:
    copy = tmp_path / "home"
    shutil.copytree(home / "bert", copy / "bert")
    digest = artifact_digest("bert:rel", copy)
    assert digest == artifact_digest("bert:rel", home) == artifact_digest("bert:rel@mean", home)  # content, not place or options
    folder = copy / "bert" / "rel"
    names = [path.name for path in embeddings.kind_of("bert:rel")[0].digested(folder / "config.json")]
    assert names == ["config.json", "model.safetensors", "modeling_flairsuite_bert.py", "special_tokens_map.json", "tokenizer.json",
                     "tokenizer_config.json", "vocab.txt"]
    for name in ("checkpoint.pt", "summary.json", "learning-curve.png"):  # train-bert's own files
        write_file(folder / name, "more training")
    assert artifact_digest("bert:rel", copy) == digest
    seen = {digest}
    for name in ("config.json", "model.safetensors", "vocab.txt"):
        with (folder / name).open("ab") as handle:
            handle.write(b"\n")
        seen.add(artifact_digest("bert:rel", copy))
    assert len(seen) == 4


def test_digest_reads_the_model_code_that_runs_not_the_folder_copy(home: Path, tmp_path: Path, monkeypatch) -> None:
    from flairsuite.embeddings import bert as bert_kind

    copy = tmp_path / "home"
    shutil.copytree(home / "bert", copy / "bert")
    digest = artifact_digest("bert:rel", copy)
    with (copy / "bert" / "rel" / "modeling_flairsuite_bert.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# an older copy saved with the model\n")  # not what computes the vectors
    assert artifact_digest("bert:rel", copy) == digest
    changed = tmp_path / "code" / "modeling_flairsuite_bert.py"
    write_file(changed, bert_kind.RUNNING_MODEL_CODE.read_text(encoding="utf-8") + "\n# e.g. a new entity matching\n")
    monkeypatch.setattr(bert_kind, "RUNNING_MODEL_CODE", changed)
    assert artifact_digest("bert:rel", copy) != digest  # the code that runs changed: caches on this model are computed again


@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("options", ["", "@mean", "@last2"])
def test_flair_vectors_equal_a_direct_model_call(home: Path, model: str, options: str) -> None:
    """Flair's TransformerWordEmbeddings (via the spec) against the model run by hand on the same WordPiece ids."""
    folder = bert_dir(home) / model
    tokenizer = AutoTokenizer.from_pretrained(folder)
    direct = AutoModel.from_pretrained(folder).eval()
    pieces = [tokenizer.tokenize(word) for word in WORDS]
    assert max(len(word) for word in pieces) >= 3  # multi-piece words: pooling and WWA's word grouping matter
    ids = [tokenizer.cls_token_id] + [i for word in pieces for i in tokenizer.convert_tokens_to_ids(word)] + [tokenizer.sep_token_id]
    with torch.no_grad():
        states = direct(torch.tensor([ids]), output_hidden_states=True).hidden_states
    hidden = torch.stack([states[-1][0], states[-2][0]]).mean(0) if options == "@last2" else states[-1][0]
    expected, start = [], 1
    for word in pieces:
        expected.append(hidden[start : start + len(word)].mean(0) if options == "@mean" else hidden[start])
        start += len(word)
    found = token_vectors(resolve(f"bert:{model}{options}", home), [Sentence(WORDS)])
    assert found.shape == (len(WORDS), 16)
    assert torch.allclose(found, torch.stack(expected), atol=1e-5)
    first = hidden[[1 + sum(len(p) for p in pieces[:k]) for k in range(len(WORDS))]]
    assert options == "@mean" or torch.allclose(found, first, atol=1e-5)
    assert options != "@mean" or not torch.allclose(found, first, atol=1e-3)


@pytest.mark.parametrize("model", list(MODELS))
def test_a_sentence_longer_than_the_models_sequences_is_embedded_whole(home: Path, model: str) -> None:
    """LER has sentences of up to 2,096 WordPiece pieces, 10 % of its test tokens in sentences over the `cpu` preset's 128:
    Flair's default cut them off and gave every word after the cut a zero vector. Now overlapping windows cover it all."""
    folder = bert_dir(home) / model
    embedding = resolve(f"bert:{model}", home)
    tokenizer, length = embedding.tokenizer, embedding.tokenizer.model_max_length
    words = WORDS * 12
    pieces = [tokenizer.tokenize(word) for word in words]
    flat = [piece for word in pieces for piece in word]
    assert len(flat) > 2 * length
    found = token_vectors(embedding, [Sentence(words)])
    assert found.shape == (len(words), 16) and bool((found.abs().sum(1) > 0).all())
    # the sentence's first pieces (up to half a stride) come from the first window, the model run on its first pieces alone
    window = [tokenizer.cls_token_id] + tokenizer.convert_tokens_to_ids(flat[: length - 2]) + [tokenizer.sep_token_id]
    with torch.no_grad():
        hidden = AutoModel.from_pretrained(folder).eval()(torch.tensor([window])).last_hidden_state[0]
    firsts = [1 + sum(len(p) for p in pieces[:k]) for k in range(len(words))]
    inside = [k for k, position in enumerate(firsts) if position <= embedding.stride // 2]
    assert len(inside) >= 3
    assert torch.allclose(found[inside], hidden[[firsts[k] for k in inside]], atol=1e-5)


def test_fine_tuning_switch(home: Path) -> None:
    assert embeddings.frozen("bert:rel") and not embeddings.frozen("bert:rel", fine_tune=True)
    embedding = resolve("bert:wwa", home)
    set_trainable("bert:wwa", embedding, False)
    assert not any(p.requires_grad for p in embedding.parameters()) and embedding.static_embeddings
    set_trainable("bert:wwa", embedding, True)
    assert all(p.requires_grad for p in embedding.parameters()) and embedding.fine_tune and not embedding.static_embeddings
    embedding.train()
    vectors = token_vectors(embedding, [Sentence(WORDS)])
    # A fixed projection, not the plain sum: the last LayerNorm (gain 1 at initialisation) makes each vector's sum a
    # constant, so the sum's gradient reached the encoder only through dropout and vanished for 5 draws in 200
    (vectors * torch.randn(vectors.shape[-1], generator=torch.Generator().manual_seed(0))).sum().backward()
    layers = embedding.model.encoder
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in layers.parameters())
    char = resolve("char", home)
    set_trainable("char", char, False)  # a kind that always trains
    assert all(p.requires_grad for p in char.parameters())


NO_NETWORK = """
import socket, sys
def refuse(*args, **kwargs):
    raise RuntimeError("network touched")
socket.socket.connect = socket.create_connection = socket.getaddrinfo = refuse
from pathlib import Path
from flair.data import Sentence
from flairsuite.embeddings import resolve, token_vectors
vectors = token_vectors(resolve("bert:" + sys.argv[2], Path(sys.argv[1])), [Sentence("Am Montag kam Anna".split())])
print(tuple(vectors.shape))
"""


@pytest.mark.parametrize("model", ["abs", "wwa"])
def test_no_network_is_touched(home: Path, model: str) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("HF_", "TRANSFORMERS_"))}
    done = subprocess.run([sys.executable, "-c", NO_NETWORK, str(home), model], env={**env, "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "(4, 16)"


# ---------------------------------------------------------------------------------------------------------------------
# flairsuite tag with fine_tune: [false, true]
# ---------------------------------------------------------------------------------------------------------------------


def experiment(path: Path, name: str, stacks: dict[str, list[str]], taggers: list[str], fine_tune: str, extra: str = "") -> Path:
    lines = [f"name: {name}", "corpora: [sturm]", "embeddings:", *[f"  {stack}: [{', '.join(specs)}]" for stack, specs in stacks.items()],
             f"taggers: [{', '.join(taggers)}]", "seeds: [1]", "train: {max_epochs: 1, mini_batch_size: 4}", f"fine_tune: {fine_tune}",
             "fine_tune_train: {max_epochs: 2, epoch_samples: 12, mini_batch_size: 4}", extra]
    return write_file(path, "\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def tagged(home: Path, tmp_path_factory):
    """Two grids, run once: `heads` (char-LM + relative BERT, every head, fine_tune false/true, Entity-Fix false/true) and
    `plain` (absolute BERT, and WWA BERT, fine-tuned under map-crf). Returns (home, corpora, results folder)."""
    root = tmp_path_factory.mktemp("bert-tag")
    work = root / "home"
    shutil.copytree(home, work)
    corpora = write_sturm(root / "corpora")
    heads = experiment(root / "heads.yaml", "heads", {"lm+rel": ["charlm:de-forward", "bert:rel"]}, HEADS, "[false, true]",
                       "entity_fix: [false, true]")
    plain = experiment(root / "plain.yaml", "plain", {"abs": ["bert:abs"], "wwa": ["bert:wwa"]}, ["map-crf"], "true")
    for path in (heads, plain):
        result = tag(work, corpora, path)
        assert result.exit_code == 0, result.output
    return work, corpora, work / "results"


def test_fine_tuned_runs_sit_below_ft_and_record_the_bert(tagged) -> None:
    home, _, results = tagged
    digest = artifact_digest("bert:rel", home)
    for tuned in (False, True):
        for head in HEADS:
            run = f"sturm/lm+rel/{'ft/' if tuned else ''}{head}/seed-1"
            for fix in (False, True):
                metrics = json.loads((results / "heads" / run / ("entity-fix/" if fix else "") / "metrics.json").read_text())
                assert (metrics["run"], metrics["fine_tune"], metrics["entity_fix"]) == (run + ("/entity-fix" if fix else ""), tuned, fix)
                assert metrics["artifact_digests"] == {"charlm:de-forward": artifact_digest("charlm:de-forward", home), "bert:rel": digest}
            train = metrics["train"]
            if tuned:
                assert (train["optimizer"], train["schedule"], train["epoch_samples"], metrics["epochs"]) == ("adamw", "linear", 12, 2)
                # 3 batches of 4 per epoch, 6 in all: a warm-up of int(0.1 * 6) = 0 batches, then linear decay to 0 at batch 6
                assert [point["lr"] for point in metrics["history"]] == [5e-5, 2.5e-5]
            else:
                assert train["optimizer"] in ("sgd", "adam") and "schedule" not in train and metrics["epochs"] == 1
    cached = sorted(path.name for path in (home / "cache" / "embeddings").iterdir())
    assert cached == ["bert-rel", "charlm-de-forward"]  # the frozen runs cached the BERT; the char-LM is cached for all


def bert_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The BERT's weights in a loaded tagger, by their names in the model folder's safetensors (`bert.` prefix)."""
    module = next(m for m in embedding_modules(model.embeddings) if isinstance(m, TransformerWordEmbeddings))
    return {f"bert.{key}": value for key, value in module.model.state_dict().items()}


def test_only_the_bert_trains_when_fine_tuning(tagged) -> None:
    from flair.models import SequenceTagger

    from flairsuite.models.cse import ClassStartEndTagger

    home, _, results = tagged
    original = load_file(str(bert_dir(home) / "rel" / "model.safetensors"))
    lm = torch.load(home / "charlm" / "de-forward" / "best-lm.pt", map_location="cpu", weights_only=False)["state_dict"]
    for head in HEADS:
        cls = ClassStartEndTagger if head == "cse" else SequenceTagger
        for tuned in (False, True):
            model = cls.load(results / "heads" / "sturm" / "lm+rel" / ("ft" if tuned else "") / head / "seed-1" / "model.pt")
            weights = bert_weights(model)
            assert sum(key in weights for key in original) > 10
            changed = [key for key, value in original.items() if key in weights and not torch.equal(weights[key], value)]
            assert bool(changed) == tuned, (head, tuned)
            charlm = next(m for m in embedding_modules(model.embeddings) if not isinstance(m, TransformerWordEmbeddings))
            assert all(torch.equal(value, lm[key]) for key, value in charlm.lm.state_dict().items())  # the LM never trains


LOADER = """
import json, sys
if sys.argv[2] == "no-flairsuite":
    sys.modules["flairsuite"] = None
elif sys.argv[2] == "flairsuite.bert":
    import flairsuite.bert
from flair.data import Sentence
from flair.models import SequenceTagger
try:
    tagger = SequenceTagger.load(sys.argv[1])
except Exception as err:
    print(json.dumps({"error": f"{type(err).__name__}: {err}"}))
    raise SystemExit(0)
tags = []
for tokens in json.loads(sys.argv[3]):
    sentence = Sentence(tokens)
    tagger.predict(sentence, label_name="raw", force_token_predictions=True)
    tags.append([token.get_label("raw").value for token in sentence])
print(json.dumps({"tags": tags, "flairsuite": any(name.split(".")[0] == "flairsuite" for name in sys.modules if sys.modules[name])}))
"""


def load_in_fresh_process(model: Path, mode: str, sentences: list[list[str]]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", LOADER, str(model), mode, json.dumps(sentences)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "run, mode, loads",
    [
        ("plain/sturm/abs/ft/map-crf/seed-1", "no-flairsuite", True),  # absolute + full: a plain BertModel
        ("heads/sturm/lm+rel/ft/map-crf/seed-1", "plain", False),  # relative: Flair cannot rebuild "flairsuite_bert" ...
        ("heads/sturm/lm+rel/ft/map-crf/seed-1", "flairsuite.bert", True),  # ... until flairsuite.bert registered it
        ("heads/sturm/lm+rel/lcrf-ner/seed-1", "flairsuite.bert", True),
        ("plain/sturm/wwa/ft/map-crf/seed-1", "flairsuite.bert", True),
    ],
)
def test_saved_taggers_load_in_a_fresh_process(tagged, run: str, mode: str, loads: bool) -> None:
    results = tagged[2]
    predicted = read_predictions(results / run / "predictions.tsv")
    found = load_in_fresh_process(results / run / "model.pt", mode, [[row[0] for row in sentence] for sentence in predicted])
    if not loads:
        assert "flairsuite_bert" in found["error"]
        return
    assert found["flairsuite"] == (mode == "flairsuite.bert")
    assert found["tags"] == flair_tags(results / run / "model.pt", [[row[0] for row in sentence] for sentence in predicted])
    if "lm+" not in run:  # no cached member: the suite decoded the very same float32 features
        assert found["tags"] == [[row[2] for row in sentence] for sentence in predicted]


def flair_tags(model: Path, sentences: list[list[str]]) -> list[list[str]]:
    """The raw tags of Flair's own `predict` with the saved model, here on one thread as the fresh process runs it.

    With a cached member (the char LM) the suite decodes from float16 features: on these tiny, barely
    trained heads near-tied scores can then differ from Flair's float32 path, so those runs are compared
    with Flair's own prediction only.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tagger = SequenceTagger.load(model)
        tags = []
        for tokens in sentences:
            sentence = Sentence(tokens)
            tagger.predict(sentence, label_name="raw", force_token_predictions=True)
            tags.append([token.get_label("raw").value for token in sentence])
        return tags
    finally:
        torch.set_num_threads(threads)


@pytest.mark.parametrize("run", ["plain/sturm/abs/ft/map-crf/seed-1", "heads/sturm/lm+rel/ft/cse/seed-1", "plain/sturm/wwa/ft/map-crf/seed-1"])
def test_flairsuite_predict_runs_the_taggers(tagged, tmp_path: Path, run: str) -> None:
    text = write_file(tmp_path / "text.txt", "Am Montag kam Anna nach Berlin. Herwarth Walden schrieb aus Wien.\n")
    code = "import sys; from flairsuite.cli import main; sys.argv = ['flairsuite', *sys.argv[1:]]; main()"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    outputs, texts = [], []
    for fast in ("--fast", "--no-fast"):
        command = [sys.executable, "-c", code, "predict", str(tagged[2] / run / "model.pt"), str(text), fast, "--keep-raw-spans"]
        done = subprocess.run(command, env=env, capture_output=True, text=True)  # the raw tags: what Flair's predict gives
        assert done.returncode == 0, done.stderr[-3000:]
        outputs.append([line.split("\t") for line in done.stdout.split("\n") if "\t" in line])  # (Flair logs to stdout too)
        texts.append(done.stdout)
    rows = outputs[0]
    assert [token for token, _ in rows][:6] == ["Am", "Montag", "kam", "Anna", "nach", "Berlin"]
    assert all(tag == "O" or tag[:2] in ("B-", "I-") for _, tag in rows)
    assert run.startswith("heads/") or outputs[0] == outputs[1]  # (with a char-LM the fast path runs its LSTM in int8)
    if run.startswith("plain/"):  # a SequenceTagger: --no-fast is Flair's own predict, tag for tag
        sentences = [[line.split("\t") for line in block.splitlines() if "\t" in line] for block in texts[1].split("\n\n")]
        sentences = [sentence for sentence in sentences if sentence]
        assert len(sentences) == 2
        assert [[tag for _, tag in sentence] for sentence in sentences] == flair_tags(
            tagged[2] / run / "model.pt", [[token for token, _ in sentence] for sentence in sentences])


# ---------------------------------------------------------------------------------------------------------------------
# exact resume of a fine-tuned run
# ---------------------------------------------------------------------------------------------------------------------


def tuned_setup(home: Path, corpora: Path, seed: int) -> tuple[torch.nn.Module, dict[str, SplitFeatures]]:
    """An untrained map-crf over a fine-tuned `bert:wwa`, its initial weights fixed by `seed`, and the splits with the BERT live."""
    flair.set_seed(seed)
    model = build_tagger("map-crf", stack(["bert:wwa"], home), tag_dictionary(CorpusChoice("sturm", {})), "ner")
    set_trainable("bert:wwa", model.embeddings, True)
    return model, {name: SplitFeatures(split, [model.embeddings]) for name, split in load_labeled("sturm", {}, None, corpora).items()}


@pytest.mark.parametrize("decoder_learning_rate", [None, 1e-3])
def test_resumed_fine_tuning_equals_uninterrupted(tagged, tmp_path: Path, monkeypatch, decoder_learning_rate) -> None:
    home, corpora, _ = tagged
    settings = {**fine_tune_train("sturm").record(), "max_epochs": 3, "epoch_samples": 10, "mini_batch_size": 4,
                "decoder_learning_rate": decoder_learning_rate}
    whole, data = tuned_setup(home, corpora, 5)
    progress = train_tagger(whole, data["train"], data["dev"], settings, 7, tmp_path / "whole.pt")

    first, data = tuned_setup(home, corpora, 5)
    done = TaggerTraining.done
    with monkeypatch.context() as patch:  # stopped after epoch 1 of 3, as by a kill after its checkpoint (the schedule spans 3 epochs)
        patch.setattr(TaggerTraining, "done", lambda self: self.progress.epoch >= 1 or done(self))
        train_tagger(first, data["train"], data["dev"], settings, 7, tmp_path / "split.pt")
    resumed, data = tuned_setup(home, corpora, 6)  # other initial weights and RNG state: the checkpoint must replace them all
    resumed_progress = train_tagger(resumed, data["train"], data["dev"], settings, 7, tmp_path / "split.pt")

    assert progress.history == resumed_progress.history and len(progress.history) == 3
    assert progress.best_epoch == resumed_progress.best_epoch == 3  # the linear schedule keeps the last epoch
    expected, found = whole.state_dict(), resumed.state_dict()
    assert [key for key in expected if not torch.equal(expected[key], found[key])] == []
    assert any(not torch.equal(value, first.state_dict()[key]) for key, value in expected.items() if key.startswith("embeddings.model."))


def test_decoder_learning_rate_trains_the_head_at_its_own_rate(tagged, tmp_path: Path) -> None:
    home, corpora, _ = tagged
    moved = {}
    for rate in (None, 1e-3):
        settings = {**fine_tune_train("sturm").record(), "max_epochs": 2, "epoch_samples": 8, "mini_batch_size": 4, "decoder_learning_rate": rate}
        model, data = tuned_setup(home, corpora, 5)
        start = model.crf.transitions.detach().clone()
        training = TaggerTraining(model, data["train"], data["dev"], TrainSettings(**settings), 7, tmp_path / f"{rate}.pt")
        groups = [{id(p) for p in group["params"]} for group in training.optimizer.param_groups]
        bert = {id(p) for p in model.embeddings.parameters() if p.requires_grad}
        if rate is None:
            assert groups == [bert | {id(p) for name, p in model.named_parameters() if not name.startswith("embeddings.")}]
        else:
            assert groups[0] == bert and id(model.crf.transitions) in groups[1] and not groups[0] & groups[1]
        assert all(group["fused"] for group in training.optimizer.param_groups)  # torch's fused AdamW (models/settings.py)
        train_tagger(model, data["train"], data["dev"], settings, 7, tmp_path / f"{rate}.pt")
        moved[rate] = (model.crf.transitions.detach() - start).abs().max().item()
    # Adam moves a parameter by about its learning rate a step: 20 times the rate, many times the distance
    assert moved[1e-3] > 5 * moved[None] > 0
    assert "decoder_learning_rate" not in fine_tune_train("sturm").record()  # at its default, no record or fingerprint changes


def test_sigkill_of_a_fine_tuning_tag_process_then_tag_again_gives_the_uninterrupted_run(home: Path, tmp_path: Path) -> None:
    """A real kill (SIGKILL of `flairsuite tag` after an epoch checkpoint), then the same command: the run's history,
    scores and saved weights equal those of a run never interrupted."""
    import signal
    import time

    corpora = write_sturm(tmp_path / "corpora")
    lines = ["name: killed", "corpora: [sturm]", "embeddings: {rel: [bert:rel]}", "taggers: [map-crf]", "seeds: [3]", "fine_tune: true",
             "fine_tune_train: {max_epochs: 30, epoch_samples: 12, mini_batch_size: 4}"]
    path = write_file(tmp_path / "killed.yaml", "\n".join(lines) + "\n")
    homes = {}
    for name in ("whole", "killed"):
        homes[name] = tmp_path / name
        shutil.copytree(home, homes[name])
    command = [sys.executable, "-m", "flairsuite", "tag", str(path), "--threads", "1", "--corpora-dir", str(corpora)]
    env = {**os.environ, "FLAIRSUITE_HOME": str(homes["killed"])}
    run_dir = homes["killed"] / "results" / "killed" / "sturm" / "rel" / "ft" / "map-crf" / "seed-3"
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not (run_dir / "checkpoint.pt").exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    assert process.wait() == -signal.SIGKILL, "the run ended before its first epoch checkpoint could be seen"
    assert (run_dir / "checkpoint.pt").exists() and not (run_dir / "metrics.json").exists()
    epochs_done = torch.load(run_dir / "checkpoint.pt", weights_only=False)["progress"].epoch
    assert 1 <= epochs_done < 30
    for name in ("killed", "whole"):
        done = subprocess.run(command, env={**os.environ, "FLAIRSUITE_HOME": str(homes[name])}, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
    found = [json.loads((homes[name] / run_dir.relative_to(homes["killed"]) / "metrics.json").read_text()) for name in ("whole", "killed")]
    assert found[0]["history"] == found[1]["history"] and len(found[0]["history"]) == 30
    assert (found[0]["dev"], found[0]["test"]) == (found[1]["dev"], found[1]["test"])
    weights = [SequenceTagger.load(homes[name] / run_dir.relative_to(homes["killed"]) / "model.pt").state_dict() for name in ("whole", "killed")]
    assert [key for key in weights[0] if not torch.equal(weights[0][key], weights[1][key])] == []
    assert not (run_dir / "checkpoint.pt").exists()
