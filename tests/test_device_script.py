"""tools/device (issue 65) on the CPU with a tiny configuration: prepare's bundle, the device-side script killed and
resumed, its parts within the device tool's limits, and reassembly into models that load; the wheel list without downloads."""

import importlib.metadata
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import german_text, write_file

ROOT = Path(__file__).resolve().parent.parent
DEVICE = ROOT / "tools" / "device"
TINY_LM = ("--hidden-size 32 --embedding-size 16 --batch-size 8 --sequence-length 40 --sequence-length-start 40 --ramp-chars 0 "
           "--validate-chars 8000 --valid-chars 2000 --checkpoint-minutes 0.01 --max-chars 60000 --threads 1 --precision float32")
TINY_BERT = ("--layers 1 --hidden-size 32 --heads 2 --sequence-length 32 --vocab-size 150 --batch-size 8 --learning-rate 0.003 --threads 1 "
             "--max-tokens 16000 --validate-tokens 4000 --checkpoint-minutes 0.01 --precision float32")
MODELS = ("de-h2048-gpu-forward", "de-paper")  # the forward LM and the BERT (the backward LM is the same code, one more process)
PART = 64 * 1024  # small parts, so that the tiny models take several parts and batches


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"device_{name}", DEVICE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(DEVICE))
    spec.loader.exec_module(module)
    return module


parts = load("device_parts")
prepare = load("prepare")


