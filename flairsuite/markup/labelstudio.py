"""Label Studio's JSON import with pre-annotations: a list of tasks, each `{"data": {"text": ...}, "predictions": [...]}`.

Each task's one prediction holds the spans as `labels` results, `value` `{"start", "end", "text", "labels": [TYPE]}`
with character offsets (Unicode code points) in the text, and the tagger's confidence as `score`. The result names
match Label Studio's "Named Entity Recognition" template: a `<Labels name="label" toName="text">` over a
`<Text name="text" value="$text"/>`; a project that names them otherwise needs the same names here (`FROM_NAME`, `TO_NAME`).
"""

import json
from collections.abc import Iterable

from flairsuite.markup.annotated import Annotated

FROM_NAME, TO_NAME = "label", "text"


def labelstudio_task(document: Annotated, model_version: str) -> dict:
    """One task: the text, and the spans as one prediction of `model_version` (its score: the mean span confidence)."""
    results = [
        {
            "id": f"e{number}",
            "from_name": FROM_NAME,
            "to_name": TO_NAME,
            "type": "labels",
            "value": {"start": span.start, "end": span.end, "text": document.text[span.start : span.end], "labels": [span.type]},
            "score": round(span.confidence, 4),
        }
        for number, span in enumerate(document.spans, 1)
    ]
    score = sum(span.confidence for span in document.spans) / len(document.spans) if document.spans else 1.0
    return {"data": {"text": document.text}, "predictions": [{"model_version": model_version, "score": round(score, 4), "result": results}]}


def labelstudio_json(documents: Iterable[Annotated], model_version: str) -> str:
    """The tasks of the documents as one JSON file (a list), for Label Studio's import."""
    return json.dumps([labelstudio_task(document, model_version) for document in documents], ensure_ascii=False, indent=1) + "\n"
