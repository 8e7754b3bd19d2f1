"""The device side of tools/device (README.md): in one `run` command of at most 10 minutes, train the `paper` BERT and a
hidden-2048 character-LM pair on the prepared German text side by side on the one GPU, checkpointing every 3 minutes, then
bring the models back as parts of at most 15 MiB with a SHA-256 manifest.

    python3 tools/device/device_train.py train --bundle .device-bundle --out "$OUT" --minutes 7
    python3 tools/device/device_train.py send --out "$OUT"    # the next batch of parts, until it prints "all sent"

`train` installs the bundle's wheels into /tmp/site (where flair is missing), unpacks the prepared text, starts one worker
per job (`lm-forward`, `lm-backward`, `bert`: `flairsuite train-charlm` / `train-bert` with `--resume`), stops them by
`--minutes` (their `--max-hours` is the run's total, so each worker adds the seconds of the checkpoint it continues), packs
every model folder and writes batch 1 into `--out`. A second `train` on the same (warm) machine continues the checkpoints:
the way on after a command that was killed. Work folder: $FLAIRSUITE_DEVICE_WORK, default /tmp/flairsuite-device.
"""

import argparse
import json
import lzma
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import device_parts as parts  # noqa: E402

SITE = Path("/tmp/site")
LM_ARGS = ["--lang", "de", "--preset", "paper", "--name", "de-h2048-gpu", "--validate-chars", "20000000", "--checkpoint-minutes", "3",
           "--model-dtype", "float16", "--precision", "float32", "--threads", "4"]
BERT_ARGS = ["--lang", "de", "--preset", "paper", "--name", "de-paper", "--checkpoint-minutes", "3", "--threads", "6"]
JOBS = ("lm-forward", "lm-backward", "bert")
RESERVE = {"train-charlm": 30.0, "train-bert": 75.0}  # seconds a worker keeps after its budget: test evaluation, files
PACK_SECONDS = 45.0  # kept at the end of `train` for packing and batch 1
RETRY_WITHIN = 240.0  # a worker failing this early (not in float32 already) is started once more with --precision float32


def log(message: str) -> None:
    print(f"[device {time.strftime('%H:%M:%S')}] {message}", flush=True)


def search_path() -> list[str]:
    """Where the workers import from first: the carried wheels and the repository (the stand-ins come last: `use_search_path`)."""
    return [str(SITE), str(REPO)]


def use_search_path() -> None:
    """This process imports as a worker does: the carried wheels and the repository first, the stand-ins for boto3 and
    botocore after everything installed (stubs/: flair imports them at start, pre-training never calls them)."""
    sys.path[:0] = [entry for entry in search_path() if entry not in sys.path]
    if str(HERE / "stubs") not in sys.path:
        sys.path.append(str(HERE / "stubs"))


def install_wheels(bundle: Path) -> None:
    """pip-install the bundle's wheels into /tmp/site unless flair is importable already (the CPU test, a warm machine)."""
    import importlib.util

    use_search_path()
    wheels = sorted((bundle / "wheels").glob("*.whl"))
    if importlib.util.find_spec("flair") is not None or not wheels:
        return
    log(f"installing {len(wheels)} wheels into {SITE}")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile", "--no-cache-dir", "--upgrade",
                    "--target", str(SITE), *map(str, wheels)], check=True)
    importlib.invalidate_caches()


