"""Reduced active-learning simulation on Sturm: uncertainty vs random with suggest's units.

UNIT=sentence: the simulation's own choice (one sentence a candidate).
UNIT=merged:   sentences below MIN_TOKENS tokens merged with the following one(s) (a short group at the end joins the one
               before), as `flairsuite suggest --min-tokens` does; a candidate is a group, scored over its tokens.
UNIT=window:   merged groups ranked as above, each chosen group annotated with NEIGHBOURS sentences on each side
               (`suggest --unit window`).
Each round adds candidates until at least `batch_size` new sentences are annotated. Sturm's train split is shuffled
sentence by sentence, so "neighbours" are the adjacent sentences of the file, not of the letter.
Usage (from the clone, the released pair and the quickstart vectors below $FLAIRSUITE_MODELS or the clone):
    UNIT=window OMP_NUM_THREADS=1 python benchmarks/suggest_units_simulation.py NAME ROUNDS MAX_EPOCHS [SEEDS, e.g. 1,2,3]
"""
import os
import sys
from pathlib import Path

import torch

import flairsuite.experiments.simulation as sim
from flairsuite.experiments.reading import read_experiment
from flairsuite.models.selection import pick, ranked
from flairsuite.models.uncertainty import Scores, sentence_scores

UNIT = os.environ.get("UNIT", "sentence")
MIN_TOKENS, NEIGHBOURS = 5, 2
original_choose = sim.choose


def groups(lengths: list[int]) -> list[list[int]]:
    found: list[list[int]] = []
    current: list[int] = []
    for index, length in enumerate(lengths):
        current.append(index)
        if sum(lengths[i] for i in current) >= MIN_TOKENS:
            found.append(current)
            current = []
    if current:
        if found:
            found[-1].extend(current)
        else:
            found.append(current)
    return found


def choose(strategy, model, pool, candidates, n, rng):
    if UNIT == "sentence":
        return original_choose(strategy, model, pool, candidates, n, rng)
    open_ = set(candidates)
    lengths = [int(x) for x in pool.lengths]
    units = [[i for i in group if i in open_] for group in groups(lengths)]
    units = [u for u in units if u]
    if strategy == "random":
        order = list(range(len(units)))
        rng.shuffle(order)
        values = [0.0] * len(units)
    else:
        scores: dict[int, Scores] = {}
        ordered = sorted(candidates, key=lambda i: -pool.lengths[i])
        with torch.no_grad():
            for indices in pool.batches(sim.SCORE_BATCH, ordered):
                batch = pool.batch(indices)
                for index, found in zip(batch.order, sentence_scores(model, batch.tensor, batch.lengths)):
                    scores[index] = found
        values = [Scores.combined([scores[i] for i in u]).measure(strategy) for u in units]
        order = pick(ranked(values), [[t for i in u for t in pool.split.texts[i]] for u in units], len(units))
    taken: list[int] = []
    seen: set[int] = set()
    measures = []
    for k in order:
        members = units[k]
        if UNIT == "window":
            first, last = members[0], members[-1]
            members = [i for i in range(max(0, first - NEIGHBOURS), min(len(lengths), last + NEIGHBOURS + 1)) if i in open_]
        new = [i for i in members if i not in seen]
        seen.update(new)
        taken.extend(new)
        measures.append(round(values[k], 6))
        if len(taken) >= n:
            break
    return sorted(taken), measures


sim.choose = choose

if __name__ == "__main__":
    name, rounds, epochs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seeds = sys.argv[4] if len(sys.argv) > 4 else "1"
    folder = Path("/tmp/al_units")
    config = folder / f"{name}.yaml"
    config.write_text(f"""name: {name}
corpora: [sturm]
embeddings:
  proposed: [charlm:de-forward, charlm:de-backward]
taggers: [map-crf]
seeds: [{seeds}]
train: {{max_epochs: {epochs}}}
active_learning:
  seed_size: 50
  batch_size: 50
  rounds: {rounds}
  strategies: [random, uncertainty]
  full_reference: false
""")
    torch.set_num_threads(1)
    out = sim.run_simulation(read_experiment(config), folder / "home", Path("/work/shared/corpora"), cache=Path("/work/main/cache/embeddings"))
    print(out)
