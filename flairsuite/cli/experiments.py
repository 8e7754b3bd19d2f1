"""Experiments: `tag` trains a grid, `quickstart` runs the small default end to end, `results` turns runs into tables and pictures."""

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import click

from flairsuite.cli.corpora import corpora_fetch
from flairsuite.cli.embedding_training import train_charlm
from flairsuite.cli.group import FiniteFloatRange, cli, corpora_dir_option, force_option, threads_option_for
from flairsuite.errors import FlairsuiteError

if TYPE_CHECKING:
    from flairsuite.experiments.reading import Experiment

QUICKSTART_LM_HOURS = 0.05  # 3 minutes per direction when no LM pair is present


@cli.command("tag")
@click.argument("experiment", type=click.Path(dir_okay=False))
@force_option("Accept a changed config under the same name: retrain what changed, drop runs no longer in the grid "
              "(a run whose embedding files only moved to new names is kept).")
@click.option("--keep-finished", is_flag=True,
              help="Keep runs finished with the same settings on other embedding files (e.g. fastText trained again on another machine).")
@threads_option_for("the cores other processes leave free; --ray: 1 a run")
@click.option("--runs", "patterns", multiple=True, metavar="PATTERN",
              help="Only the runs whose id matches (shell-style, e.g. 'ler-*/*/map*/*'); repeatable, each must match a run.")
@click.option(
    "--cache-dir", type=click.Path(file_okay=False), default=None,
    help="Embedding cache folder [default: cache/embeddings under $FLAIRSUITE_HOME]; with --ray on a cluster, storage every node sees.",
)
@click.option("--ray", "ray_address", default=None, metavar="local|auto|ADDRESS",
              help="Run the pending runs as Ray tasks: local starts Ray on this machine, auto joins $RAY_ADDRESS's cluster.")
