"""Run HERE, before a device session (README.md): write the bundle that travels to the device machine, and check the size limit.

    python tools/device/prepare.py              # text + wheels + size (the bundle: .device-bundle/, git-ignored)
    python tools/device/prepare.py wheels --dry-run   # the wheel list and the pip command, nothing downloaded
    python tools/device/prepare.py size         # what a `run` call would send, against its 64 MiB
    python tools/device/prepare.py park [--dry-run]   # move the largest tracked model files out of the checkout until it fits
    python tools/device/prepare.py unpark       # ... and back, checked against their SHA-256

The bundle: `prepared/<name>/` (the prepared corpus of `--lang` as .xz text, its vocab.json and meta.json; the device encodes
the ids again), `coverage.json` (the labeled corpora's character coverage, which reassemble.py writes into the LM summaries),
`wheels/` (what flairsuite imports at run time that the device image lacks, for Python 3.12) and `manifest.json`.
"""

import argparse
import hashlib
import importlib.metadata
import json
import lzma
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUNDLE = REPO / ".device-bundle"
LIMIT = 64 * 1024 * 1024  # the working tree that travels, carried paths included
MARGIN = 4 * 1024 * 1024  # left for files others add before the call
FORCED = {"transformers", "tokenizers", "huggingface-hub"}  # on the image in other major versions (5.x, 0.23, 1.x); flair 0.15 needs transformers < 5
STUBBED = {"boto3", "botocore", "s3transfer", "jmespath"}  # stubs/: imported by flair at start, never called in pre-training
LOCAL = {"flairsuite"}  # travels as source
PLATFORMS = ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_24_x86_64", "manylinux_2_27_x86_64", "manylinux_2_28_x86_64",
             "manylinux_2_31_x86_64", "manylinux_2_34_x86_64", "manylinux_2_35_x86_64", "manylinux1_x86_64"]
PARK_ROOTS = ("charlm", "bert", "wordvectors")
PROBE = """
import importlib.metadata, json, sys
import flairsuite.cli, flairsuite.charlm.train_charlm, flairsuite.bert.train_bert, flairsuite.bert.data, flairsuite.files.checkpoint
import flair.models, flair.embeddings, matplotlib.pyplot, safetensors.torch, yaml, numpy
names = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names)
found = importlib.metadata.packages_distributions()
print(json.dumps(sorted({d for m in names for d in found.get(m, [])})))
"""


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def on_device() -> set[str]:
    lines = (HERE / "on_device.txt").read_text(encoding="utf-8").splitlines()
    return {normalized(line) for line in lines if line.strip() and not line.startswith("#")}


def imported_distributions() -> list[str]:
    """The distributions of every module flairsuite's pre-training imports at start (a fresh interpreter here)."""
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def wheel_list(imported: list[str] | None = None) -> list[str]:
    """`name==version` (this environment's versions) of what must travel as wheels: imported, and not on the device image."""
    present = on_device()
    needed = []
    for dist in imported if imported is not None else imported_distributions():
        name = normalized(dist)
        if name in LOCAL or name in STUBBED or (name in present and name not in FORCED):
            continue
        needed.append(f"{name}=={importlib.metadata.version(dist)}")
    return sorted(set(needed))


def pip_command(requirements: list[str], folder: Path) -> list[str]:
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    return [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--python-version", "3.12", "--implementation", "cp",
            *platforms, "-d", str(folder), *requirements]


def wheels(bundle: Path, dry_run: bool) -> list[str]:
    requirements = wheel_list()
    folder = bundle / "wheels"
    print(f"{len(requirements)} wheels for the device: {' '.join(requirements)}")
    if dry_run:
        print(" ".join(pip_command(requirements, folder)))
        return requirements
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {(normalized(r.split("==")[0]), r.split("==")[1]) for r in requirements}
    for stale in folder.glob("*.whl"):  # one version of each: two stop the whole install
        name, version = stale.name.split("-")[:2]
        if (normalized(name), version) not in wanted:
            stale.unlink()
    subprocess.run(pip_command(requirements, folder), check=True)
    return requirements