def script(*args: str, env: dict, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert not check or result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    """prepare.py's text step on a tiny corpus; device_train.py killed after its first checkpoints, run again (resuming),
    its batches sent; reassemble.py into a fresh home."""
    root = tmp_path_factory.mktemp("device")
    env = {**os.environ, "FLAIRSUITE_HOME": str(root / "here"), "FLAIRSUITE_DEVICE_WORK": str(root / "work"), "OMP_NUM_THREADS": "1",
           "FLAIRSUITE_DEVICE_IMPORTS": str(root / "imports.txt"), "PYTHONUNBUFFERED": "1"}
    (root / "no-corpora").mkdir()
    corpus = write_file(root / "corpus.txt", german_text(2000))
    bundle = root / "bundle"
    script(str(DEVICE / "prepare.py"), "text", "--bundle", str(bundle), "--corpus", str(corpus), "--corpora-dir", str(root / "no-corpora"), env=env)
    train = [str(DEVICE / "device_train.py"), "train", "--bundle", str(bundle), "--minutes", "8", "--part-bytes", str(PART),
             "--only", "lm-forward", "bert", "--lm-args", TINY_LM, "--bert-args", TINY_BERT]
    first = subprocess.Popen([sys.executable, *train, "--out", str(root / "out-killed")], cwd=ROOT, env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    home = root / "work" / "home"
    checkpoints = [home / "charlm" / MODELS[0] / "checkpoint.pt", home / "bert" / MODELS[1] / "checkpoint.pt"]
    waited = time.time()
    while not all(p.is_file() for p in checkpoints) and first.poll() is None and time.time() - waited < 600:
        time.sleep(0.2)
    os.killpg(first.pid, signal.SIGKILL)  # as the device tool kills a command at its limit, workers included
    first.wait()
    assert all(p.is_file() for p in checkpoints), "no checkpoints before the kill"
    outs = [root / "out-1"]
    output = script(*train, "--out", str(outs[0]), env=env).stdout
    while "all sent" not in output:  # as the README's `send` calls, one after the other
        outs.append(root / f"out-{len(outs) + 1}")
        output = script(str(DEVICE / "device_train.py"), "send", "--out", str(outs[-1]), env=env).stdout
        assert len(outs) < 20
    placed = script(str(DEVICE / "reassemble.py"), *map(str, outs), "--home", str(root / "there"), "--bundle", str(bundle), env=env)
    return {"root": root, "outs": outs, "home": root / "there", "bundle": bundle, "report": placed.stdout, "env": env}


def test_the_device_script_resumes_after_a_kill(run) -> None:
    logs = {name: (run["root"] / "work" / "logs" / f"{name}.log").read_text() for name in ("lm-forward", "bert")}
    assert all("continues its checkpoint" in text for text in logs.values()), logs
    name = parts.read_manifest(run["outs"][0])["models"][0]["name"]
    assert name == MODELS[0]
    prepared = next(p for p in (run["root"] / "here" / "cache" / "prepared").iterdir() if p.is_dir())  # what prepare.py bundled, and the device's copy
    copy = run["root"] / "work" / "home" / "cache" / "prepared" / prepared.name
    assert all((copy / f).read_bytes() == (prepared / f).read_bytes() for f in ("train.bin", "valid.txt", "test.bin", "vocab.json"))
    summary = json.loads((run["home"] / "charlm" / MODELS[0] / "summary.json").read_text())
    assert 60000 <= summary["chars_seen"] < 60000 + 8 * 40 and summary["model"] == f"charlm/{MODELS[0]}/best-lm.pt"
    assert summary["device_run"]["device"] == "cpu" and summary["model_dtype"] == "float16"
    bert = json.loads((run["home"] / "bert" / MODELS[1] / "summary.json").read_text())
    assert 16000 <= bert["tokens_seen"] and bert["device_run"]["transport"] == {"model.safetensors": "float16"}


def test_every_call_brings_back_files_within_the_limits(run) -> None:
    assert parts.PART_BYTES <= 15 * parts.MIB and parts.BATCH_BYTES + parts.MIB <= 64 * parts.MIB and parts.BATCH_PARTS + 2 <= parts.MAX_FILES
    manifest = parts.read_manifest(run["outs"][0])
    assert manifest["batches"] == len(run["outs"]) >= 2
    for out in run["outs"]:
        files = list(out.iterdir())
        assert len(files) <= parts.MAX_FILES and all(f.is_file() and parts.SAFE_NAME.match(f.name) for f in files)
        assert all(f.stat().st_size <= 16 * parts.MIB for f in files) and sum(f.stat().st_size for f in files) <= 64 * parts.MIB
    sent = {p.name: p for out in run["outs"] for p in out.iterdir() if p.name not in (parts.MANIFEST, parts.LOG)}
    assert sorted(sent) == sorted(p["file"] for p in manifest["parts"])
    for part in manifest["parts"]:
        assert part["bytes"] <= PART and parts.sha256_of(sent[part["file"]]) == part["sha256"] == parts.sha256_of(sent[part["file"]])
    assert {m["name"] for m in manifest["models"]} == set(MODELS) and all(m["complete"] for m in manifest["models"])
    assert all(not name.startswith("checkpoint") for m in manifest["models"] for name in m["files"])


def test_reassembled_models_load(run) -> None:
    import torch
    from flair.data import Sentence
    from flair.models import LanguageModel
    from safetensors.torch import load_file

    from flairsuite.embeddings import resolve

    lm = LanguageModel.load_language_model(run["home"] / "charlm" / MODELS[0] / "best-lm.pt")
    assert lm.is_forward_lm and lm.hidden_size == 32
    assert all(t.dtype == torch.float32 for t in load_file(str(run["home"] / "bert" / MODELS[1] / "model.safetensors")).values()
               if t.is_floating_point())
    embedding = resolve("bert:de-paper", run["home"])  # the suite's loader of `bert:NAME`
    sentence = Sentence("Am Montag besucht Anna die Stadt Berlin .")
    embedding.embed(sentence)
    assert sentence[0].embedding.shape[-1] == 32
    assert "de-paper:" in run["report"] and "missing" not in run["report"]


def test_reassemble_places_only_complete_models(run, tmp_path) -> None:
    placed = script(str(DEVICE / "reassemble.py"), str(run["outs"][0]), "--home", str(tmp_path), env=run["env"])
    assert "parts missing (batches [2" in placed.stdout and not (tmp_path / "bert" / MODELS[1]).exists()
    again = script(str(DEVICE / "reassemble.py"), *map(str, run["outs"]), "--home", str(run["home"]), env=run["env"])
    assert "exists; not replaced" in again.stdout


def test_runtime_imports_travel_or_are_on_the_device(run) -> None:
    """What the workers imported (every module, lazily imported ones included) is stdlib, on the image, a carried wheel,
    a stand-in or flairsuite: prepare.py's list, derived from a fresh interpreter's imports, misses nothing."""
    carried = {prepare.normalized(r.split("==")[0]) for r in prepare.wheel_list()}
    known = carried | prepare.on_device() | prepare.STUBBED | prepare.LOCAL
    found = importlib.metadata.packages_distributions()
    modules = set((run["root"] / "imports.txt").read_text().split()) - set(sys.stdlib_module_names)
    missing = {d for m in modules for d in found.get(m, []) if prepare.normalized(d) not in known}
    assert not missing, missing


def test_wheel_list_and_pip_command_without_downloading() -> None:
    wanted = prepare.wheel_list(["flair", "torch", "boto3", "botocore", "transformers", "flairsuite", "segtok", "numpy", "click"])
    assert wanted == sorted([f"flair=={importlib.metadata.version('flair')}", f"segtok=={importlib.metadata.version('segtok')}",
                             f"transformers=={importlib.metadata.version('transformers')}"])
    command = prepare.pip_command(wanted, Path("wheels"))
    assert command[1:6] == ["-m", "pip", "download", "--no-deps", "--only-binary=:all:"] and ["--python-version", "3.12"] == command[6:8]
    assert "manylinux2014_x86_64" in command and command[-len(wanted) - 2:] == ["-d", "wheels", *wanted]


def test_stand_ins_give_what_flair_imports() -> None:
    """With the stand-ins first on the path (on the device no boto3 is installed at all), flair imports, and a download
    through them is refused."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import flair.models, flair.embeddings, boto3; from botocore import UNSIGNED\n"
            "from botocore.config import Config; assert boto3.__file__.startswith(sys.argv[1]); Config(signature_version=UNSIGNED)\n"
            "try:\n    boto3.resource('s3')\nexcept RuntimeError:\n    print('refused')")
    result = subprocess.run([sys.executable, "-c", code, str(DEVICE / "stubs")], capture_output=True, text=True, timeout=600)
    assert result.stdout.strip().splitlines()[-1:] == ["refused"], result.stderr


def test_park_moves_the_largest_tracked_models_out_until_the_tree_fits(tmp_path, monkeypatch) -> None:
    repo = tmp_path / "repo"
    files = {"charlm/a/best-lm.pt": 1536 * 1024, "bert/b/model.safetensors": 1024 * 1024, "README.md": 1000}
    for name, size in files.items():
        write_file(repo / name, "x" * size)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    monkeypatch.setattr(prepare, "REPO", repo)
    monkeypatch.setattr(prepare, "LIMIT", 2 * 1024 * 1024)
    monkeypatch.setattr(prepare, "MARGIN", 0)
    bundle = repo / ".device-bundle"
    assert prepare.size(bundle, quiet=True) == sum(files.values())
    prepare.park(bundle, tmp_path / "parked")
    assert not (repo / "charlm/a/best-lm.pt").exists() and (repo / "bert/b/model.safetensors").exists()
    assert prepare.size(bundle, quiet=True) <= 2 * 1024 * 1024
    prepare.unpark(tmp_path / "parked")
    assert (repo / "charlm/a/best-lm.pt").stat().st_size == files["charlm/a/best-lm.pt"] and not (tmp_path / "parked" / "parked.json").exists()
