"""The task prompt (TASK.md) an agent reads (pure)."""

from __future__ import annotations

from replicate.core.records import Example, Target

_KIND_WORDS = {
    "function": "function",
    "method": "method",
    "classmethod": "class method",
    "staticmethod": "static method",
}


def render_prompt(target: Target, examples: tuple[Example, ...], hidden_inputs: int) -> str:
    """TASK.md: what to implement, where, the signature, the docstring and a few examples."""
    kind = _KIND_WORDS[target.kind]
    where = f"`{target.path}` (line {target.def_span.start_line})"
    lines = [
        f"# Implement `{target.symbol}`",
        "",
        f"In this repository the body of the {kind} `{target.qualname}` in {where} has been "
        "replaced by `raise NotImplementedError`. Write an implementation that behaves exactly "
        "like the original one did: the same return values (types included), the same "
        "exceptions (by type), and the same effect on its arguments"
        + (" and on `self`." if target.kind == "method" else "."),
        "",
        "## Signature",
        "",
        "```python",
        target.signature.rstrip(),
        "```",
    ]
    if target.docstring:
        lines += ["", "## Docstring", "", "```text", target.docstring.rstrip(), "```"]
    if examples:
        lines += ["", "## Examples", ""]
        lines += [f"- `{ex.call}` → `{ex.outcome}`" for ex in examples]
    lines += [
        "",
        "## How it is graded",
        "",
        f"- Only `{target.path}` is taken from your workspace; edits to other files are ignored.",
        f"- Your {kind} is called on {hidden_inputs} hidden inputs in a sandbox without network, "
        "and its behaviour is compared with the original's. The reward is the fraction that match.",
        "- Keep the signature. Helpers you add to the same file are fine.",
        "",
    ]
    return "\n".join(lines)
