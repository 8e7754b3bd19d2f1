"""Small-BERT pre-training speed and Whole-Word Attention memory.

Part 1, `train-bert` against transformers' Trainer: the same model (absolute positions, full
attention, the `cpu` preset's size unless changed), the same tokenized German text (the cache
`flairsuite train-bert --lang de` builds), the same batch size, learning rate, warm-up, weight decay
and clipping, each in its own process for the same number of tokens:

  flairsuite    flairsuite.bert.trainer.BertTrainer (masks drawn per sample, MLM head on masked positions only)
  transformers  Trainer + DataCollatorForWholeWordMask (--wwm, default) or DataCollatorForLanguageModeling

It prints tokens/s and their ratio, and the MLM accuracy of both models on the same valid samples
with the same fixed masks (the suite's evaluation). Only absolute positions with full attention can
be compared: transformers has no model with the paper's relative positions or Whole-Word Attention.

Part 2, attention energies and memory of `full` against `wwa` (relative positions both) at 128, 320
and 450 tokens of real German text: the energy values each layer computes (counted from the score
tensors while the model runs, per head and sequence), Eq. 9 of the paper with the measured word
count m (n^2 against m^2 + (2w+1) n), and the peak RSS added by one forward and backward pass of a batch
(each in its own process; the peak is reset through /proc/self/clear_refs just before).

Part 3 (`--part precision`, not in `both`), the suite's trainer in float32 against bfloat16 autocast (`train-bert
--precision`): the `cpu` preset as `train-bert` trains it (relative positions, full attention), the same tokens, seed
and masks, each in its own process; tokens/s, their ratio, and the MLM accuracy of both on the same valid samples with
the same fixed masks, evaluated in float32. Needs a CPU or GPU with native bfloat16 (AVX-512 BF16 or AMX).

    python benchmarks/bert_speed.py                 # parts 1 and 2, about 20 minutes on 2 cores
    python benchmarks/bert_speed.py --part memory   # part 2 only
    python benchmarks/bert_speed.py --part precision --threads 1   # part 3, about 12 minutes on one Zen 4 core
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from common import machine, run_main

from flairsuite.bert.data import TokenizedCorpus, tokenize_corpus
from flairsuite.bert.settings import settings_from
from flairsuite.bert.trainer import BertTrainer
from flairsuite.bert.vocabulary import CLS, PAD, SEP
from flairsuite.files.atomic import write_json
from flairsuite.files.paths import bert_data_dir
from flairsuite.rawtext.language import prepare_language
from flairsuite.runtime.precision import PRECISIONS, native_bfloat16
from flairsuite.training import Budget

HERE = Path(__file__).resolve().parent
LENGTHS = (128, 320, 450)
PARTS = ("speed", "memory", "both", "precision")


def corpus(vocab_size: int) -> TokenizedCorpus:
    return tokenize_corpus(prepare_language("de", (), None), vocab_size, bert_data_dir())


def settings(args: argparse.Namespace, **overrides: Any):
    base = {"positions": args.positions, "attention": "full", "wwm": args.wwm, "validate_tokens": 10**12, "checkpoint_minutes": 1e9}
    return settings_from(args.preset, {**base, **overrides})


# -- part 1: one child process per trainer -----------------------------------------------------------


def run_suite(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """The suite's training steps (validation and checkpoints, which the Trainer run does not do, left out of the clock)."""
    trainer = BertTrainer(corpus(args.vocab_size), out, settings(args), seed=args.seed, precision=args.precision)
    trainer.start()
    trainer.budget, trainer.desc = Budget(max_units=args.tokens), "flairsuite"
    trainer.begin()
    started = time.perf_counter()
    while not trainer.done():
        trainer.step()
    seconds = time.perf_counter() - started
    trainer.finish()
    progress = trainer.progress
    loss, accuracy = trainer.evaluate(trainer.valid_samples)
    return {"tokens": progress.tokens, "steps": progress.steps, "seconds": seconds, "valid_loss": loss, "valid_accuracy": accuracy}