@click.option("--gpus", type=FiniteFloatRange(min=0), default=0, show_default=True, help="GPUs each run asks Ray for (with --ray).")
@click.option("--ray-retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="With --ray: restarts of a run whose worker died; it continues from its epoch checkpoint.")
@corpora_dir_option
def tag(
    experiment: str, force: bool, keep_finished: bool, threads: Optional[int], patterns: tuple[str, ...], cache_dir: Optional[str],
    ray_address: Optional[str], gpus: float, ray_retries: int, corpora_dir: Optional[str],
) -> None:
    """Train and score every run of an experiment file; finished runs are skipped, a killed run resumes.

    Results go to results/<name>/ under $FLAIRSUITE_HOME (default: the current folder); the comparison table is printed
    at the end, then the folder written, as `flairsuite results` reads it from here. Relative paths in the file are
    relative to the file; released models are found from any folder (docs/experiments.md, "Paths").
    An `adapt:` block in the file first continues an LM pair on your own unannotated text, once
    (docs/experiments.md).

    \b
    Examples:
      flairsuite tag experiments/sturm-table3.yaml
      flairsuite tag experiments/table8-de.yaml --runs 'arendt/*' --threads 1   # part of a grid, e.g. one per core
      flairsuite tag experiments/table8-de.yaml --ray local --threads 1          # one Ray task per run, one core each
      flairsuite tag experiments/table8-de.yaml --ray auto --gpus 1 --cache-dir /shared/cache   # on a Ray cluster
      flairsuite results results/sturm-table3 --plot
    """

    from flairsuite.experiments.dispatch import TagRequest, run_tag
    from flairsuite.experiments.reading import read_experiment
    from flairsuite.experiments.simulation_report import is_simulation, simulation_report
    from flairsuite.files.paths import corpora_dir as resolve
    from flairsuite.files.paths import home
    from flairsuite.results.collect import per_type_frame, read_runs, runs_frame
    from flairsuite.results.self_training_report import is_self_training, self_training_report
    from flairsuite.results.tables import report

    request = TagRequest(home(), resolve(corpora_dir), force, keep_finished, tuple(patterns), Path(cache_dir) if cache_dir else None,
                         threads, ray_address, gpus, ray_retries)
    read = read_experiment(experiment)  # the one read of the file: everything below takes this object
    adapt_first(read, threads, corpora_dir)
    out = run_tag(read, request, click.echo)
    if is_simulation(out):  # an active_learning experiment: F1 per round and strategy instead of the grid's table
        click.echo("\n" + simulation_report(out))
    elif is_self_training(out):  # a self_training experiment: F1 per threshold and round
        click.echo("\n" + self_training_report(out))
    else:
        runs = read_runs(out)
        click.echo("\n" + report(runs_frame(runs), per_type_frame(runs)))
    click.echo(f"\nwrote {out}/ (again: flairsuite results {shlex.quote(str(out))}/)")  # as built: relative where $FLAIRSUITE_HOME is


def adapt_first(experiment: "Experiment", threads: Optional[int], corpora_dir: Optional[str]) -> None:
    """The experiment's `adapt:` pair and vectors trained by train-charlm and train-fasttext, unless current (flairsuite/experiments/adaptation.py)."""
    from flairsuite.charlm.train_charlm import train_charlm_command
    from flairsuite.experiments.adaptation import ensure_adapted
    from flairsuite.files.paths import home
    from flairsuite.wordvectors.train_fasttext import train_fasttext_command

    adaptation = experiment.config.adaptation
    if adaptation is None:
        return
    ensure_adapted(adaptation, experiment.path, home(), train_charlm_command, click.echo, threads, train_fasttext_command, corpora_dir)


@cli.command("quickstart")
@threads_option_for("the cores other processes leave free")
@corpora_dir_option
@click.pass_context
def quickstart(ctx: click.Context, threads: Optional[int], corpora_dir: Optional[str]) -> None:
    """The whole pipeline on a small default: Sturm, a German LM pair and word vectors, three taggers, one table (about 9 min on 2 cores).

    Fetches Sturm, trains a small forward/backward character-LM pair (3 minutes each) unless
    charlm/de-forward and charlm/de-backward exist (the released pair is committed), then runs
    the experiment flairsuite/experiments/quickstart.yaml (bilstm-crf, map-crf, map on the pair and the
    committed wordvectors/de-quickstart-fasttext) and prints its table.

    \b
    Example:
      flairsuite quickstart
    """
    from importlib.resources import files

    from flairsuite.embeddings import existing_artifact
    from flairsuite.files.paths import home

    ctx.invoke(corpora_fetch, name="sturm", corpora_dir=corpora_dir)
    for direction in ("forward", "backward"):
        try:
            found = existing_artifact(f"charlm:de-{direction}", home())  # the home's, else the clone's released pair
            click.echo(f"using {found.parent if found else f'charlm/de-{direction}'}")
        except FlairsuiteError:
            ctx.invoke(train_charlm, lang="de", direction=direction, max_hours=QUICKSTART_LM_HOURS, hidden_size=256, threads=threads, corpora_dir=corpora_dir)
    ctx.invoke(tag, experiment=str(files("flairsuite.experiments") / "quickstart.yaml"), threads=threads, corpora_dir=corpora_dir)


ON_TEST = "each corpus's main score on test"
LAYOUTS = ("plain", "table3", "table6", "table8", "table9", "ablation")
LAYOUT_SCORES = {  # what each layout but the plain table prints, whatever --split and --metric say
    "table8": ON_TEST, "table6": ON_TEST, "table9": ON_TEST, "table3": f"{ON_TEST}, dev beside",
    "ablation": "each corpus's main score on dev and test",
}


def check_layout_options(layout: str, metric: str, split: str, per_type: bool, drawn: bool) -> None:
    """A paper layout (or the ablation one) prints its own fixed scores: an option it would ignore is an error, not a silent no-op.

    --split and --metric still choose what --plot and --curve draw, so beside one of those they are accepted."""
    flag = f"--layout {layout}"
    if per_type:
        raise FlairsuiteError(f"--per-type goes with the plain table, not {flag}: run `flairsuite results DIR --per-type` for it")
    if (split != "test" or metric != "score") and not drawn:
        given = " ".join(f"--{name} {value}" for name, value, default in [("split", split, "test"), ("metric", metric, "score")] if value != default)
        raise FlairsuiteError(
            f"{flag} always prints {LAYOUT_SCORES[layout]}, so {given} would change nothing; "
            f"for that table leave out {flag}"
        )


def refuse_table_options(root: Path, given: bool) -> None:
    """A self-training folder prints one table (markdown): an option of the grid's tables would change nothing, so it is an error."""
    if given:
        raise FlairsuiteError(f"{root} holds self-training studies, whose one table (threshold x round, markdown) takes no options: "
                              f"run `flairsuite results {root}`")


@cli.command("results")
@click.argument("directory", required=False, metavar="[DIR]", type=click.Path(file_okay=False))
@click.option("--experiment", default=None, help="Only this experiment [default: one table per experiment found].")
@click.option("--format", "fmt", type=click.Choice(["md", "csv", "latex"]), default="md", show_default=True, help="Table format, printed to stdout.")
@click.option(
    "--metric", type=click.Choice(["score", "f1", "precision", "recall", "accuracy"]), default="score", show_default=True,
    help="score: each corpus's main score, entity F1 (NER) or token accuracy (PoS); the others that score only (blank where a task has none).",
)
@click.option(
    "--split", type=click.Choice(["test", "dev"]), default="test", show_default=True,
    help="The split of the plain table, --plot and --curve (the other layouts print their own).",
)
@click.option("--per-type", is_flag=True, help="Also a table per corpus: mean score per entity type (PoS: per tag).")
@click.option(
    "--artifacts", is_flag=True,
    help="Also a table per experiment of its stacks' embedding files as the runs recorded them "
    "(LM characters, hours, valid perplexity; fastText dim; BERT settings; SHA-256).",
)
@click.option(
    "--by-length", is_flag=True,
    help="Also a table per corpus: test recall of the gold entities by their length in tokens (strict match), and the ill-formed chunks "
    "(I-X after no B-X or I-X) per 1,000 tokens, as the runs recorded them (test_lengths), for older runs from their predictions.tsv "
    "(raw tags; git-ignored, so the runs trained here).",
)
@click.option(
    "--cost", is_flag=True,
    help="Also a table per experiment of what the runs cost: hours a run, CPU-hours (wall x threads, for runs that recorded their threads; "
    "an upper bound where runs shared the cores), peak RSS and RssAnon.",
)
@click.option(
    "--curve", type=click.Choice(["train-fraction", "lm-chars", "epochs"]), default=None,
    help="Also write a learning curve PNG (DIR/curve-<kind>.png): the score against the share of train or the LM's training characters; "
    "epochs (with --split dev): the dev score after each training epoch.",
)
@click.option(
    "--layout", type=click.Choice(LAYOUTS), default="plain", show_default=True,
    help="plain: stack x tagger x corpus; table3: stack x tagger in the layout of Akbik et al. 2018, Table 3, test with dev means beside, "
    "the paper's values beside; table8: test E-F1 in the layout of Zöllner et al. 2021, Table 8, the paper's values beside; "
    "table6: fine-tuned BERTs per pre-training variant (Zöllner et al. 2021, Table 6); table9: fine-tuned LCRFNER per BERT attention "
    "(WWA or full, Table 9); ablation: per corpus, each change of --ablation-file against its baseline runs (dev and test, "
    "differences with 90 % Welch intervals), read across experiments.",
)
@click.option(
    "--ablation-file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
    help="The ablation file of --layout ablation, e.g. results/recipe-ablation-de.yaml.",
)
@click.option(
    "--plot", is_flag=False, flag_value="", default=None, metavar="[PATH]",
    help="Also write a bar chart PNG [default: DIR/comparison.png]; a path goes as --plot=PATH. With --layout table8: the paper's values as ticks.",
)
def results(
    directory: Optional[str], experiment: Optional[str], fmt: str, metric: str, split: str, per_type: bool, artifacts: bool, by_length: bool,
    cost: bool, layout: str, ablation_file: Optional[str], plot: Optional[str], curve: Optional[str],
) -> None:
    """Comparison tables of the runs' metrics.json files below DIR (a results or experiment folder).

    Rows are embedding stack x tagger (x Entity-Fix), columns corpora, cells mean ± std over
    seeds (n) in percent, the best per column marked. DIR defaults to results/ under $FLAIRSUITE_HOME; a DIR that
    is no folder here is looked up under $FLAIRSUITE_HOME, then as an experiment name under its results/.

    \b
    Examples:
      flairsuite results results/sturm-table3 --per-type
      flairsuite results results/ablation-lm-de --split dev --artifacts
      flairsuite results results/table8-de --by-length        # where Map loses LER's long entities
      flairsuite results results/stacks-de --cost             # hours, CPU-hours and peak memory a run
      flairsuite results results/table8-de --layout table8    # Zöllner et al. 2021, Table 8, the paper's values beside
      flairsuite results results --layout ablation --ablation-file results/recipe-ablation-de.yaml
      flairsuite results --experiment sturm-table3 --format latex --plot=table3.png
    """
    from flairsuite.files.paths import results_folder
    from flairsuite.results.collect import only_experiment, per_type_frame, read_runs, runs_frame
    from flairsuite.results.self_training_report import is_self_training, self_training_report
    from flairsuite.results.tables import report

    root = results_folder(directory)
    if is_self_training(root):  # one self-training experiment: its own table, threshold x round
        refuse_table_options(root, fmt != "md" or metric != "score" or split != "test" or per_type or artifacts or by_length or cost
                             or layout != "plain" or plot is not None or curve is not None or experiment is not None)
        click.echo(self_training_report(root))
        return
    runs = read_runs(root)
    frame, types = runs_frame(runs), per_type_frame(runs)
    if experiment:
        frame, types = only_experiment(frame, experiment), types[types["experiment"] == experiment]
    if (layout == "ablation") != (ablation_file is not None):
        raise FlairsuiteError("--layout ablation reads --ablation-file FILE: give both or neither")
    if layout != "plain":
        check_layout_options(layout, metric, split, per_type, drawn=curve is not None or plot is not None)
    if curve is not None:  # first: a curve the runs cannot draw is an error before any table is printed
        from flairsuite.results.curves import write_curve

        target = root / f"curve-{curve}.png"
        write_curve(frame, curve, target, metric, split)
        click.echo(f"wrote {target}", err=True)
    lengths = None
    if by_length:  # also before any table: no predictions to read is an error on its own
        from flairsuite.results.lengths import length_tables

        lengths = length_tables(frame, fmt)
    if layout == "ablation" and ablation_file is not None:
        from flairsuite.results.ablation import ablation_report

        click.echo(ablation_report(frame, Path(ablation_file), fmt, root))
    elif layout in ("table6", "table9"):
        from flairsuite.results.pretraining_tables import LAYOUTS as PRETRAINING_LAYOUTS

        pretraining_layout = PRETRAINING_LAYOUTS[layout]
        click.echo("\n\n".join(pretraining_layout(group, fmt) for _, group in frame.groupby("experiment")))
    elif layout == "table8":
        from flairsuite.results.table8 import table8 as paper_layout

        click.echo("\n\n".join(paper_layout(group, fmt) for _, group in frame.groupby("experiment")))
    elif layout == "table3":
        from flairsuite.results.table3 import table3 as akbik_layout

        click.echo("\n\n".join(akbik_layout(group, fmt) for _, group in frame.groupby("experiment")))
    else:
        click.echo(report(frame, types, fmt, metric, split, per_type))
    if artifacts:
        from flairsuite.results.artifacts import artifact_report

        files = artifact_report(frame, fmt)
        click.echo("\n\n" + files if files else "(the runs recorded no embedding files: they predate the record)")
    if cost:
        from flairsuite.results.costs import cost_report

        click.echo("\n\n" + cost_report(frame, fmt))
    if lengths is not None:
        click.echo("\n\n" + lengths)
    if plot is not None:
        target = Path(plot) if plot else root / "comparison.png"
        from flairsuite.results.plot import write_plot  # matplotlib: only where a chart is drawn

        write_plot(frame, target, metric, split, table8=layout == "table8")
        click.echo(f"wrote {target}", err=True)
