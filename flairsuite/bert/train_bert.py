"""`flairsuite train-bert`: prepare and tokenize the raw text, pre-train, write the model folder, summary and curve."""

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

import torch

from flairsuite.bert.build import EntityEntries, entity_entries
from flairsuite.bert.data import TokenizedCorpus, tokenize_corpus
from flairsuite.bert.order_probe import order_accuracies, verdict
from flairsuite.bert.settings import BertSettings, settings_from
from flairsuite.bert.trainer import BertTrainer, PretrainingPass, training_device
from flairsuite.errors import FlairsuiteError
from flairsuite.files.locks import held, refuse_if_busy
from flairsuite.files.paths import bert_data_dir, bert_dir, lexicons_dir
from flairsuite.files.summary_file import write_summary
from flairsuite.lexicon.store import read_lexicon
from flairsuite.pretraining import Panel, RunFolder, budget_from, plot_curve, start_or_resume
from flairsuite.rawtext.language import describe, prepare_language
from flairsuite.rawtext.prepare import PreparedCorpus
from flairsuite.runtime.distributed import Ranks, first_on_rank_zero, leave, ranks_from_environment
from flairsuite.runtime.precision import require_precision, resolved_precision
from flairsuite.training import Budget

CURVE_FILE = "learning-curve.png"
CURVE_PANELS = (Panel("accuracy", "MLM accuracy"), Panel("loss", "MLM loss per masked token"))


def bert_folder(trainer: BertTrainer) -> RunFolder:
    """A BERT model folder for the resume policy: --force removes every file of the folder but hidden ones (a save's
    temporary folder, the lock), since a mix of old and new files could load with the old config.json; a trained model
    without checkpoint cannot be continued."""
    return RunFolder(
        trainer.out, "tokens", trainer.out / "config.json",
        lambda: [path for path in trainer.out.iterdir() if path.is_file() and not path.name.startswith(".")] if trainer.out.is_dir() else [],
    )


def prepared_and_tokenized(options: dict[str, Any], vocab_size: int) -> tuple[PreparedCorpus, TokenizedCorpus]:
    """The raw text of `--lang`/`--corpus`, prepared, and its tokenization (both cached on disk)."""
    prepared = prepare_language(options["lang"], options["corpus"], options["corpora_dir"], seed=options["seed"])
    return prepared, tokenize_corpus(prepared, vocab_size, bert_data_dir())


