"""Load on `flairsuite serve`: many POST /tag and INCEpTION POST /predict requests of real German letters, some at a time, over loopback.

Starts `flairsuite serve MODEL --port 0` (127.0.0.1 only, a free port) in a child process, builds short
letters from the Sturm edition (consecutive sentences of a split, detokenised, 2 to 6 sentences each),
and sends `--requests` of them (default 2,000), `--concurrency` at a time (default 16), with httpx's
async client; it stops sending after `--time-limit` seconds. Every answer is checked (HTTP 200, each
span's text equal to the letter at its offsets). Prints requests/s, p50/p90/p99 latency, errors and the
server's peak RSS (VmHWM of /proc/<pid>/status), and writes benchmarks/results/serve_load.json.
The comparison, measured in the same run on the same server: `--baseline-requests` sent one at a
time (concurrency 1), which is what a server without request batching gets; the ratio of requests/s
is printed.

INCEpTION's external recommender (`--predict-requests`, default 1,000; 0: none): documents of
`--letters-per-document` letters (default 3) as CASes built with dkpro-cassis on the NamedEntity type
system of tests/fixtures/inception (Sentence and Token annotations: the Sturm tokens), posted to
POST /predict `--concurrency` at a time. Every answer is checked (HTTP 200, an XMI holding
suggestions; after the load, one answer per document is read back with cassis and each suggestion
must start and end at a token of the CAS). Prints the same numbers plus tokens/s, and compares them
with `flairsuite predict MODEL` on the same documents' texts in the same run (a child process, before
the /predict load and after each of its `--parts` parts while the server idles, so that both see about
the same load of the machine; the mean of those; its tokens/s counts its own tokens over its tagging time:
the seconds it reports minus those it reports for a one-line file, i.e. less the model's loading; the texts `--predict-repeat` times,
default 10, so that its tagging takes tens of seconds, not one or two). Without `--model` and
without a cached predict_speed model, an untrained BiLSTM-CRF over charlm:de-forward/backward of
$FLAIRSUITE_HOME is built once and cached (`--untrained`: always; untrained costs what trained costs).
Run `python benchmarks/serve_load.py -h`; see benchmarks/README.md.
"""

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import httpx
from common import machine, run_main

from flairsuite.corpora.labeled import read_splits
from flairsuite.corpora.registry import dataset
from flairsuite.errors import FlairsuiteError
from flairsuite.files.atomic import write_json
from flairsuite.files.paths import corpora_dir, home

NE = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
SENTENCE = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Sentence"
TOKEN = "de.tudarmstadt.ukp.dkpro.core.api.segmentation.type.Token"
TYPE_SYSTEM = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "inception" / "NamedEntity-TypeSystem.xml"
PREDICTED = re.compile(r'inception_internal_predicted="true"')
SUMMARY = re.compile(r"tagged ([\d,]+) sentences, ([\d,]+) tokens in ([\d.]+) s")

HERE = Path(__file__).resolve().parent
STARTUP_SECONDS = 900
NO_SPACE_BEFORE = re.compile(r" ([.,;:!?)\]»“])")
NO_SPACE_AFTER = re.compile(r"([(\[„«]) ")


