"""The page `GET /` serves: paste a text, press Tag, see the entities highlighted, with a legend and confidences on hover.

Self-contained (inline CSS and script, nothing fetched but `tag`). The highlighting is
`flairsuite.markup.html`'s, the same as `flairsuite predict --format html`: the page posts to
`tag?html=1`, whose answer carries the marked text, the legend and the type colours rendered by
that module, and puts them in place.
"""

import html

from flairsuite.markup.html import CSS

PAGE_CSS = """\
textarea { width: 100%; box-sizing: border-box; min-height: 10em; font: inherit; padding: 0.5em; }
.controls { display: flex; align-items: center; gap: 1em; margin: 0.5em 0 1em; font-family: sans-serif; font-size: 0.9em; }
button { font-size: 1em; padding: 0.3em 1.2em; }
#status.error { color: #b00020; }
.hint { color: #555; }
"""
SCRIPT = """\
const form = document.getElementById("form");
const input = document.getElementById("text");
const button = document.getElementById("tag");
const status = document.getElementById("status");
const legend = document.getElementById("legend");
const result = document.getElementById("result");
const colours = document.getElementById("type-colours");

function show(message, error) {
  status.textContent = message;
  status.className = error ? "error" : "";
}

async function tagText(event) {
  event.preventDefault();
  button.disabled = true;
  show("Tagging\\u2026", false);
  try {
    const response = await fetch("tag?html=1", {
      method: "POST",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({text: input.value}),
    });
    let data = null;
    try { data = await response.json(); } catch (err) { data = null; }
    if (!response.ok || data === null) {
      show("Error: " + (data && data.error ? data.error : "HTTP " + response.status), true);
      return;
    }
    colours.textContent = data.markup.css;
    legend.innerHTML = data.markup.legend;
    result.innerHTML = data.markup.text;
    const entities = data.spans.length === 1 ? "1 entity" : data.spans.length + " entities";
    show(entities + " in " + data.sentences + (data.sentences === 1 ? " sentence" : " sentences"), false);
  } catch (err) {
    show("Error: the server cannot be reached (" + err.message + ")", true);
  } finally {
    button.disabled = false;
  }
}

form.addEventListener("submit", tagText);
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) form.requestSubmit();
});
"""


def page(model_name: str, max_chars: int) -> str:
    """The page for a model (its file name in the title) that accepts texts of at most `max_chars` characters."""
    title = html.escape(f"flairsuite serve: {model_name}")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>\n{CSS}{PAGE_CSS}</style>\n<style id=\"type-colours\"></style>\n</head>\n<body>\n"
        f"<header>\n<h1>{title}</h1>\n</header>\n<main>\n"
        '<form id="form">\n<label for="text" class="hint">Paste a text (UTF-8, at most '
        f"{max_chars:,} characters); Ctrl+Enter tags it too.</label>\n"
        f'<textarea id="text" name="text" maxlength="{max_chars}" spellcheck="false" autofocus></textarea>\n'
        '<div class="controls"><button id="tag" type="submit">Tag</button><span id="status" role="status"></span></div>\n'
        "</form>\n"
        '<div id="legend"></div>\n<div id="result" class="doc" aria-live="polite"></div>\n'
        f"</main>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    )
