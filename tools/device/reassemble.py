"""Run HERE after a device session (README.md): join the parts that the `run` calls brought back, check every SHA-256, and
place the model folders under charlm/ and bert/ with their summaries.

    python tools/device/reassemble.py /work/.device/<call-1> /work/.device/<call-2> ... [--home .] [--force]

Each folder is one call's files (`files_at`): parts, manifest.json, log.txt. A model whose parts are all there and check is
placed (`charlm/NAME/`, `bert/NAME/`); one with parts missing is named with the batches still to fetch. Its summary.json
gets `model` as a path below the home folder, the labeled corpora's character coverage (the bundle's coverage.json: the
device has no labeled sets) and `device_run` (which GPU, when, and what travelled in float16), so that the numbers from the
device are told apart (README.md, 'Recording the results'). A BERT's weights travel in float16 and are float32 again here.
"""

import argparse
import hashlib
import json
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import device_parts as parts  # noqa: E402

REPO = HERE.parents[1]


def newest_manifest(folders: list[Path]) -> dict[str, Any]:
    manifests = [parts.read_manifest(f) for f in folders if (f / parts.MANIFEST).is_file()]
    if not manifests:
        raise SystemExit(f"no {parts.MANIFEST} in {', '.join(map(str, folders))}")
    return max(manifests, key=lambda m: m["created"])


def found_parts(manifest: dict[str, Any], folders: list[Path]) -> dict[str, Path]:
    """The parts of `manifest` found in `folders` whose size and SHA-256 check (a bad copy is reported and left out)."""
    good = {}
    for part in manifest["parts"]:
        for folder in folders:
            path = folder / part["file"]
            if path.is_file() and path.stat().st_size == part["bytes"] and parts.sha256_of(path) == part["sha256"]:
                good[part["file"]] = path
                break
            if path.is_file():
                print(f"{path}: size or SHA-256 differs from the manifest; not used")
    return good


def joined(model: dict[str, Any], found: dict[str, Path], temp: Path) -> Path:
    """The model's tar, joined from its parts and checked; then extracted into `temp`: the folder."""
    tar_path = temp / f"{model['name']}.tar"
    digest = hashlib.sha256()
    with tar_path.open("wb") as sink:
        for name in model["parts"]:
            block = found[name].read_bytes()
            digest.update(block)
            sink.write(block)
    if digest.hexdigest() != model["sha256"]:
        raise SystemExit(f"{model['name']}: the joined parts do not give the packed tar (SHA-256 differs)")
    with tarfile.open(tar_path) as tar:
        members = tar.getmembers()
        expected = {f"{model['name']}/{name}" for name in model["files"]}
        if {m.name for m in members} != expected or not all(m.isfile() for m in members):
            raise SystemExit(f"{model['name']}: the tar holds other files than the manifest names")
        tar.extractall(temp, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(temp)
    tar_path.unlink()
    return temp / model["name"]


def float32_again(path: Path) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    tensors = load_file(str(path))
    save_file({k: v.float() if v.dtype == torch.float16 else v for k, v in tensors.items()}, str(path), {"format": "pt"})


def annotate(folder: Path, model: dict[str, Any], manifest: dict[str, Any], coverage: dict[str, Any] | None) -> dict[str, Any]:
    """The summary as placed: paths below the home folder, the labeled coverage, where it was trained."""
    path = folder / "summary.json"
    summary = json.loads(path.read_text(encoding="utf-8"))
    summary["model"] = f"charlm/{model['name']}/best-lm.pt" if model["kind"] == "charlm" else f"bert/{model['name']}"
    if coverage and model["kind"] == "charlm" and not summary.get("labeled_coverage") and coverage.get("splits") == summary["corpus"].get("splits"):
        summary["labeled_coverage"] = coverage["labeled_coverage"]
    if coverage and isinstance(summary.get("data"), dict) and summary["data"].get("prepared"):
        summary["data"]["prepared"] = f"cache/prepared/{Path(summary['data']['prepared']).name}"
    summary["device_run"] = {"device": manifest["device"], "packed": manifest["created"], "by": "tools/device/device_train.py",
                             "transport": model.get("transport") or {}}
    path.write_text(json.dumps(summary, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return summary


def reassemble(folders: list[Path], home: Path, bundle: Path, force: bool) -> list[str]:
    """Place every complete model; the report lines."""
    manifest = newest_manifest(folders)
    found = found_parts(manifest, folders)
    coverage_file = bundle / "coverage.json"
    coverage = json.loads(coverage_file.read_text(encoding="utf-8")) if coverage_file.is_file() else None
    lines = []
    for model in manifest["models"]:
        missing = [p for p in manifest["parts"] if p["file"] in model["parts"] and p["file"] not in found]
        if missing:
            lines.append(f"{model['name']}: {len(missing)} of {len(model['parts'])} parts missing (batches {sorted({p['batch'] for p in missing})})")
            continue
        target = home / model["kind"] / model["name"]
        if target.exists() and not force:
            lines.append(f"{model['name']}: {target} exists; not replaced (--force replaces it)")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".reassemble-") as temp:  # git-ignored there
            folder = joined(model, found, Path(temp))
            for name in model.get("transport") or {}:
                float32_again(folder / name)
            summary = annotate(folder, model, manifest, coverage) if (folder / "summary.json").is_file() else None
            if target.exists():
                shutil.rmtree(target)
            shutil.move(str(folder), str(target))
        if summary is None:
            lines.append(f"{model['name']}: placed in {target}, without summary.json (its training was stopped before the end)")
        elif model["kind"] == "charlm":
            lines.append(f"{model['name']}: {target}: {summary['chars_seen']:,} characters in {summary['hours']} h on {manifest['device']}, "
                         f"valid ppl {summary['valid_ppl']}, test ppl {summary.get('test_ppl')}")
        else:
            lines.append(f"{model['name']}: {target}: {summary['tokens_seen']:,} tokens in {summary['hours']} h on {manifest['device']}, "
                         f"valid accuracy {summary['valid_accuracy']}, test accuracy {summary['test_accuracy']}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="each call's files (files_at)")
    parser.add_argument("--home", type=Path, default=REPO, help="the folder holding charlm/ and bert/")
    parser.add_argument("--bundle", type=Path, default=REPO / ".device-bundle", help="for coverage.json")
    parser.add_argument("--force", action="store_true", help="replace model folders that exist")
    args = parser.parse_args()
    for line in reassemble(args.folders, args.home, args.bundle, args.force):
        print(line)


if __name__ == "__main__":
    main()
