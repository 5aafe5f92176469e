"""TASK.md of a module task (task kind `module`): the file to rebuild, the surface that must
exist (each function's and method's signature and docstring, by class), which members the hidden
inputs call, and what the reward measures."""

from __future__ import annotations

from replicate.core.prompt import sequence_lines, surface_lines
from replicate.core.records import Example, Target

MODULE_REWARD_SENTENCE = (
    "The reward runs from 0 to 1: the mean, over the functions and methods that are called, of "
    "each one's share of matching inputs (weighted by the kind of input: calls seen in the "
    "repository's tests, generated variations of them, edge cases, inputs on which the original "
    "raises), so no one function outweighs the others however many inputs it has; rescaled so "
    "that a file whose every function has the best trivial body for it (`return None`, "
    "returning an argument or a constant, raising, or a lookup table of the visible examples) "
    "earns 0, and matching every input earns 1."
)
MODULE_SEQUENCE_SENTENCE = (
    "With call sequences, the reward's raw score is half that mean and half the sequences' "
    "score: per class, the share of steps that match over its sequences (those the tests made "
    "and the generated ones counting alike), its classes counting alike."
)


def render_module_prompt(
    target: Target,
    examples: tuple[Example, ...],
    hidden_inputs: int,
    graded: tuple[str, ...],
    sequences: int = 0,
) -> str:
    """TASK.md of a module task: `target` is the module (its members the file's functions and
    methods, in source order); `graded`: the qualnames the hidden inputs call; `sequences`: how
    many call sequences of its classes grade it too."""
    lines = [
        f"# Implement the module `{target.symbol}`",
        "",
        f"In this repository the body of every function and method in `{target.path}` has been "
        "replaced by `raise NotImplementedError`; its imports, constants, `class` statements, "
        "class attributes, and each function's signature and docstring are kept. Write every "
        "body so that the module behaves exactly like the original one: the same return values "
        "(types included), the same exceptions (by type), and the same effect on the arguments "
        "and on the instances.",
    ]
    if target.docstring:
        lines += ["", "```text", target.docstring.rstrip(), "```"]
    lines += ["", "## Members that must exist", ""]
    section: str | None = "\0"  # no section yet
    for member in target.members:
        if member.class_name != section:
            section = member.class_name
            title = f"In class `{section}`" if section else "Functions"
            lines += [f"### {title}", ""]
        lines += [*surface_lines(member), ""]
    if examples:
        lines += ["## Examples", "", *(f"- `{ex.call}` → `{ex.outcome}`" for ex in examples), ""]
    called = ", ".join(f"`{name}`" for name in graded)
    lines += [
        "## How it is graded",
        "",
        f"- Only `{target.path}` is taken from your workspace; edits to other files are ignored. "
        "Answer with the whole file.",
        f"- {hidden_inputs} hidden calls of {called} (methods on an instance in a state the "
        "repository's tests reached) run in a sandbox without network, with every body of the "
        "file yours; their behaviour is compared with the original's. The other members are "
        "reached through these.",
        *sequence_lines(sequences),
        f"- {MODULE_REWARD_SENTENCE}",
        *([f"- {MODULE_SEQUENCE_SENTENCE}"] if sequences else []),
        "- Keep every name the file defines and every signature. Helpers you add are fine.",
        "",
    ]
    return "\n".join(lines)
