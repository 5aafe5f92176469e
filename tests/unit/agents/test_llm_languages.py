"""The built-in tool agent's system prompt and tools in the task's language's terms: a Python
task's exactly as before, a JavaScript/TypeScript task's naming Node and none of Python's."""

from __future__ import annotations

import json

from replicate.agents.llm_agent import tool_system
from replicate.agents.llm_tools import TOOLS, node_tools

FILE_TOOLS = ["list_files", "read_file", "write_file", "edit_file"]


def names(tools: tuple[dict[str, object], ...]) -> list[str]:
    return [t["function"]["name"] for t in tools]  # type: ignore[index]


def test_a_python_tasks_prompt_and_tools_are_unchanged() -> None:
    assert tool_system("Python") == (
        "You are a software engineer working in a repository checked out in your workspace. "
        "TASK.md at its root says which function to implement and how the work is graded. Use "
        "the tools to read the code, write the implementation into the target file, and run "
        "Python or the tests to check it (there is no network). Paths are relative to the "
        "workspace. When the implementation is done, answer with a short summary and no tool "
        "call."
    )
    assert names(TOOLS) == [*FILE_TOOLS, "run_python", "run_tests"]
    assert "pytest" in json.dumps(TOOLS)


def test_a_script_tasks_prompt_and_tools_speak_its_language() -> None:
    for name in ("JavaScript", "TypeScript"):
        system = tool_system(name)
        assert f"run {name} with Node or the repository's {name} tests" in system
        assert "Python" not in system
        tools = node_tools(name)
        assert names(tools) == [*FILE_TOOLS, "run_node", "run_tests"]
        said = json.dumps(tools)
        assert "pytest" not in said and "Python" not in said and f"{name} test files" in said
        assert ("transpile-only loader" in said) == (name == "TypeScript")