class SampleDataset(torch.utils.data.Dataset):
    """The suite's packed samples as [CLS] text [SEP] id lists, for transformers' collators."""

    def __init__(self, samples) -> None:
        self.samples = samples

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, index: int) -> dict[str, list[int]]:
        return {"input_ids": [CLS, *self.samples.tokens(index).tolist(), SEP]}


def run_transformers(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    from transformers import DataCollatorForLanguageModeling, DataCollatorForWholeWordMask, Trainer, TrainingArguments

    data = corpus(args.vocab_size)
    suite = BertTrainer(data, out / "suite", settings(args), seed=args.seed)  # the same model, initialised alike
    chosen = settings(args)
    tokens_per_step = args.batch_tokens
    steps = max(1, round(args.tokens / tokens_per_step))
    collator_class = DataCollatorForWholeWordMask if args.wwm else DataCollatorForLanguageModeling
    collator = collator_class(suite.tokenizer, mlm_probability=0.15)
    seen = {"tokens": 0}

    def count_tokens(module, positional, keywords) -> None:
        """Tokens the model is trained on (not padding), counted where the batch enters the model."""
        if module.training:
            seen["tokens"] += int((keywords["input_ids"] != PAD).sum())

    warmup = min(chosen.warmup_tokens, args.tokens // 10)
    training = TrainingArguments(
        output_dir=str(out / "hf"),
        per_device_train_batch_size=chosen.batch_size,
        learning_rate=chosen.learning_rate,
        weight_decay=chosen.weight_decay,
        adam_epsilon=1e-6,
        max_grad_norm=chosen.clip,
        max_steps=steps,
        warmup_steps=max(1, round(warmup / tokens_per_step)),
        lr_scheduler_type="linear",
        logging_steps=10**9,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        dataloader_num_workers=0,
        seed=args.seed,
        disable_tqdm=False,
    )
    suite.model.register_forward_pre_hook(count_tokens, with_kwargs=True)
    trainer = Trainer(model=suite.model, args=training, train_dataset=SampleDataset(suite.train_samples), data_collator=collator)
    started = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - started
    loss, accuracy = suite.evaluate(suite.valid_samples)  # suite.model is the model the Trainer trained
    return {"tokens": seen["tokens"], "steps": steps, "seconds": seconds, "valid_loss": loss, "valid_accuracy": accuracy}


def child(args: argparse.Namespace) -> int:
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as temp:
        result = (run_suite if args.child == "flairsuite" else run_transformers)(args, Path(temp))
    print("RESULT " + json.dumps(result))
    return 0


def in_child(args: argparse.Namespace, *extra: str) -> dict[str, Any]:
    command = [sys.executable, __file__, *extra, *[a for a in sys.argv[1:] if a not in ("--part", *PARTS)]]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": str(args.threads or os.cpu_count())})
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"child {' '.join(extra)} failed:\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("RESULT ") :])


def speed(args: argparse.Namespace) -> dict[str, Any]:
    corpus(args.vocab_size)  # tokenize once before timing anything
    args.batch_tokens = settings(args).batch_size * (settings(args).seq_len - 1)  # measured below; refined from the suite's run
    suite = in_child(args, "--child", "flairsuite")
    args.batch_tokens = suite["tokens"] / suite["steps"]
    hf = in_child(args, "--child", "transformers", "--batch-tokens", str(args.batch_tokens))
    rows = {"flairsuite": suite, "transformers": hf}
    print(f"\nPart 1: pre-training, {settings(args).layers} layers x {settings(args).hidden_size}, absolute positions, full attention, "
          f"{'whole-word' if args.wwm else 'token'} masking, batch {settings(args).batch_size} x {settings(args).seq_len}, {args.tokens:,} tokens")
    print(f"{'trainer':<14}{'tokens':>11}{'seconds':>9}{'tokens/s':>10}{'valid MLM acc':>15}{'valid loss':>12}")
    for name, row in rows.items():
        row["tokens_per_second"] = row["tokens"] / row["seconds"]
        print(f"{name:<14}{row['tokens']:>11,}{row['seconds']:>9.1f}{row['tokens_per_second']:>10,.0f}{row['valid_accuracy']:>15.4f}{row['valid_loss']:>12.4f}")
    ratio = suite["tokens_per_second"] / hf["tokens_per_second"]
    gap = 100 * (suite["valid_accuracy"] - hf["valid_accuracy"])
    print(f"tokens/s ratio flairsuite / transformers: {ratio:.2f} (target >= 1.5); MLM accuracy difference: {gap:+.2f} points (target within 1)")
    return {"rows": rows, "ratio": ratio, "accuracy_points": gap}


# -- part 3: float32 against bfloat16 autocast ------------------------------------------------------


def precision(args: argparse.Namespace) -> dict[str, Any]:
    if not native_bfloat16(torch.device("cuda" if torch.cuda.is_available() else "cpu")):
        raise SystemExit("part 3 needs a device that computes bfloat16 natively (AVX-512 BF16 or AMX on a CPU)")
    corpus(args.vocab_size)
    rows = {name: in_child(args, "--child", "flairsuite", "--precision", name, "--positions", "relative") for name in PRECISIONS}
    chosen = settings(args, positions="relative")
    print(f"\nPart 3: the suite's pre-training in float32 and bfloat16 autocast, {chosen.layers} layers x {chosen.hidden_size}, relative "
          f"positions, full attention, {'whole-word' if args.wwm else 'token'} masking, batch {chosen.batch_size} x {chosen.seq_len}, "
          f"{args.tokens:,} tokens, seed {args.seed}")
    print(f"{'precision':<14}{'tokens':>11}{'seconds':>9}{'tokens/s':>10}{'valid MLM acc':>15}{'valid loss':>12}")
    for name, row in rows.items():
        row["tokens_per_second"] = row["tokens"] / row["seconds"]
        print(f"{name:<14}{row['tokens']:>11,}{row['seconds']:>9.1f}{row['tokens_per_second']:>10,.0f}{row['valid_accuracy']:>15.4f}{row['valid_loss']:>12.4f}")
    ratio = rows["bfloat16"]["tokens_per_second"] / rows["float32"]["tokens_per_second"]
    gap = 100 * (rows["bfloat16"]["valid_accuracy"] - rows["float32"]["valid_accuracy"])
    print(f"tokens/s ratio bfloat16 / float32: {ratio:.2f}; MLM accuracy difference: {gap:+.2f} points (target within 1)")
    return {"rows": rows, "ratio": ratio, "accuracy_points": gap}


# -- part 2: energies and memory of full against wwa -------------------------------------------------


def word_sequences(data: TokenizedCorpus, length: int, count: int) -> np.ndarray:
    """`count` sequences of `length` tokens ([CLS] whole words [SEP]) from the valid split."""
    samples = data.samples("valid", length - 2)
    rows = [np.concatenate([[CLS], samples.tokens(i), [SEP]]) for i in range(len(samples)) if len(samples.tokens(i)) == length - 2]
    if len(rows) < count:
        rows = [np.concatenate([[CLS], samples.tokens(i), [SEP]]) for i in range(count)]
    return np.stack([np.pad(r, (0, length - len(r))) for r in rows[:count]])


def status_kb(field: str) -> int:
    """A memory figure of this process from /proc/self/status, in kB."""
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field + ":"))
    return int(line.split()[1])