def compressed(source: Path, target: Path) -> str:
    """`source` as .xz at `target` (kept when it is already of these bytes); the source's SHA-256."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    stamp = target.with_name(target.name + ".sha256")
    if target.is_file() and stamp.is_file() and stamp.read_text().strip() == digest:
        return digest
    with source.open("rb") as plain, lzma.open(target, "wb", preset=6) as packed:
        shutil.copyfileobj(plain, packed, 1 << 22)
    stamp.write_text(digest + "\n")
    return digest


def text(bundle: Path, lang: str, corpus: tuple[str, ...], corpora: str | None, prepared: str | None) -> dict:
    """The prepared corpus (built or found in the cache as train-charlm does) into the bundle, with the labeled coverage."""
    sys.path.insert(0, str(REPO))
    from flairsuite.corpora.language_splits import labeled_tokens
    from flairsuite.files.paths import corpora_dir
    from flairsuite.rawtext.char_coverage import coverage_rows, training_characters
    from flairsuite.rawtext.language import prepare_language
    from flairsuite.rawtext.prepare import PREPARED_SPLITS, PreparedCorpus

    if prepared:
        corpus_folder = PreparedCorpus(Path(prepared), json.loads((Path(prepared) / "meta.json").read_text(encoding="utf-8")))
    else:
        corpus_folder = prepare_language(lang, corpus, corpora)
    target = bundle / "prepared" / corpus_folder.path.name
    for other in (bundle / "prepared").glob("*"):
        if other != target:
            shutil.rmtree(other)
    target.mkdir(parents=True, exist_ok=True)
    sources = {split: compressed(corpus_folder.text_path(split), target / f"{split}.txt.xz") for split in PREPARED_SPLITS}
    for name in ("meta.json", "vocab.json"):
        shutil.copy(corpus_folder.path / name, target / name)
    rows = coverage_rows(labeled_tokens(lang, corpora_dir(corpora)), set(corpus_folder.chars), training_characters(corpus_folder.text_path("train")))
    coverage = {"prepared": str(corpus_folder.path), "splits": corpus_folder.meta["splits"], "labeled_coverage": rows}
    (bundle / "coverage.json").write_text(json.dumps(coverage, indent=1) + "\n")
    print(f"prepared text: {corpus_folder.path} -> {target} ({sum(p.stat().st_size for p in target.glob('*.xz')) / 2**20:.1f} MiB as .xz)")
    return {"name": corpus_folder.path.name, "source": str(corpus_folder.path), "sha256": sources}


def tree_files(carry: list[Path]) -> dict[str, int]:
    """Every file a `run` call sends (README of the device tool): tracked and untracked-not-ignored files, shared/, carried paths."""
    listed = []
    for extra in ([], ["-o", "--exclude-standard"]):
        out = subprocess.run(["git", "ls-files", "-z", *extra], cwd=REPO, capture_output=True, check=True).stdout.decode()
        listed += [name for name in out.split("\0") if name]
    sizes = {name: (REPO / name).lstat().st_size for name in listed if (REPO / name).is_symlink() or (REPO / name).is_file()}
    for root in [REPO / "shared", *carry]:
        for path in ([root] if root.is_file() else root.rglob("*") if root.is_dir() else []):
            if path.is_file():
                sizes[str(path.relative_to(REPO))] = path.stat().st_size
    return sizes


def size(bundle: Path, quiet: bool = False) -> int:
    sizes = tree_files([bundle])
    total = sum(sizes.values())
    folders: dict[str, int] = {}
    for name, bytes_ in sizes.items():
        key = "/".join(name.split("/")[:2]) if "/" in name else name
        folders[key] = folders.get(key, 0) + bytes_
    if not quiet:
        print(f"a run call would send {total / 2**20:.1f} MiB (limit 64 MiB, carry {bundle.relative_to(REPO)}); largest:")
        for key, bytes_ in sorted(folders.items(), key=lambda item: -item[1])[:8]:
            print(f"  {bytes_ / 2**20:8.1f} MiB  {key}")
        if total > LIMIT - MARGIN:
            print("over the limit: `prepare.py park` moves the largest tracked model files out of the checkout until it fits "
                  "(`unpark` after the session); README.md, 'The 64 MiB limit'")
    return total


def park(bundle: Path, to: Path, dry_run: bool = False) -> None:
    """Move the largest tracked files under charlm/, bert/, wordvectors/ to `to` until the tree fits (git's index stays as it is)."""
    sizes = tree_files([bundle])
    excess = sum(sizes.values()) - (LIMIT - MARGIN)
    record = to / "parked.json"
    parked = json.loads(record.read_text()) if record.is_file() else []
    tracked = set(subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0"))
    for name in sorted((n for n in sizes if n in tracked and n.split("/")[0] in PARK_ROOTS), key=lambda n: -sizes[n]):
        if excess <= 0:
            break
        excess -= sizes[name]
        if dry_run:
            print(f"would park {name} ({sizes[name] / 2**20:.1f} MiB)")
            continue
        path, target = REPO / name, to / name
        target.parent.mkdir(parents=True, exist_ok=True)
        parked.append({"path": name, "bytes": sizes[name], "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
        shutil.move(path, target)
        record.write_text(json.dumps(parked, indent=1) + "\n")
        print(f"parked {name} ({sizes[name] / 2**20:.1f} MiB) in {to}")
    if excess > 0:
        print(f"still {excess / 2**20:.1f} MiB over: nothing more to park under {', '.join(PARK_ROOTS)}")


def unpark(to: Path) -> None:
    record = to / "parked.json"
    for entry in json.loads(record.read_text()) if record.is_file() else []:
        source, path = to / entry["path"], REPO / entry["path"]
        if hashlib.sha256(source.read_bytes()).hexdigest() != entry["sha256"]:
            raise SystemExit(f"{source}: not the bytes parked; left there")
        if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() != entry["sha256"]:
            raise SystemExit(f"{path}: another file is there now; {source} left where it is")
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(source, path)
        print(f"back: {entry['path']}")
    record.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", nargs="?", default="all", choices=["all", "text", "wheels", "size", "park", "unpark"])
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    parser.add_argument("--lang", default="de")
    parser.add_argument("--corpus", nargs="*", default=[], help="text files instead of the language's raw-text set (tests)")
    parser.add_argument("--corpora-dir", default=None)
    parser.add_argument("--prepared", default=None, help="a prepared-corpus folder to bundle as it is")
    parser.add_argument("--dry-run", action="store_true", help="wheels: print the list and the pip command only; park: what it would move")
    parser.add_argument("--to", type=Path, default=REPO.parent / "device-parked", help="park: the folder outside the checkout")
    args = parser.parse_args()
    bundle = args.bundle.resolve()
    if args.step == "park":
        return park(bundle, args.to, args.dry_run)
    if args.step == "unpark":
        return unpark(args.to)
    manifest_path = bundle / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else {}
    if args.step in ("all", "text"):
        manifest["prepared"] = text(bundle, args.lang, tuple(args.corpus), args.corpora_dir, args.prepared)
    if args.step in ("all", "wheels"):
        manifest["wheels"] = wheels(bundle, args.dry_run)
    if args.step != "size" and not args.dry_run:
        bundle.mkdir(parents=True, exist_ok=True)
        manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    if args.step in ("all", "size"):
        total = size(bundle)
        if total > LIMIT - MARGIN:
            sys.exit(1)


if __name__ == "__main__":
    main()