def worker_env(home: Path | None = None) -> dict[str, str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TQDM_MININTERVAL": "30"}
    env["PYTHONPATH"] = os.pathsep.join([*search_path(), *filter(None, [os.environ.get("PYTHONPATH")])])
    if home is not None:
        env["FLAIRSUITE_HOME"] = str(home)
    return env


def unpack_text(bundle: Path, home: Path) -> Path:
    """The bundle's prepared corpus as a prepared folder below `home` (text from .xz, ids encoded as prepare.py does)."""
    source = next((bundle / "prepared").iterdir())
    folder = home / "cache" / "prepared" / source.name
    meta = json.loads((source / "meta.json").read_text(encoding="utf-8"))
    if (folder / "meta.json").is_file():
        return folder
    temp = folder.with_name(folder.name + ".unpacking")
    shutil.rmtree(temp, ignore_errors=True)
    temp.mkdir(parents=True)
    for name in ("vocab.json", "meta.json"):
        shutil.copy(source / name, temp / name)
    import numpy as np  # the ids as flairsuite.rawtext.prepare.encode_split writes them (without importing flair here)

    chars = json.loads((source / "vocab.json").read_text(encoding="utf-8"))["chars"]
    lookup = np.zeros(0x110000, dtype=np.uint16)  # 0: <unk>
    lookup[[ord(c) for c in chars]] = np.arange(1, len(chars) + 1, dtype=np.uint16)
    for split in ("train", "valid", "test"):
        count = 0
        with lzma.open(source / f"{split}.txt.xz", "rt", encoding="utf-8", newline="") as packed, \
                (temp / f"{split}.txt").open("w", encoding="utf-8", newline="") as plain, (temp / f"{split}.bin").open("wb") as ids:
            while chunk := packed.read(1 << 24):
                plain.write(chunk)
                codepoints = np.frombuffer(chunk.encode("utf-32-le"), dtype="<u4")
                lookup[codepoints].tofile(ids)
                count += len(codepoints)
        if count != meta["splits"][split]:
            raise SystemExit(f"{source}: {split} holds {count:,} characters, not the {meta['splits'][split]:,} of meta.json")
    temp.rename(folder)
    log(f"prepared text: {folder} ({meta['splits']['train']:,} training characters)")
    return folder


def job_args(job: str, home: Path, extra: dict[str, list[str]]) -> list[str]:
    corpora = home / "no-corpora"  # labeled sets stay here: reassemble.py adds the coverage of the labeled corpora
    corpora.mkdir(parents=True, exist_ok=True)
    if job == "bert":
        return ["train-bert", *BERT_ARGS, "--out", str(home / "bert"), "--corpora-dir", str(corpora), *extra["bert"], "--resume"]
    direction = job.split("-")[1]
    return ["train-charlm", *LM_ARGS, "--direction", direction, "--out", str(home / "charlm"), "--corpora-dir", str(corpora),
            *extra["lm"], "--resume"]


def train(args: argparse.Namespace) -> int:
    started = time.time()
    end = started + args.minutes * 60
    work, bundle, out = Path(args.work), Path(args.bundle), Path(args.out)
    home = work / "home"
    (work / "logs").mkdir(parents=True, exist_ok=True)
    install_wheels(bundle)
    prepared = unpack_text(bundle, home)
    extra = {"lm": shlex.split(args.lm_args), "bert": shlex.split(args.bert_args)}
    deadline = end - PACK_SECONDS
    running: dict[str, tuple[subprocess.Popen, float, list[str]]] = {}

    def launch(job: str, cli: list[str]) -> None:
        reserve = RESERVE[cli[0]]
        command = [sys.executable, str(Path(__file__).resolve()), "worker", "--prepared", str(prepared), "--deadline", str(deadline),
                   "--reserve", str(reserve), "--", *cli]
        handle = (work / "logs" / f"{job}.log").open("a", encoding="utf-8")
        running[job] = (subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=worker_env(home)), time.time(), cli)
        log(f"{job}: {shlex.join(cli)}")

    for job in args.only:
        launch(job, job_args(job, home, extra))
    results: dict[str, int] = {}
    while running:
        time.sleep(1.0)
        for job, (process, since, cli) in list(running.items()):
            if process.poll() is None:
                late = time.time() - deadline
                if late > 20:  # its budget ended `reserve` seconds before the deadline: stop it (a kill leaves its checkpoint)
                    log(f"{job}: {late:.0f} s past its deadline, stopped")
                    process.send_signal(signal.SIGTERM if late < 35 else signal.SIGKILL)
                continue
            del running[job]
            results[job] = process.returncode
            log(f"{job}: exit {process.returncode} after {time.time() - since:.0f} s")
            retry = time.time() - since < RETRY_WITHIN and time.time() < deadline - 90 and cli[-3:] != ["--precision", "float32", "--resume"]
            if process.returncode and retry:
                launch(job, [*cli, "--precision", "float32", "--resume"])
    pack(work, home, args.part_bytes)
    send(argparse.Namespace(work=str(work), out=str(out), batch=1))
    log(f"train done in {time.time() - started:.0f} s: " + ", ".join(f"{job} exit {code}" for job, code in results.items()))
    return 0


