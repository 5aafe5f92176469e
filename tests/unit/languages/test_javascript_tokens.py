"""The memorisation signal's tokens of a JavaScript/TypeScript body
(`languages/javascript_tokens.py`): a recalled body renamed, reformatted and commented is still
the original (recall 1.0), one written otherwise to the same contract shares little, and a file
without the target gives None."""

from __future__ import annotations

from replicate.core import Lexeme, recall
from replicate.languages.javascript_extract import extract_targets, parse_source
from replicate.languages.javascript_tokens import body_tokens

ORIGINAL = b"""'use strict';
const LIMIT = 3;
function wrapWords(text, width) {
  const lines = [];
  let line = '';
  for (const word of text.split(/\\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}
module.exports = { wrapWords };
"""
# The same body: names changed, strings changed, laid out otherwise and commented
DISGUISED = b"""'use strict';
const LIMIT = 3;
function wrapWords(s, w) {
  // wrap greedily
  const out = []; let cur = "";
  for (const piece of s.split(/ +/)) {
    if (cur && cur.length + 1 + piece.length > w) { out.push(cur); cur = piece; }
    else { cur = cur ? `${cur}-${piece}` : piece; }
  }
  if (cur) out.push(cur);
  return out;
}
module.exports = { wrapWords };
"""
# The same contract written otherwise: indices, a running length, a final join
INDEPENDENT = b"""'use strict';
const LIMIT = 3;
function wrapWords(text, width) {
  const words = text.split(/\\s+/);
  const result = [];
  let start = 0;
  while (start < words.length) {
    let used = words[start].length;
    let end = start + 1;
    while (end < words.length && used + 1 + words[end].length <= width) {
      used += 1 + words[end].length;
      end += 1;
    }
    result.push(words.slice(start, end).join(' '));
    start = end;
  }
  return result;
}
module.exports = { wrapWords };
"""


def target():  # type: ignore[no-untyped-def]
    (found,) = extract_targets(ORIGINAL, parse_source(ORIGINAL, "index.js"), "index.js")
    return found


def test_a_disguised_copy_is_all_original() -> None:
    original = body_tokens(ORIGINAL, target())
    assert original is not None and len(original) > 40
    assert (Lexeme.KEYWORD, "return") in original and (Lexeme.NAME, "lines") in original
    assert (Lexeme.STRING, "''") in original and not any("//" in t for _, t in original)
    disguised = body_tokens(DISGUISED, target())
    assert disguised is not None
    assert recall(disguised, original).copy == 1.0
    assert recall(original, original).copy == 1.0


def test_a_body_written_otherwise_shares_little() -> None:
    original = body_tokens(ORIGINAL, target())
    other = body_tokens(INDEPENDENT, target())
    assert original is not None and other is not None
    assert recall(other, original).copy < 0.5


def test_a_file_without_the_target_has_no_tokens() -> None:
    assert body_tokens(b"function other() { return 1; }\n", target()) is None


def test_typescript_types_are_words_of_the_body() -> None:
    source = b"export function half(n: number): string {\n  const x: number = n / 2;\n"
    source += b"  return String(x) as string;\n}\n"
    (found,) = extract_targets(source, parse_source(source, "a.ts"), "a.ts")
    tokens = body_tokens(source, found)
    assert tokens is not None
    assert (Lexeme.KEYWORD, "number") in tokens and (Lexeme.KEYWORD, "string") in tokens
    assert (Lexeme.NUMBER, "2") in tokens and (Lexeme.NAME, "String") in tokens
