"""The task prompt (TASK.md) an agent reads (pure)."""

from __future__ import annotations

import re
from enum import StrEnum

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


# A task prompt's words that depend on the target's language.
_LANGUAGE_WORDS = {
    "python": ("`raise NotImplementedError`", "exceptions (by type)", "self", "python"),
    "javascript": (
        '`throw new Error("not implemented")`',
        "thrown errors (class and message)",
        "this",
        "javascript",
    ),
    "typescript": (
        '`throw new Error("not implemented")`',
        "thrown errors (class and message)",
        "this",
        "typescript",
    ),
}
# A JavaScript/TypeScript task's reward, normalised against its degenerate baseline
SCRIPT_REWARD_SENTENCE = (
    "The reward runs from 0 to 1: the share of the hidden inputs on which your code's outcome "
    "(return value, thrown error, arguments after the call) equals the original's, as Node's "
    "`assert.deepStrictEqual` compares values, weighted by the kind of input and rescaled so "
    "that the best trivial body (`return undefined`, returning an argument, `this` or a "
    "constant, throwing, or a lookup table of the calls the repository's tests make) earns 0."
)


def render_prompt(
    target: Target, examples: tuple[Example, ...], hidden_inputs: int, language: str = "python"
) -> str:
    """TASK.md: what to implement, where, the signature, the docstring and a few examples."""
    kind = _KIND_WORDS[target.kind]
    stub, raises, this, fence = _LANGUAGE_WORDS[language]
    where = f"`{target.path}` (line {target.def_span.start_line})"
    lines = [
        f"# Implement `{target.symbol}`",
        "",
        f"In this repository the body of the {kind} `{target.qualname}` in {where} has been "
        f"replaced by {stub}. Write an implementation that behaves exactly "
        "like the original one did: the same return values (types included), the same "
        f"{raises}, and the same effect on its arguments"
        + (f" and on `{this}`." if target.kind == "method" else "."),
        "",
        "## Signature",
        "",
        f"```{fence}",
        target.signature.rstrip(),
        "```",
    ]
    if target.docstring:
        lines += ["", "## Docstring", "", "```text", target.docstring.rstrip(), "```"]
    if examples:
        lines += ["", "## Examples", ""]
        lines += [f"- `{ex.call}` → `{ex.outcome}`" for ex in examples]
    reward = REWARD_SENTENCE if language == "python" else SCRIPT_REWARD_SENTENCE
    lines += [
        "",
        "## How it is graded",
        "",
        f"- Only `{target.path}` is taken from your workspace; edits to other files are ignored.",
        f"- Your {kind} is called on {hidden_inputs} hidden inputs in a sandbox without network, "
        "and its behaviour is compared with the original's.",
        f"- {reward}",
        "- Keep the signature. Helpers you add to the same file are fine.",
        "",
    ]
    return "\n".join(lines)


CLASS_REWARD_SENTENCE = (
    "The reward runs from 0 to 1: the mean, over the methods that are called, of each method's "
    "share of matching inputs (weighted by the kind of input: calls seen in the repository's "
    "tests, generated variations of them, edge cases, inputs on which the original raises), so "
    "no one method outweighs the others; rescaled so that a class whose every method has the "
    "best trivial body for it (`return None`, returning an argument or a constant, raising, or "
    "a lookup table of the visible examples) earns 0, and matching every input earns 1."
)


def surface_lines(member: Target) -> list[str]:
    """A member's signature in a python block, its docstring (if any) in a text block after."""
    lines = ["```python", member.signature.rstrip(), "```"]
    if member.docstring:
        lines += ["", "```text", member.docstring.rstrip(), "```"]
    return lines