def parse_args(argv: Optional[list[str]] = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--model", type=Path, help="the saved tagger to serve (default: the newest benchmarks/cache/predict_speed-*.pt)")
    add("--requests", type=int, default=2000, help="requests to send at most (default 2000)")
    add("--concurrency", type=int, default=16, help="requests in flight at a time (default 16)")
    add("--time-limit", type=float, default=600.0, help="seconds after which no new request is sent (default 600)")
    add("--timeout", type=float, default=120.0, help="seconds one request may take before it counts as an error (default 120)")
    add("--baseline-requests", type=int, default=200, help="requests sent one at a time afterwards, the comparison (default 200; 0: none)")
    add("--predict-requests", type=int, default=1000, help="INCEpTION POST /predict requests, --concurrency at a time (default 1000; 0: none)")
    add("--letters-per-document", type=int, default=3, help="letters in one /predict document (default 3)")
    add("--predict-repeat", type=int, default=10, help="times `flairsuite predict` tags the documents' texts, one file (default 10)")
    add("--parts", type=int, default=4, help="the /predict load in this many parts, `flairsuite predict` before the first and after each (default 4)")
    add("--untrained", action="store_true", help="serve an untrained BiLSTM-CRF on charlm:de-forward/backward (built once, cached)")
    add("--split", default="test", help="the Sturm split the letters come from (default test)")
    add("--threads", type=int, default=0, help="the server's torch threads (default: torch's, all cores)")
    add("--corpora-dir", help="datasets folder (default: $FLAIRSUITE_CORPORA, then <home>/corpora)")
    add("--out", type=Path, default=HERE / "results" / "serve_load.json", help="results JSON")
    args = parser.parse_args(argv)
    if args.requests < 1 or args.concurrency < 1 or args.parts < 1 or args.predict_repeat < 1 or args.time_limit <= 0:
        parser.error("--requests, --concurrency, --parts and --predict-repeat must be at least 1, --time-limit positive")
    return args


def default_model(untrained: bool) -> Path:
    """The model predict_speed.py trained and cached, the newest if several; else (or with `untrained`) an untrained one."""
    cached = sorted((HERE / "cache").glob("predict_speed-*.pt"), key=lambda path: path.stat().st_mtime)
    return cached[-1] if cached and not untrained else untrained_model()


def untrained_model() -> Path:
    """A BiLSTM-CRF (the registry's bilstm-crf) over charlm:de-forward and de-backward, untrained, saved once in benchmarks/cache."""
    target = HERE / "cache" / "serve_load-untrained-bilstm-crf.pt"
    if target.is_file():
        return target
    import flair
    from flair.data import Dictionary

    from flairsuite.embeddings import stack
    from flairsuite.files.atomic import atomic_file
    from flairsuite.models.registry import build_tagger

    flair.set_seed(1)
    types = Dictionary(add_unk=False)
    types.span_labels = True
    for kind in ("pers", "place", "org", "date", "work"):
        types.add_item(kind)
    model = build_tagger("bilstm-crf", stack(["charlm:de-forward", "charlm:de-backward"], home()), types, "ner")
    with atomic_file(target) as temp:
        model.save(temp)
    return target


def letters(split: str, root: Path) -> list[str]:
    """Short letters: runs of 2, 3, ... 6 consecutive Sturm sentences, detokenised."""
    sentences = read_splits(dataset("sturm"), root, [split])[split].sentences
    lines = [NO_SPACE_AFTER.sub(r"\1", NO_SPACE_BEFORE.sub(r"\1", " ".join(s.tokens))) for s in sentences]
    found, position, size = [], 0, 2
    while position < len(lines):
        found.append(" ".join(lines[position : position + size]))
        position += size
        size = size + 1 if size < 6 else 2
    return found


def token_offsets(text: str, tokens: list[str], start: int) -> list[tuple[int, int]]:
    """Where each token is in `text`, one after the other from `start`."""
    found, position = [], start
    for token in tokens:
        begin = text.index(token, position)
        position = begin + len(token)
        found.append((begin, position))
    return found


def documents(split: str, root: Path, per: int) -> list[tuple[str, list[list[tuple[int, int]]]]]:
    """Documents of `per` letters each (a blank line between letters): their texts and, per sentence, the token offsets."""
    sentences = read_splits(dataset("sturm"), root, [split])[split].sentences
    found, position, size = [], 0, 2
    letters: list[list[list[str]]] = []
    while position < len(sentences):
        letters.append([s.tokens for s in sentences[position : position + size]])
        position += size
        size = size + 1 if size < 6 else 2
    for first in range(0, len(letters), per):
        text, offsets = "", []
        for letter in letters[first : first + per]:
            text += "\n\n" if text else ""
            for tokens in letter:
                line = NO_SPACE_AFTER.sub(r"\1", NO_SPACE_BEFORE.sub(r"\1", " ".join(tokens)))
                text += (" " if text and not text.endswith("\n") else "") + line
                offsets.append(token_offsets(text, tokens, len(text) - len(line)))
        found.append((text, offsets))
    return found


def inception_type_system() -> Any:
    """The fixture's NamedEntity type system with the suggestion features INCEpTION adds."""
    import cassis

    typesystem = cassis.load_typesystem(TYPE_SYSTEM.read_text(encoding="utf-8"))
    layer = typesystem.get_type(NE)
    typesystem.create_feature(layer, "inception_internal_predicted", "uima.cas.Boolean")
    typesystem.create_feature(layer, "value_score", "uima.cas.Double")
    return typesystem


def predict_bodies(docs: list[tuple[str, list[list[tuple[int, int]]]]]) -> list[bytes]:
    """One POST /predict body per document: its CAS (Sentence and Token annotations) as XMI, with the type system."""
    import cassis

    typesystem = inception_type_system()
    xml = typesystem.to_xml()
    metadata = {"layer": NE, "feature": "value", "projectId": 1, "anchoringMode": "tokens", "crossSentence": False}
    bodies = []
    for i, (text, sentences) in enumerate(docs):
        cas = cassis.Cas(typesystem=typesystem)
        cas.sofa_string = text
        for tokens in sentences:
            for begin, end in tokens:
                cas.add(typesystem.get_type(TOKEN)(begin=begin, end=end))
            cas.add(typesystem.get_type(SENTENCE)(begin=tokens[0][0], end=tokens[-1][1]))
        body = {"metadata": metadata, "document": {"xmi": cas.to_xmi(), "documentId": i, "userId": "benchmark"}, "typeSystem": xml}
        bodies.append(json.dumps(body).encode("utf-8"))
    return bodies


def check_suggestions(xmi: str, sentences: list[list[tuple[int, int]]]) -> Optional[str]:
    """None if every suggestion of an answered CAS starts and ends at a token of the document, else what is wrong."""
    import cassis

    cas = cassis.load_cas_from_xmi(xmi, typesystem=inception_type_system())
    starts = {begin for tokens in sentences for begin, _ in tokens}
    ends = {end for tokens in sentences for _, end in tokens}
    found = [a for a in cas.select(NE) if a.inception_internal_predicted]
    if not found:
        return "no suggestions"
    bad = [a for a in found if a.begin not in starts or a.end not in ends]
    return f"{len(bad)} suggestions off the tokens" if bad else None


def predict_command(model: Path, path: Path, threads: int) -> tuple[int, float]:
    """`flairsuite predict MODEL PATH --format json`: the tokens and seconds it reports on stderr."""
    command = [sys.executable, "-c", "from flairsuite.cli import main; main()", "predict", str(model), str(path), "--format", "json", "--out", os.devnull]
    env = {**os.environ, **({"OMP_NUM_THREADS": str(threads)} if threads else {})}
    done = subprocess.run(command, capture_output=True, text=True, encoding="utf-8", env=env)
    found = SUMMARY.search(done.stderr)
    if done.returncode or not found:
        raise FlairsuiteError(f"flairsuite predict failed (exit code {done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    return int(found.group(2).replace(",", "")), float(found.group(3))


def predict_speed(model: Path, texts: list[str], threads: int, repeat: int, loading: Optional[float] = None) -> dict[str, Any]:
    """`flairsuite predict`'s tokens/s on the texts `repeat` times (one file, a blank line between them), less its model loading
    (measured on a one-line file unless given)."""
    with tempfile.TemporaryDirectory() as tmp:
        full, tiny = Path(tmp) / "documents.txt", Path(tmp) / "one-line.txt"
        full.write_text("\n\n".join(texts * repeat) + "\n", encoding="utf-8")
        tiny.write_text("Anna kam.\n", encoding="utf-8")
        tokens, seconds = predict_command(model, full, threads)
        if loading is None:
            _, loading = predict_command(model, tiny, threads)
    tagging = max(seconds - loading, 1e-3)
    return {"tokens": tokens, "seconds": seconds, "loading_seconds": loading, "tokens_per_s": round(tokens / tagging),
            "tokens_per_s_with_loading": round(tokens / seconds)}  # fmt: skip


def predict_baseline(measured: list[dict[str, Any]]) -> dict[str, Any]:
    """`flairsuite predict` measured before the /predict load and after each of its parts: the mean tokens/s, and each."""
    return {**measured[0], "tokens_per_s": round(statistics.mean(m["tokens_per_s"] for m in measured)), "measurements": measured}


def start_server(model: Path, threads: int) -> tuple[subprocess.Popen, str]:
    """`flairsuite serve` in a child process on a free loopback port, and its URL once /health answers."""
    command = [sys.executable, "-c", "from flairsuite.cli import main; main()", "serve", str(model), "--host", "127.0.0.1", "--port", "0", "--no-access-log"]
    command += ["--threads", str(threads)] if threads else []
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    announced: list[str] = []
    ready = threading.Event()

    def pump() -> None:  # the server's output goes on to ours
        for line in process.stdout:
            sys.stderr.write(f"  server: {line}")
            match = re.search(r" on (http://\S+)", line)
            if match and not announced:
                announced.append(match.group(1))
                ready.set()

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not ready.wait(1):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise FlairsuiteError(f"flairsuite serve did not start (exit code {process.poll()}; its output is above)")
    url = announced[0]
    while httpx.get(url + "health", timeout=30).status_code != 200:
        time.sleep(0.2)
    return process, url


def memory(pid: int) -> dict[str, float]:
    """The process's resident memory now and at its peak, in MB (/proc/<pid>/status)."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {name: int(fields[key].split()[0]) / 1024 for name, key in (("rss_mb", "VmRSS"), ("peak_rss_mb", "VmHWM"))}


def check(text: str, response: httpx.Response) -> Optional[str]:
    """None for a good answer, else the kind of error."""
    if response.status_code != 200:
        return f"HTTP {response.status_code}"
    spans = response.json()["spans"]
    if any(text[s["start"] : s["end"]] != s["text"] for s in spans):
        return "offsets do not match the text"
    return None


def check_predict(response: httpx.Response) -> Optional[str]:
    """None for a good /predict answer (an XMI with suggestions), else the kind of error."""
    if response.status_code != 200:
        return f"HTTP {response.status_code}"
    document = response.json().get("document")
    return None if isinstance(document, str) and PREDICTED.search(document) else "no suggestions in the answer"


async def load(
    url: str,
    route: str,
    bodies: list[bytes],
    check_answer: Callable[[int, httpx.Response], Optional[str]],
    requests: int,
    concurrency: int,
    time_limit: float,
    timeout: float,
    keep: Optional[dict[int, httpx.Response]] = None,
) -> dict[str, Any]:
    """POST `requests` JSON bodies (cycling) to `route`, `concurrency` at a time; latencies of the good answers and the errors by
    kind (`check_answer(index of the body, response)`); `keep`: the last good answer per body."""
    latencies: list[float] = []
    errors: Counter = Counter()
    next_index = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Content-Type": "application/json"}
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:
        start = time.perf_counter()

        async def worker() -> None:
            nonlocal next_index
            while next_index < requests and time.perf_counter() - start < time_limit:
                index = next_index % len(bodies)
                next_index += 1
                sent = time.perf_counter()
                try:
                    response = await client.post(route, content=bodies[index], headers=headers)
                    error = check_answer(index, response)
                except httpx.HTTPError as err:
                    error = type(err).__name__
                if error:
                    errors[error] += 1
                else:
                    latencies.append(time.perf_counter() - sent)
                    if keep is not None:
                        keep[index] = response

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - start
    return {"sent": next_index, "seconds": seconds, "latencies": latencies, "errors": dict(errors)}


def percentile(values: list[float], share: float) -> float:
    """The value below which `share` of the sorted values lie (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def summary(run: dict[str, Any], chars: list[int], tokens: Optional[list[int]] = None) -> dict[str, Any]:
    """Requests, errors, requests/s, characters/s (and tokens/s of `tokens` per body) and latency percentiles of one load phase."""
    latencies = run["latencies"]
    ms = {f"p{p}_ms": round(percentile(latencies, p / 100) * 1000, 1) for p in (50, 90, 99)} if latencies else {}
    counted = {"tokens_per_s": round(sum(tokens[i % len(tokens)] for i in range(run["sent"])) / run["seconds"])} if tokens else {}
    return {
        "requests": run["sent"],
        "ok": len(latencies),
        "errors": sum(run["errors"].values()),
        "error_kinds": run["errors"],
        "seconds": round(run["seconds"], 2),
        "requests_per_s": round(len(latencies) / run["seconds"], 2),
        "chars_per_s": round(sum(chars[i % len(chars)] for i in range(run["sent"])) / run["seconds"]),
        **counted,
        **ms,
    }


def report(name: str, concurrency: int, phase: dict[str, Any]) -> None:
    latency = " ".join(f"{key[:-3]} {phase[key]:.0f} ms" for key in ("p50_ms", "p90_ms", "p99_ms") if key in phase)
    tokens = f", {phase['tokens_per_s']:,} tokens/s" if "tokens_per_s" in phase else ""
    print(f"{name}: {phase['requests']} requests, {concurrency} concurrent, in {phase['seconds']:.1f} s: {phase['requests_per_s']:.1f} requests/s, "
          f"{phase['chars_per_s']:,} characters/s{tokens}; latency {latency}; errors {phase['errors']} {phase['error_kinds'] or ''}")  # fmt: skip


def predict_phase(url: str, docs: list[tuple[str, list[list[tuple[int, int]]]]], args: argparse.Namespace, between: Callable[[int], None]) -> dict[str, Any]:
    """The /predict load on the documents' CASes in `args.parts` parts, `between(k)` after part k (the machine's load drifts: the
    comparison is measured beside each part); afterwards one answer per document read back and checked with cassis."""
    bodies = predict_bodies(docs)
    kept: dict[int, httpx.Response] = {}
    parts = []
    for k in range(args.parts):
        share = args.predict_requests // args.parts + (1 if k < args.predict_requests % args.parts else 0)
        parts.append(asyncio.run(load(url, "predict", bodies, lambda _, r: check_predict(r), share, args.concurrency, args.time_limit,
                                      args.timeout, kept)))  # fmt: skip
        between(k + 1)
    run = {"sent": sum(p["sent"] for p in parts), "seconds": sum(p["seconds"] for p in parts),
           "latencies": [value for p in parts for value in p["latencies"]], "errors": dict(sum((Counter(p["errors"]) for p in parts), Counter()))}  # fmt: skip
    tokens = [sum(len(t) for t in sentences) for _, sentences in docs]
    phase = summary(run, [len(text) for text, _ in docs], tokens)
    wrong = Counter(problem for i, r in kept.items() if (problem := check_suggestions(r.json()["document"], docs[i][1])))
    phase.update(documents=len(docs), mean_chars=round(statistics.mean(len(t) for t, _ in docs)), mean_tokens=round(statistics.mean(tokens)),
                 read_back=len(kept), read_back_errors=dict(wrong))  # fmt: skip
    phase["errors"] += sum(wrong.values())
    return phase


def say_predict(when: str, count: int, repeat: int, found: dict[str, Any]) -> None:
    print(f"flairsuite predict on the {count} documents' texts x {repeat} ({when}): {found['tokens']:,} tokens in {found['seconds']:.1f} s, "
          f"{found['loading_seconds']:.1f} s of it loading: {found['tokens_per_s']:,} tokens/s", flush=True)  # fmt: skip


def main() -> int:
    args = parse_args()
    model = args.model or default_model(args.untrained)
    root = corpora_dir(args.corpora_dir)
    texts = letters(args.split, root)
    chars = [len(text) for text in texts]
    tag_bodies = [json.dumps({"text": text}).encode("utf-8") for text in texts]
    print(f"{len(texts)} letters from sturm {args.split}: {statistics.mean(chars):.0f} characters on average (max {max(chars)})", flush=True)
    docs = documents(args.split, root, args.letters_per_document) if args.predict_requests else []
    baseline = None
    process, url = start_server(model, args.threads)
    try:
        idle = memory(process.pid)
        print(f"serving {model} at {url}: RSS {idle['rss_mb']:.0f} MB after loading", flush=True)

        def check_tag(index: int, response: httpx.Response) -> Optional[str]:
            return check(texts[index], response)

        loaded = summary(asyncio.run(load(url, "tag", tag_bodies, check_tag, args.requests, args.concurrency, args.time_limit, args.timeout)), chars)
        single = None
        if args.baseline_requests:
            single = summary(asyncio.run(load(url, "tag", tag_bodies, check_tag, args.baseline_requests, 1, args.time_limit, args.timeout)), chars)
        predicted = None
        if docs:  # `flairsuite predict` before the /predict load and after each part, while the server idles: the same machine load
            texts_of_docs = [text for text, _ in docs]
            measured = [predict_speed(model, texts_of_docs, args.threads, args.predict_repeat)]
            say_predict("before the /predict load", len(docs), args.predict_repeat, measured[0])

            def between(part: int) -> None:
                measured.append(predict_speed(model, texts_of_docs, args.threads, args.predict_repeat, measured[0]["loading_seconds"]))
                say_predict(f"after part {part} of {args.parts} of the /predict load", len(docs), args.predict_repeat, measured[-1])

            predicted = predict_phase(url, docs, args, between)
            baseline = predict_baseline(measured)
        after = memory(process.pid)
    finally:
        process.terminate()
        process.wait(30)
    result = {
        "model": str(model),
        "concurrency": args.concurrency,
        **loaded,
        "one_at_a_time": single,
        "ratio_requests_per_s": round(loaded["requests_per_s"] / single["requests_per_s"], 2) if single and single["requests_per_s"] else None,
        "predict": predicted,
        "flairsuite_predict": baseline,
        "ratio_predict_tokens_per_s": round(predicted["tokens_per_s"] / baseline["tokens_per_s"], 2) if predicted and baseline else None,
        "server_rss_mb_after_load": round(idle["rss_mb"]),
        "server_peak_rss_mb": round(after["peak_rss_mb"]),
        "letters": {"split": args.split, "count": len(texts), "mean_chars": round(statistics.mean(chars))},
        "stopped_by_time_limit": loaded["requests"] < args.requests,
        "machine": machine(args.threads or 0),
    }
    report("load", args.concurrency, loaded)
    print(f"server peak RSS {result['server_peak_rss_mb']} MB (after loading the model: {result['server_rss_mb_after_load']} MB)")
    if single:
        report("one at a time", 1, single)
        print(f"requests/s, {args.concurrency} concurrent (batched together) vs one at a time: {result['ratio_requests_per_s']:.2f}x")
    if predicted:
        report(f"INCEpTION /predict ({predicted['documents']} documents of {predicted['mean_tokens']} tokens)", args.concurrency, predicted)
        print(f"/predict tokens/s vs flairsuite predict's on the same texts (mean of its {len(baseline['measurements'])}): {predicted['tokens_per_s']:,} / "
              f"{baseline['tokens_per_s']:,} = "
              f"{result['ratio_predict_tokens_per_s']:.2f} (target >= 0.70); answers read back: {predicted['read_back']}, "
              f"wrong: {predicted['read_back_errors'] or 0}")  # fmt: skip
    write_json(args.out, result)
    print(f"wrote {args.out}")
    errors = loaded["errors"] + (single["errors"] if single else 0) + (predicted["errors"] if predicted else 0)
    return 0 if errors == 0 else 1


if __name__ == "__main__":
    run_main(main)
