"""One AdamW step over a small BERT's parameters: torch's default loop, its `foreach` path and its fused kernel.

The tagger loop (`fine_tune: true`, any `optimizer: adamw`) and `train-bert` step through the fused kernel
(`flairsuite/models/settings.py`, FUSED). The script loads a BERT folder's weights, gives every parameter the same
random gradient in each variant, and prints milliseconds per step (median of `--repeats` rounds of `--steps` steps),
the ratios against the default loop, and the largest parameter difference from the default after `--steps` steps.

    python benchmarks/optimizer_step.py                 # bert/de-cpu, one thread
    python benchmarks/optimizer_step.py --bert de-mlm-rel-wwm --threads 2
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import machine, run_main  # noqa: E402

from flairsuite.errors import FlairsuiteError  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "optimizer_step.json"
VARIANTS = {"default loop": {}, "foreach": {"foreach": True}, "fused": {"fused": True}}


def bert_weights(folder: Path) -> list[torch.Tensor]:
    """The floating-point tensors of a BERT folder's `model.safetensors` (what fine-tuning trains)."""
    from safetensors.torch import load_file

    path = folder / "model.safetensors"
    if not path.is_file():
        raise FlairsuiteError(f"{path} not found: train one with `flairsuite train-bert`")
    return [tensor.float() for tensor in load_file(str(path)).values() if tensor.is_floating_point()]


def run(weights: list[torch.Tensor], gradients: list[torch.Tensor], options: dict, steps: int) -> tuple[float, list[torch.Tensor]]:
    """Seconds per step over `steps` steps (after one untimed), and the parameters after the untimed and timed steps."""
    parameters = [torch.nn.Parameter(weight.clone()) for weight in weights]
    for parameter, gradient in zip(parameters, gradients):
        parameter.grad = gradient.clone()
    optimizer = torch.optim.AdamW(parameters, lr=5e-5, weight_decay=0.01, **options)
    optimizer.step()
    started = time.perf_counter()
    for _ in range(steps):
        optimizer.step()
    return (time.perf_counter() - started) / steps, [parameter.detach() for parameter in parameters]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bert", default="de-cpu", help="model folder below bert/ [default: de-cpu]")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    weights = bert_weights(REPO / "bert" / args.bert)
    gradients = [torch.randn_like(weight) * 1e-3 for weight in weights]
    seconds: dict[str, list[float]] = {name: [] for name in VARIANTS}
    final: dict[str, list[torch.Tensor]] = {}
    for _ in range(args.repeats):  # variants alternate, so a change in the machine's load hits all
        for name, options in VARIANTS.items():
            step, final[name] = run(weights, gradients, options, args.steps)
            seconds[name].append(step)
    count = sum(weight.numel() for weight in weights)
    print(f"AdamW on bert/{args.bert}: {count / 1e6:.2f} M parameters in {len(weights)} tensors, {args.threads} thread(s), "
          f"median of {args.repeats} x {args.steps} steps")
    base = statistics.median(seconds["default loop"])
    rows = {}
    for name in VARIANTS:
        median = statistics.median(seconds[name])
        drift = max((a - b).abs().max().item() for a, b in zip(final[name], final["default loop"]))
        rows[name] = {"ms_per_step": round(median * 1000, 2), "speedup": round(base / median, 2), "max_difference": drift}
        print(f"  {name:<13}{median * 1000:>8.1f} ms/step  {base / median:>5.2f}x   largest difference from the default loop: {drift:.1e}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"machine": machine(args.threads), "bert": args.bert, "parameters": count, "variants": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    run_main(main)