def render_class_prompt(
    target: Target,
    examples: tuple[Example, ...],
    hidden_inputs: int,
    graded: tuple[str, ...],
    sequences: int = 0,
) -> str:
    """TASK.md of a class task: the class to rebuild, each member's signature and docstring (the
    surface that must exist), which members the hidden inputs call, and what the reward is."""
    where = f"`{target.path}` (line {target.def_span.start_line})"
    lines = [
        f"# Implement the class `{target.symbol}`",
        "",
        f"In this repository the body of every method of the class `{target.qualname}` in "
        f"{where} has been replaced by `raise NotImplementedError`; its `class` statement, "
        "bases, decorators, class attributes, and each method's signature and docstring are "
        "kept. Write every method so that the class behaves exactly like the original one: the "
        "same return values (types included), the same exceptions (by type), and the same "
        "effect on the arguments and on the instance.",
        "",
        "## The class",
        "",
        "```python",
        target.signature.rstrip(),
        "```",
    ]
    if target.docstring:
        lines += ["", "```text", target.docstring.rstrip(), "```"]
    lines += ["", "## Members that must exist", ""]
    for member in target.members:
        lines += [f"### `{member.name}`", "", *surface_lines(member), ""]
    if examples:
        lines += ["## Examples", "", *(f"- `{ex.call}` → `{ex.outcome}`" for ex in examples), ""]
    called = ", ".join(f"`{name.rsplit('.', 1)[-1]}`" for name in graded)
    lines += [
        "## How it is graded",
        "",
        f"- Only `{target.path}` is taken from your workspace; edits to other files are ignored.",
        f"- {hidden_inputs} hidden calls of {called} (each on an instance in a state the "
        "repository's tests reached) run in a sandbox without network, with every method of "
        "the class yours; their behaviour is compared with the original's. The other members "
        "are reached through these.",
        *sequence_lines(sequences),
        f"- {CLASS_REWARD_SENTENCE}",
        *([f"- {SEQUENCE_REWARD_SENTENCE}"] if sequences else []),
        "- Keep the class and every signature. Helpers you add to the same file are fine.",
        "",
    ]
    return "\n".join(lines)


SEQUENCE_REWARD_SENTENCE = (
    "With call sequences, the reward's raw score is half that mean and half the share of steps "
    "that match over the sequences (those the tests made and the generated ones counting alike)."
)


def sequence_lines(sequences: int) -> list[str]:
    if not sequences:
        return []
    return [
        f"- {sequences} hidden call sequences: an instance built and called method after method "
        "(operators included), as the repository's tests did and in generated variations of "
        "that; each step's outcome, and the instance at the end, is compared with the "
        "original's, step by step."
    ]


class Context(StrEnum):
    """How much of the target's file a row's prompt shows (`replicate export --context`)."""

    FILE = "file"  # the whole file, only the target stubbed: other tasks' bodies as written
    CLASS = "class"  # the module's non-definitions and the definition that holds the target
    SIGNATURES = "signatures"  # the whole file, every task's body of the batch stubbed


_BACKTICKS = re.compile(r"`{3,}")

_SHOWN = {
    Context.FILE: "## The file as it is now",
    Context.CLASS: "## The part of the file around it",
    Context.SIGNATURES: "## The file, with some bodies left out",
}
_NOTE = {
    Context.FILE: "",
    Context.CLASS: "Only the module's imports and other non-definitions, and the definition that "
    "holds `{name}`, are shown; the other definitions are left out (each run marked with a "
    "`{comment} ...` comment) but are in the repository, and your code may use them.",
    Context.SIGNATURES: "The bodies of some other functions of this file are left out here too "
    "(they show {stub}, their signatures and docstrings kept), but the "
    "repository has them, and your code may call them.",
}


def fence(text: str) -> str:
    """A backtick fence longer than any run of backticks in `text`."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=2)
    return "`" * max(3, longest + 1)


def answer_sentence(
    qualname: str, context: Context, header: str = "def", language: str = "python"
) -> str:
    """How to answer: the whole file is a fair answer only when the whole file was shown as is.
    `header`: the keyword that starts the definition (`class` for a class task; `module` for a
    module task, whose answer is always the whole file)."""
    fenced = _LANGUAGE_WORDS[language][3]
    if header == "module":
        return (
            f"Answer with the whole module `{qualname}` in one ```{fenced} fenced block: every "
            "line of the file, its imports and every definition included."
        )
    head = f"Answer with your implementation of `{qualname}` in one ```{fenced} fenced block: "
    line = f"the `{header}` line" if language == "python" else "its signature"
    whole = f"its complete definition ({line} included)"
    if context is Context.FILE:
        return head + whole + ", or the whole file."
    return (
        head + whole + ", not the whole file: the rest of the file stays as the repository has it."
    )


def render_row_prompt(
    task_md: str,
    path: str,
    qualname: str,
    shown: str,
    context: Context,
    header: str = "def",
    language: str = "python",
) -> str:
    """A trainer row's one user message: TASK.md, the part of the file `context` shows, and how
    to answer (`header`: as `answer_sentence` takes it)."""
    marks = fence(shown)
    stub, _, _, fenced = _LANGUAGE_WORDS[language]
    comment = "#" if language == "python" else "//"
    note = _NOTE[context].format(name=qualname, stub=stub, comment=comment)
    return "\n".join(
        [
            task_md.rstrip(),
            "",
            _SHOWN[context],
            "",
            f"`{path}`:" + (f" {note}" if note else ""),
            "",
            f"{marks}{fenced}",
            shown.rstrip("\n"),
            marks,
            "",
            answer_sentence(qualname, context, header, language),
        ]
    )