def earlier_seconds(folder: Path) -> float:
    """Training seconds a --resume of `folder` starts from: its checkpoint's, else (a released model) its summary's."""
    from flairsuite.files import checkpoint

    if (folder / "checkpoint.pt").is_file():
        return float(checkpoint.load(folder / "checkpoint.pt")["progress"]["seconds"])
    if (folder / "best-lm.pt").is_file() and (folder / "summary.json").is_file():
        return float(json.loads((folder / "summary.json").read_text(encoding="utf-8"))["hours"]) * 3600
    return 0.0


def worker(args: argparse.Namespace) -> int:
    """One `flairsuite` pre-training command on the bundle's prepared corpus, with --max-hours up to `--deadline`."""
    use_search_path()
    import yaml

    from flairsuite.cli import cli, main  # registers every command and imports their modules
    from flairsuite.rawtext import language
    from flairsuite.rawtext.prepare import PreparedCorpus

    corpus = PreparedCorpus(Path(args.prepared), json.loads((Path(args.prepared) / "meta.json").read_text(encoding="utf-8")))
    original = language.prepare_language
    for module in list(sys.modules.values()):  # wherever the commands took `prepare_language` from
        if getattr(module, "__name__", "").startswith("flairsuite") and getattr(module, "prepare_language", None) is original:
            module.prepare_language = lambda *_, **__: corpus
    name, *options = args.cli
    params = cli.commands[name].make_context(name, list(options)).params
    if name == "train-bert":
        from flairsuite.bert.data import tokenize_corpus
        from flairsuite.files.paths import bert_data_dir

        presets = yaml.safe_load((REPO / "flairsuite" / "bert" / "presets.yaml").read_text(encoding="utf-8"))
        tokenize_corpus(corpus, params["vocab_size"] or presets[params["preset"]]["vocab_size"], bert_data_dir())  # before the clock
        folder = Path(params["out_dir"]) / (params["name"] or f"{params['lang']}-{params['preset']}")
    else:
        folder = Path(params["out_dir"]) / f"{params['name'] or params['lang']}-{params['direction']}"
    budget = args.deadline - time.time() - args.reserve
    if budget < 10:
        log(f"{folder.name}: {budget:.0f} s left, not started")
        return 0
    earlier = earlier_seconds(folder)
    if earlier:
        log(f"{folder.name}: continues its checkpoint ({earlier:.0f} s trained before)")
    hours = (earlier + budget) / 3600
    log(f"{folder.name}: {budget:.0f} s of training (--max-hours {hours:.5f}, a total)")
    sys.argv = ["flairsuite", name, *options, "--max-hours", f"{hours:.6f}"]
    try:
        main()
    finally:
        if os.environ.get("FLAIRSUITE_DEVICE_IMPORTS"):  # the CPU test compares these with prepare.py's wheel list
            with open(os.environ["FLAIRSUITE_DEVICE_IMPORTS"], "a", encoding="utf-8") as handle:
                handle.write("\n".join(sorted({m.split(".")[0] for m in sys.modules})) + "\n")
    return 0


def float16_safetensors(path: Path) -> bytes:
    """A safetensors file's float32 tensors as float16 (transport only: reassemble.py writes float32 again)."""
    use_search_path()
    import torch
    from safetensors.torch import load_file, save

    tensors = load_file(str(path))
    fits = {k: v.dtype == torch.float32 and v.numel() > 0 and bool(v.abs().max() < 60000) for k, v in tensors.items()}
    return save({k: v.half() if fits[k] else v for k, v in tensors.items()}, {"format": "pt"})