def lexicon_entries(name: Optional[str]) -> Optional[Callable[[Any], EntityEntries]]:
    """`--lexicon NAME`: lexicons/NAME.tsv read now (a bad file fails before any work), its entries turned into token ids
    once the trainer has its tokenizer."""
    if name is None:
        return None
    path = lexicons_dir() / f"{name}.tsv"
    lexicon = read_lexicon(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return lambda tokenizer: entity_entries(name, lexicon, tokenizer, digest)


def train_bert_command(options: dict[str, Any]) -> Iterator[str]:
    """Run `train-bert`; yields the report lines."""
    settings = settings_from(options["preset"], options)
    budget = budget_from(options["max_hours"], options["max_tokens"], "--max-tokens")
    if options["threads"]:
        torch.set_num_threads(options["threads"])
    name = options["name"] or f"{options['lang']}-{options['preset']}"
    out = (Path(options["out_dir"]) if options["out_dir"] else bert_dir()) / name
    ranks = ranks_from_environment()  # one rank unless started by torchrun
    if settings.batch_size < ranks.world:
        raise FlairsuiteError(f"--batch-size {settings.batch_size} is smaller than the {ranks.world} ranks: each rank needs samples")
    lexicon = lexicon_entries(options.get("lexicon"))
    device = training_device(ranks)
    options = {**options, "precision": resolved_precision(options.get("precision") or "auto", device)}
    require_precision(options["precision"], device, "train-bert --precision", "--precision float32 (or auto)")  # before the data preparation
    if not ranks.parallel:
        refuse_if_busy(out)  # before the data preparation, which can take minutes
    prepared, data = first_on_rank_zero(ranks, lambda: prepared_and_tokenized(options, settings.vocab_size))
    with held(out, ranks):  # one process trains a model folder (rank 0 for a torchrun launch)
        yield from trained_model_lines(options, settings, budget, name, out, ranks, lexicon, prepared, data)


def trained_model_lines(
    options: dict[str, Any], settings: BertSettings, budget: Budget, name: str, out: Path, ranks: Ranks, lexicon: Optional[Callable[[Any], EntityEntries]],
    prepared: PreparedCorpus, data: TokenizedCorpus,
) -> Iterator[str]:
    """`train_bert_command` once the folder is this process's: train, evaluate the best model, write its files; the report lines."""
    trainer = BertTrainer(data, out, settings, options["seed"], ranks, lexicon, options["precision"])
    start_or_resume(trainer, bert_folder(trainer), options["resume"], options["force"])
    if len(trainer.train_samples) < settings.batch_size:
        raise FlairsuiteError(f"the corpus gives {len(trainer.train_samples)} training samples, fewer than one batch; use more text or a smaller --batch-size")
    progress = trainer.train(budget, desc=name)
    trainer.release_ranks()
    leave(ranks)
    if not ranks.main:
        return
    yield from describe(prepared)
    splits = data.meta["splits"]
    yield f"tokenized: {data.path} (vocabulary {data.meta['vocab_size']:,}; train {splits['train']['tokens']:,} tokens)"
    if trainer.precision != "float32":
        yield f"precision: {trainer.precision} (training steps under autocast; weights, optimizer and validation in float32)"
    if trainer.checkpoint_precision != trainer.precision:
        yield (f"precision: resumed a checkpoint trained in {trainer.checkpoint_precision} in {trainer.precision}; "
               "the run is not bit-exact with an uninterrupted one (pass the same --precision to resume exactly)")
    if ranks.parallel:
        yield f"data-parallel: {ranks.world} ranks sharing each batch of {settings.batch_size} samples"
    if trainer.entities is not None:
        entities = trainer.entities
        yield (f"Char-Entity attention: {len(entities.ids):,} entries of lexicon {entities.name} "
               f"({entities.dropped:,} dropped: a unit the vocabulary lacks)")
    best = type(trainer.model).from_pretrained(out).to(trainer.device)
    trainer.model = best
    test_loss, test_accuracy = trainer.evaluate(data.samples("test", trainer.rule.content))
    best_point = min(progress.history, key=lambda point: point["valid_loss"])
    order = None if trainer.rule.pairs else order_accuracies(
        PretrainingPass(best, pairs=False), trainer.valid_samples, trainer.rule, settings.batch_size, min(settings.valid_samples, len(trainer.valid_samples)))
    summary = {
        "model": str(out),
        "tokens_seen": progress.tokens,
        "steps": progress.steps,
        "epochs": round(progress.epoch + progress.offset / len(trainer.train_samples), 4),
        "hours": round(progress.seconds / 3600, 3),
        "tokens_per_second": round(progress.tokens / max(progress.seconds, 1e-9)),
        "valid_loss": round(best_point["valid_loss"], 4),
        "valid_accuracy": round(best_point["valid_accuracy"], 4),
        "test_loss": round(test_loss, 4),
        "test_accuracy": round(test_accuracy, 4),
        "parameters": sum(p.numel() for p in best.parameters()),
        "device": str(trainer.device),
        "threads": torch.get_num_threads(),
        "precision": run_precision(progress.history, {trainer.checkpoint_precision, trainer.precision}),
        "ranks": ranks.world,
        **({"word_order": {"valid_accuracy": round(order.in_order, 4), "shuffled_accuracy": round(order.shuffled, 4), "masked": order.masked}}
           if order is not None else {}),
        "settings": asdict(settings),
        **({"lexicon": {"name": trainer.entities.name, "entries": len(trainer.entities.ids), "sha256": trainer.entities.digest}}
           if trainer.entities is not None else {}),
        "data": data.meta,
        "corpus": prepared.meta,
        "history": progress.history,
    }
    write_summary(out, summary)
    plot_curve(progress.history, f"{name}: masked LM ({settings.objective}, {settings.positions}, {settings.attention})", out / CURVE_FILE,
               "tokens", "tokens", CURVE_PANELS)
    yield f"{'model':<16}{'tokens':>14}{'hours':>8}{'tokens/s':>10}{'valid acc':>11}{'test acc':>10}{'test loss':>11}"
    yield (
        f"{name:<16}{progress.tokens:>14,}{summary['hours']:>8.2f}{summary['tokens_per_second']:>10,}"
        f"{summary['valid_accuracy']:>11.4f}{test_accuracy:>10.4f}{test_loss:>11.4f}"
    )
    if order is not None:
        yield verdict(order)
    yield f"{name}: {out} (summary.json, learning-curve.png); load with transformers: {load_hint(out)}"


def run_precision(history: list[dict[str, Any]], invocations: set[str]) -> str:
    """The training steps' precision over the whole run: one name, or "mixed" when a resume changed it. `invocations`: the
    resumed checkpoint's and this invocation's (each validation point says its own where it is not float32)."""
    used = {point.get("precision", "float32") for point in history} | invocations
    return used.pop() if len(used) == 1 else "mixed"


def load_hint(folder: Path) -> str:
    """How plain transformers loads the folder."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if "auto_map" in config:
        return f"AutoModel.from_pretrained('{folder}', trust_remote_code=True), or after `import flairsuite.bert` without it"
    return f"AutoModel.from_pretrained('{folder}')"