def memory_child(args: argparse.Namespace) -> int:
    from flairsuite.bert import modeling_flairsuite_bert as modeling

    torch.set_num_threads(args.threads or os.cpu_count())
    data = corpus(args.vocab_size)
    chosen = settings_from(args.preset, {"positions": "relative", "attention": args.attention, "seq_len": args.length})
    trainer = BertTrainer(data, Path(tempfile.mkdtemp()), replace(chosen, validate_tokens=10**12), seed=1)
    ids = torch.from_numpy(word_sequences(data, args.length, args.batch))
    mask = (ids != 0).long()
    energies = []
    real = modeling.FlairsuiteRelativeSelfAttention.probabilities

    def counting(self, scores, key_mask, head_mask):
        energies.append(scores.shape[-2] * scores.shape[-1])  # per head and sequence
        return real(self, scores, key_mask, head_mask)

    modeling.FlairsuiteRelativeSelfAttention.probabilities = counting
    per_sequence = trainer.model.bert.word_ids(ids, mask).max(dim=1).values.double() + 1  # m of each sequence
    words, words_squared = float(per_sequence.mean()), float(per_sequence.pow(2).mean())
    before = status_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from the current RSS
    started = time.perf_counter()
    output = trainer.model.bert(input_ids=ids, attention_mask=mask)
    output[0].float().pow(2).mean().backward()
    seconds = time.perf_counter() - started
    added = (status_kb("VmHWM") - before) / 1024
    result = {"energies_per_layer": sum(energies) / chosen.layers, "words": words, "words_squared": words_squared, "seconds": seconds, "added_mb": added}
    print("RESULT " + json.dumps(result))
    return 0