def pack(work: Path, home: Path, part_bytes: int) -> None:
    """Every model folder below `home` as a tar cut into parts, with the manifest (all batches) in work/pack."""
    folder = work / "pack"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    manifest = {"version": 1, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "device": device_name(), "models": [], "parts": []}
    for kind in ("charlm", "bert"):
        for model in sorted(p for p in (home / kind).glob("*") if p.is_dir() and parts.model_files(p)):
            files = parts.model_files(model)
            replaced = {"model.safetensors": float16_safetensors(model / "model.safetensors")} if (model / "model.safetensors").is_file() else {}
            tar = folder / f"{model.name}.tar"
            parts.write_tar(model, files, tar, replaced)
            entries = parts.split_file(tar, folder, part_bytes)
            manifest["models"].append({
                "name": model.name, "kind": kind, "bytes": tar.stat().st_size, "sha256": parts.sha256_of(tar), "files": [p.name for p in files],
                "complete": (model / "summary.json").is_file(), "transport": {name: "float16" for name in replaced}, "parts": [e["file"] for e in entries],
            })
            manifest["parts"] += entries
            tar.unlink()
    manifest["batches"] = parts.assign_batches(manifest["parts"])
    parts.write_manifest(folder, manifest)
    log(f"packed {len(manifest['models'])} models into {len(manifest['parts'])} parts, {manifest['batches']} batches")


def device_name() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip() or "cpu"
    except (OSError, subprocess.SubprocessError):
        return "cpu"


def send(args: argparse.Namespace) -> int:
    """Batch `--batch` (default: the next one not sent) of work/pack into `--out`, with the manifest and the log."""
    folder, out = Path(args.work) / "pack", Path(args.out)
    manifest = parts.read_manifest(folder)
    sent_file = folder / "sent.json"
    sent = json.loads(sent_file.read_text()) if sent_file.is_file() else []
    batch = args.batch or next((b for b in range(1, manifest["batches"] + 1) if b not in sent), None)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copy(folder / parts.MANIFEST, out / parts.MANIFEST)
    logs = sorted((Path(args.work) / "logs").glob("*.log"))
    tails = [f"== {p.name} (its last 60 lines, each to its last 400 characters)\n"
             + "".join(line[-400:] + "\n" for line in p.read_text(errors="replace").splitlines()[-60:]) for p in logs]
    (out / parts.LOG).write_text("".join(tails))
    if batch is None:
        log(f"all sent ({manifest['batches']} batches)")
        return 0
    for part in manifest["parts"]:
        if part["batch"] == batch:
            shutil.copy(folder / part["file"], out / part["file"])
    sent_file.write_text(json.dumps(sorted({*sent, batch})))
    left = [b for b in range(1, manifest["batches"] + 1) if b not in {*sent, batch}]
    log(f"batch {batch} of {manifest['batches']} in {out}" + (f"; still to send: {left} (run `send` again now)" if left else "; all sent"))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", default=os.environ.get("FLAIRSUITE_DEVICE_WORK", "/tmp/flairsuite-device"))
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("train")
    run.add_argument("--bundle", default=str(REPO / ".device-bundle"))
    run.add_argument("--out", default=os.environ.get("OUT", "out"))
    run.add_argument("--minutes", type=float, default=7.0, help="the whole command's time, packing and batch 1 included")
    run.add_argument("--only", nargs="+", choices=JOBS, default=list(JOBS))
    run.add_argument("--lm-args", default="", help="more train-charlm options (the last of an option wins)")
    run.add_argument("--bert-args", default="", help="more train-bert options")
    run.add_argument("--part-bytes", type=int, default=parts.PART_BYTES)
    one = commands.add_parser("worker")
    one.add_argument("--prepared", required=True)
    one.add_argument("--deadline", type=float, required=True)
    one.add_argument("--reserve", type=float, default=30.0)
    one.add_argument("cli", nargs=argparse.REMAINDER)
    again = commands.add_parser("send")
    again.add_argument("--out", default=os.environ.get("OUT", "out"))
    again.add_argument("--batch", type=int, default=None)
    args = parser.parse_args()
    if args.command == "worker" and args.cli[:1] == ["--"]:
        args.cli = args.cli[1:]
    if args.command == "train" and args.part_bytes > parts.PART_BYTES:
        parser.error(f"--part-bytes at most {parts.PART_BYTES}")
    return {"train": train, "worker": worker, "send": send}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
