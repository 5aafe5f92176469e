"""Readers for pip requirement files, tox.ini `deps` and noxfile.py `session.install(...)`."""

from __future__ import annotations

import ast
import configparser
import re
import shlex
from pathlib import Path

from replicate.envs.collect import Collected, classify_token, inside, read_text

_RUNTIME_STEMS = frozenset(
    {"requirements", "base", "main", "prod", "production", "install", "runtime", "core", "default"}
)
_IGNORED_WORDS = ("doc", "lint", "typing", "mypy", "release", "publish", "style", "format")
_DROP_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host",
     "--no-binary", "--only-binary", "--prefer-binary", "--pre", "--no-index", "-c",
     "--constraint", "--use-feature", "--require-hashes"}
)  # fmt: skip
_COMMENT = re.compile(r"(^|\s)#.*$")
_FACTOR = re.compile(r"^!?[A-Za-z0-9_.,!-]+:\s+(?=\S)")


def requirement_files(root: Path) -> list[Path]:
    """Requirement files the repository ships, in a stable order."""
    patterns = [
        "requirements*.txt",
        "*-requirements.txt",
        "*_requirements.txt",
        "requirements/*.txt",
        "tests/requirements*.txt",
        "test/requirements*.txt",
    ]
    found: dict[Path, None] = {}
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            if path.is_file():
                found[path] = None
    return list(found)


def file_bucket(root: Path, path: Path) -> str:
    """`runtime`, `test` or `ignore` for a requirement file, judged by its name."""
    rel = path.relative_to(root).as_posix().lower()
    stem = path.name.lower().removesuffix(".txt")
    if any(word in stem for word in _IGNORED_WORDS):
        return "ignore"
    if stem in _RUNTIME_STEMS and not rel.startswith(("tests/", "test/")):
        return "runtime"
    return "test"


def read_requirement_files(root: Path, out: Collected) -> None:
    """Add every top-level requirement file to the runtime or test list by its name."""
    for path in requirement_files(root):
        rel = path.relative_to(root).as_posix()
        bucket = file_bucket(root, path)
        if bucket == "ignore":
            out.note(f"ignored {rel} (not needed to run tests)")
            continue
        reqs = read_requirements(root, path, out, seen=set())
        (out.runtime if bucket == "runtime" else out.test).extend(reqs)
        out.note(f"read {rel} as {bucket} requirements ({len(reqs)})")


def read_requirements(root: Path, path: Path, out: Collected, seen: set[Path]) -> list[str]:
    """Requirements of one pip requirement file, following `-r` includes inside the repo."""
    resolved = path.resolve()
    if not inside(root, path):
        out.note(f"ignored requirement file outside the repository: {path}")
        return []
    if resolved in seen:
        return []
    seen.add(resolved)
    text = read_text(path)
    if text is None:
        return []
    reqs: list[str] = []
    for line in _logical_lines(text):
        reqs.extend(requirement_line(root, path.parent, line, out, seen))
    return reqs


def _logical_lines(text: str) -> list[str]:
    joined = re.sub(r"\\\r?\n", " ", text)
    lines = [_COMMENT.sub("", raw).strip() for raw in joined.splitlines()]
    return [line for line in lines if line]


def requirement_line(
    root: Path, base: Path, line: str, out: Collected, seen: set[Path]
) -> list[str]:
    """Requirements named by one requirement-file line (a requirement, `-r FILE`, `-e PATH`)."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    if not words:
        return []
    head = words[0]
    include = _option_value(words, ("-r", "--requirement"))
    if include is not None:
        return read_requirements(root, base / include, out, seen)
    if head.split("=", 1)[0] in _DROP_OPTIONS or head.startswith(("-c", "--constraint")):
        return []
    editable = _option_value(words, ("-e", "--editable"))
    text = editable if editable is not None else line.split(" --hash", 1)[0].split(" -", 1)[0]
    return _token_requirements(text, out)


def _option_value(words: list[str], names: tuple[str, ...]) -> str | None:
    head = words[0]
    for name in names:
        if head == name:
            return words[1] if len(words) > 1 else ""
        if name.startswith("--") and head.startswith(name + "="):
            return head[len(name) + 1 :]
        if not name.startswith("--") and head.startswith(name) and len(head) > len(name):
            return head[len(name) :]
    return None


def _token_requirements(text: str, out: Collected) -> list[str]:
    token = classify_token(text)
    if token.is_self:
        out.requested_extras.extend(token.self_extras)
        return []
    if token.note:
        out.note(token.note)
    return [token.requirement] if token.requirement else []


def read_tox(root: Path, text: str, origin: str, out: Collected) -> None:
    """`[testenv] deps` and `extras` of a tox configuration (ini text)."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        out.note(f"could not parse {origin}")
        return
    if not parser.has_section("testenv"):
        return
    section = parser["testenv"]
    count = 0
    for raw in section.get("deps", "").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _FACTOR.match(line):
            out.note(f"ignored factor-conditional tox dependency {line!r}")
            continue
        line = line.replace("{toxinidir}/", "").replace("{toxinidir}", ".")
        if "{" in line:
            out.note(f"ignored tox dependency with a substitution {line!r}")
            continue
        reqs = requirement_line(root, root, line, out, seen=set())
        out.test.extend(reqs)
        count += len(reqs)
    for extra in re.split(r"[\s,]+", section.get("extras", "")):
        if extra and "{" not in extra and ":" not in extra:
            out.requested_extras.append(extra)
    out.note(f"read {origin} [testenv] deps ({count})")


def read_noxfile(root: Path, out: Collected) -> None:
    """String literals passed to `session.install(...)` in noxfile.py."""
    text = read_text(root / "noxfile.py")
    if text is None:
        return
    try:
        tree = ast.parse(text)
    except SyntaxError:
        out.note("could not parse noxfile.py")
        return
    count = 0
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        if node.func.attr != "install":
            continue
        args = [a.value for a in node.args if isinstance(a, ast.Constant)]
        words = [a for a in args if isinstance(a, str)]
        reqs = _nox_words(root, words, out)
        out.test.extend(reqs)
        count += len(reqs)
    out.note(f"read noxfile.py session.install ({count})")


def _nox_words(root: Path, words: list[str], out: Collected) -> list[str]:
    reqs: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-r", "--requirement", "-e", "--editable", "-c", "--constraint"):
            joined = f"{word} {words[index + 1]}" if index + 1 < len(words) else word
            reqs.extend(requirement_line(root, root, joined, out, seen=set()))
            index += 2
            continue
        if not word.startswith("-"):
            reqs.extend(requirement_line(root, root, word, out, seen=set()))
        index += 1
    return reqs
