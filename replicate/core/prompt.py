"""The task prompt (TASK.md) an agent reads (pure)."""

from __future__ import annotations

from replicate.core.records import Example, Target

_KIND_WORDS = {
    "function": "function",
    "method": "method",
    "classmethod": "class method",
    "staticmethod": "static method",
}


# What the reward is (docs/design.md §4), in words an agent and its trainer can act on.
REWARD_SENTENCE = (
    "The reward runs from 0 to 1: the share of inputs that match, weighted by the kind of input "
    "(calls seen in the repository's tests, generated variations of them, edge cases, inputs on "
    "which the original raises) and rescaled so that the best trivial body (`return None`, "
    "returning an argument or a constant, raising, or a lookup table of the visible examples) "
    "earns 0, so only behaviour beyond such shortcuts earns anything and matching every input "
    "earns 1."
)


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
        "and its behaviour is compared with the original's.",
        f"- {REWARD_SENTENCE}",
        "- Keep the signature. Helpers you add to the same file are fine.",
        "",
    ]
    return "\n".join(lines)
