"""Readers for pip requirement files, tox.ini `deps` and noxfile.py `session.install(...)`.

Requirement files are parsed by pip-requirements-parser, which is pip's own requirement-file
parser (line continuations, comments, options, hashes, editables) lifted out of pip. Its nested
`-r` includes are not followed by it: we follow them, so that an include outside the repository
is refused and a cycle ends.
"""

from __future__ import annotations

import ast
import configparser
import re
import tempfile
from pathlib import Path

from pip_requirements_parser import (
    InstallationError,
    InstallRequirement,
    RequirementsFile,
    RequirementsFileParseError,
)

from replicate.envs.collect import Collected, classify_token, inside, read_text

_RUNTIME_STEMS = frozenset(
    {"requirements", "base", "main", "prod", "production", "install", "runtime", "core", "default"}
)
_IGNORED_WORDS = ("doc", "lint", "typing", "mypy", "release", "publish", "style", "format")
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
    if resolved in seen or not path.is_file():
        return []
    seen.add(resolved)
    try:
        parsed = RequirementsFile.from_file(str(path), include_nested=False)
    except (OSError, UnicodeError, RequirementsFileParseError, InstallationError):
        out.note(f"could not parse {path.relative_to(root).as_posix()}")
        return []
    return _requirements(root, path.parent, parsed, out, seen)


def requirement_lines(root: Path, base: Path, lines: list[str], out: Collected) -> list[str]:
    """Requirements named by requirement-file lines (requirements, `-r FILE`, `-e PATH`)."""
    if not lines:
        return []
    # the parser reads files only (its `from_string` raises NameError in 32.0.1): a scratch file
    with tempfile.TemporaryDirectory(prefix="replicate-reqs-") as scratch:
        path = Path(scratch) / "requirements.txt"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        try:
            parsed = RequirementsFile.from_file(str(path), include_nested=False)
        except (OSError, UnicodeError, RequirementsFileParseError, InstallationError):
            out.note(f"could not parse requirements {lines!r}")
            return []
    return _requirements(root, base, parsed, out, seen=set())


def _requirements(
    root: Path, base: Path, parsed: RequirementsFile, out: Collected, seen: set[Path]
) -> list[str]:
    """The requirements of a parsed file in line order; includes are read where they stand,
    constraints and index options are dropped."""
    found: list[tuple[int, list[str]]] = []
    for option in parsed.options:
        includes = option.options.get("requirements") or []
        reqs = [r for name in includes for r in read_requirements(root, base / name, out, seen)]
        found.append((option.line_number or 0, reqs))
    for item in parsed.requirements:
        found.append((item.line_number or 0, _token_requirements(_token_text(item), out)))
    for invalid in parsed.invalid_lines:
        out.note(f"dropped unparseable requirement {invalid.requirement_line.line!r}")
    return [req for _, reqs in sorted(found, key=lambda pair: pair[0]) for req in reqs]


def _token_requirements(text: str, out: Collected) -> list[str]:
    token = classify_token(text)
    if token.is_self:
        out.requested_extras.extend(token.self_extras)
        return []
    if token.note:
        out.note(token.note)
    return [token.requirement] if token.requirement else []


def _token_text(item: InstallRequirement) -> str:
    """The requirement as `classify_token` reads it: PEP 508 text, or the link with extras."""
    if item.link is None or (item.req is not None and item.req.url):
        text = str(item.req)
        return f"{text}; {item.marker}" if item.marker is not None else text
    extras = f"[{','.join(sorted(item.extras))}]" if item.extras else ""
    return item.link.url + extras


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
    lines: list[str] = []
    for raw in section.get("deps", "").splitlines():
        line = raw.strip()
        if _FACTOR.match(line):
            out.note(f"ignored factor-conditional tox dependency {line!r}")
            continue
        line = line.replace("{toxinidir}/", "").replace("{toxinidir}", ".")
        if "{" in line:
            out.note(f"ignored tox dependency with a substitution {line!r}")
            continue
        lines.append(line)
    reqs = requirement_lines(root, root, lines, out)
    out.test.extend(reqs)
    for extra in re.split(r"[\s,]+", section.get("extras", "")):
        if extra and "{" not in extra and ":" not in extra:
            out.requested_extras.append(extra)
    out.note(f"read {origin} [testenv] deps ({len(reqs)})")


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
    """`session.install` arguments as requirement-file lines: an option that takes a value is
    joined to it; other pip options (`--upgrade`) are not requirements."""
    lines: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-r", "--requirement", "-e", "--editable", "-c", "--constraint"):
            lines.append(f"{word} {words[index + 1]}" if index + 1 < len(words) else word)
            index += 2
            continue
        if not word.startswith("-"):
            lines.append(word)
        index += 1
    return requirement_lines(root, root, lines, out)