def memory(args: argparse.Namespace) -> dict[str, Any]:
    corpus(args.vocab_size)
    window = settings_from(args.preset, {}).window
    print(f"\nPart 2: attention energies per layer, head and sequence, and peak memory of forward + backward (batch {args.batch}, relative positions)")
    print(f"{'n':>5}{'m (words)':>11}{'full: n^2':>11}{'wwa measured':>14}{'Eq. 9: m^2+(2w+1)n':>21}{'wwa/full':>10}{'+RSS full MB':>13}{'+RSS wwa MB':>12}")
    rows = []
    for length in LENGTHS:
        runs = {kind: in_child(args, "--memory-child", "--attention", kind, "--length", str(length)) for kind in ("full", "wwa")}
        m = runs["wwa"]["words"]
        equation = runs["wwa"]["words_squared"] + (2 * window + 1) * length  # Eq. 9, averaged over the sequences' own m
        row = {"n": length, "m": m, "full": runs["full"]["energies_per_layer"], "wwa": runs["wwa"]["energies_per_layer"], "eq9": equation,
               "rss_full_mb": runs["full"]["added_mb"], "rss_wwa_mb": runs["wwa"]["added_mb"], "seconds": {k: r["seconds"] for k, r in runs.items()}}
        rows.append(row)
        print(f"{length:>5}{m:>11.1f}{row['full']:>11,.0f}{row['wwa']:>14,.0f}{equation:>21,.0f}{row['wwa'] / row['full']:>10.2f}"
              f"{row['rss_full_mb']:>13,.0f}{row['rss_wwa_mb']:>12,.0f}")
    return {"rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=PARTS, default="both")
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--tokens", type=int, default=600_000, help="tokens each trainer trains on (parts 1 and 3)")
    parser.add_argument("--wwm", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--vocab-size", type=int, default=30000)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=8, help="sequences per batch in part 2")
    parser.add_argument("--child", choices=("flairsuite", "transformers"), help=argparse.SUPPRESS)
    parser.add_argument("--precision", choices=PRECISIONS, default="float32", help=argparse.SUPPRESS)
    parser.add_argument("--positions", default="absolute", help=argparse.SUPPRESS)
    parser.add_argument("--batch-tokens", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--attention", default="full", help=argparse.SUPPRESS)
    parser.add_argument("--length", type=int, default=128, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    if args.memory_child:
        return memory_child(args)
    results = {"machine": machine(args.threads or torch.get_num_threads()), "preset": args.preset}
    if args.part in ("speed", "both"):
        results["speed"] = speed(args)
    if args.part in ("memory", "both"):
        results["memory"] = memory(args)
    if args.part == "precision":
        results["precision"] = precision(args)
    out = HERE / "results" / ("bert_precision.json" if args.part == "precision" else "bert_speed.json")
    write_json(out, results)
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    run_main(main)
