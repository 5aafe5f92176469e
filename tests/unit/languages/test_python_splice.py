from __future__ import annotations

import ast
import asyncio
import textwrap
from typing import Any

import pytest

from replicate.core.records import Target
from replicate.languages.python_extract import extract_targets, parse_tree
from replicate.languages.python_splice import (
    SpliceError,
    dedent_code,
    is_whole_file,
    splice,
    strip_fences,
    stub_source,
)


def _target(source: bytes, qualname: str) -> Target:
    found = extract_targets(source, parse_tree(source), "pkg/mod.py", "pkg.mod")
    return next(target for target in found if target.qualname == qualname)


def _stubbed(source: str, qualname: str) -> tuple[bytes, Target]:
    data = textwrap.dedent(source).encode("utf-8")
    target = _target(data, qualname)
    return stub_source(data, target), target


def _run(module_source: bytes) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__name__": "spliced"}
    exec(compile(module_source, "pkg/mod.py", "exec"), namespace)
    return namespace


MODULE = '''\
"""Module docstring."""
from __future__ import annotations

import os

LIMIT = 10


def clamp(x: int) -> int:
    """Clamp to LIMIT."""
    if x > LIMIT:
        return LIMIT
    return x


class Box:
    """A box."""

    def __init__(self, size: int) -> None:
        self.size = size

    def grow(self, by: int) -> int:
        """Grow the box."""
        self.size += by
        return self.size

    @classmethod
    def unit(cls) -> Box:
        return cls(1)

    @staticmethod
    def label(x: int) -> str:
        return f"box-{x}"

    async def fetch(self) -> int:
        return self.size


def tail() -> str:
    return os.sep
'''


# ----------------------------------------------------------------------------------- stubbing


def test_stub_replaces_exactly_the_body() -> None:
    data = textwrap.dedent(MODULE).encode()
    target = _target(data, "clamp")
    stubbed = stub_source(data, target)
    expected = data.replace(
        b"    if x > LIMIT:\n        return LIMIT\n    return x",
        b"    raise NotImplementedError",
    )
    assert stubbed == expected
    namespace = _run(stubbed)
    with pytest.raises(NotImplementedError):
        namespace["clamp"](3)
    assert namespace["clamp"].__doc__ == "Clamp to LIMIT."


def test_stub_of_inline_body_and_method() -> None:
    data = b"class A:\n    def f(self): return 1  # one\n"
    stubbed = stub_source(data, _target(data, "A.f"))
    assert stubbed == b"class A:\n    def f(self): raise NotImplementedError  # one\n"


def test_stub_rejects_a_span_outside_the_source() -> None:
    data = textwrap.dedent(MODULE).encode()
    with pytest.raises(ValueError, match="outside"):
        stub_source(data[:50], _target(data, "tail"))


# ------------------------------------------------------------------------------------- fences


def test_strip_fences_picks_the_first_python_block() -> None:
    text = "Here:\n```text\nnot code\n```\n```python\ndef f():\n    return 1\n```\n```py\nx\n```\n"
    assert strip_fences(text) == "def f():\n    return 1\n"


def test_strip_fences_falls_back_to_the_largest_block() -> None:
    text = "```\nsmall\n```\nprose\n```\ndef g():\n    return 2\n```"
    assert strip_fences(text) == "def g():\n    return 2\n"


def test_strip_fences_variants() -> None:
    assert strip_fences("def f():\n    return 1\n") == "def f():\n    return 1\n"
    assert strip_fences("```Python3\nx = 1\n") == "x = 1\n"  # unclosed: runs to the end
    assert strip_fences("~~~py\ny = 2\n~~~\n") == "y = 2\n"
    assert strip_fences("```python\r\nz = 3\r\n```\r\n") == "z = 3\r\n"


# -------------------------------------------------------------------------------------- names


NAMES_SOURCE = textwrap.dedent(
    """\
    from __future__ import annotations
    import os.path
    import numpy as np
    from typing import Any as A, List
    from star import *
    x = y = 1
    (a, [b, *c]) = 1, [2, 3]
    n: int = 1
    m: int
    count += 1
    obj.attr = 3
    if True:
        def f(): pass
    else:
        class K: pass
    try:
        import fast
    except ImportError:
        fast = None
    with ctx() as handle:
        z = 2
    def g():
        inner = 1
    """
)
BOUND = ("os", "np", "A", "List", "x", "y", "a", "b", "c", "n", "count", "f", "K", "fast", "z")


def test_a_whole_file_binds_every_top_level_name_of_the_file() -> None:
    # defs, classes, assignments and imports, through if/try/with; not `m: int`, `import *`,
    # `from __future__`, attributes, `with ... as` targets or names inside functions
    file_tree = ast.parse(NAMES_SOURCE)
    target = _target(NAMES_SOURCE.encode(), "g")

    def candidate(names: tuple[str, ...]) -> ast.Module:
        return ast.parse("".join(f"{name} = None\n" for name in names) + "def g(): pass\n")

    assert is_whole_file(file_tree, candidate(BOUND), target)
    for missing in BOUND:
        assert not is_whole_file(file_tree, candidate(tuple(set(BOUND) - {missing})), target)


# ---------------------------------------------------------------------------------- splicing


def test_function_completion_with_imports() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    candidate = (
        "import math\nfrom os import path\n\ndef clamp(x: int) -> int:\n    return min(x, LIMIT)\n"
    )
    result = splice(stubbed, candidate, target).decode()
    lines = result.split("\n")
    assert lines[:5] == [
        '"""Module docstring."""',
        "from __future__ import annotations",
        "import math",
        "from os import path",
        "",
    ]
    assert "    raise NotImplementedError" not in result.split("class Box")[0]
    namespace = _run(result.encode())
    assert namespace["clamp"](50) == 10
    assert namespace["clamp"](3) == 3
    assert namespace["math"].sqrt(4) == 2
    assert result.count("import os\n") == 1


def test_existing_import_is_not_duplicated() -> None:
    stubbed, target = _stubbed(MODULE, "tail")
    result = splice(stubbed, "import os\n\ndef tail():\n    return os.sep * 2\n", target)
    assert result.decode().count("import os") == 1
    assert _run(result)["tail"]() == "//"


def test_method_at_column_zero_is_indented_into_the_class() -> None:
    stubbed, target = _stubbed(MODULE, "Box.grow")
    candidate = (
        "def grow(self, by: int) -> int:\n"
        "    self.size = self.size + 2 * by\n"
        "    return self.size\n"
    )
    result = splice(stubbed, candidate, target).decode()
    assert "    def grow(self, by: int) -> int:\n        self.size = self.size + 2 * by\n" in result
    box = _run(result.encode())["Box"](1)
    assert box.grow(3) == 7


def test_candidate_with_the_whole_class() -> None:
    stubbed, target = _stubbed(MODULE, "Box.grow")
    candidate = textwrap.dedent(
        """\
        class Box:
            def __init__(self, size):
                self.size = -1

            def grow(self, by):
                return by * 100
        """
    )
    result = splice(stubbed, candidate, target)
    namespace = _run(result)
    box = namespace["Box"](5)
    assert box.size == 5  # only the target method was taken from the candidate
    assert box.grow(2) == 200
    assert namespace["Box"].unit().size == 1


def test_indented_candidate_copied_from_a_class() -> None:
    stubbed, target = _stubbed(MODULE, "Box.grow")
    candidate = '    def grow(self, by):\n        """New doc."""\n        return by + 1\n'
    result = splice(stubbed, candidate, target).decode()
    assert '    def grow(self, by):\n        """New doc."""\n        return by + 1\n' in result
    assert _run(result.encode())["Box"](0).grow(1) == 2


def test_async_method() -> None:
    stubbed, target = _stubbed(MODULE, "Box.fetch")
    assert target.is_async
    result = splice(stubbed, "async def fetch(self):\n    return self.size + 1\n", target)
    box = _run(result)["Box"](4)
    assert asyncio.run(box.fetch()) == 5


def test_candidate_decorators_are_kept() -> None:
    stubbed, target = _stubbed(MODULE, "Box.label")
    result = splice(stubbed, "@staticmethod\ndef label(x):\n    return 'L' + str(x)\n", target)
    namespace = _run(result)
    assert namespace["Box"](1).label(2) == "L2"
    assert result.decode().count("@staticmethod") == 1


def test_undecorated_candidate_keeps_the_stubbed_decorators() -> None:
    stubbed, target = _stubbed(MODULE, "Box.unit")
    result = splice(stubbed, "def unit(cls):\n    return cls(7)\n", target)
    assert _run(result)["Box"].unit().size == 7


def test_future_import_the_file_lacks_goes_after_the_docstring() -> None:
    source = '"""Doc."""\nimport os\n\n\ndef f(x):\n    return x\n'
    stubbed, target = _stubbed(source, "f")
    candidate = (
        "from __future__ import annotations\nimport sys\n\n"
        "def f(x: Later) -> int:\n    return x * 2\n"
    )
    result = splice(stubbed, candidate, target).decode()
    assert result.startswith(
        '"""Doc."""\nfrom __future__ import annotations\nimport sys\nimport os\n'
    )
    assert _run(result.encode())["f"](4) == 8


def test_future_import_already_present_is_not_repeated() -> None:
    stubbed, target = _stubbed(MODULE, "tail")
    candidate = "from __future__ import annotations\n\ndef tail():\n    return 'x'\n"
    result = splice(stubbed, candidate, target).decode()
    assert result.count("from __future__ import annotations") == 1


def test_imports_go_after_leading_comments_when_there_is_no_docstring() -> None:
    source = "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\ndef f():\n    return 1\n\nX = 1\n"
    stubbed, target = _stubbed(source, "f")
    result = splice(stubbed, "import json\ndef f():\n    return json.dumps(X)\n", target).decode()
    assert result.startswith("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\nimport json\ndef f")
    assert _run(result.encode())["f"]() == "1"


def test_crlf_candidate_into_lf_file() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    result = splice(stubbed, "def clamp(x):\r\n    return -x\r\n", target)
    assert b"\r" not in result
    assert _run(result)["clamp"](2) == -2


def test_crlf_file_stays_crlf() -> None:
    source = "import os\r\n\r\n\r\ndef f(x):\r\n    return x\r\n"
    stubbed, target = _stubbed(source, "f")
    result = splice(stubbed, "import sys\ndef f(x):\n    return x + 1\n", target)
    assert result.count(b"\n") == result.count(b"\r\n")
    assert result.startswith(b"import sys\r\nimport os\r\n")
    assert _run(result)["f"](1) == 2


def test_tab_indented_file() -> None:
    source = (
        "import os\n\nclass T:\n\tdef m(self, x):\n\t\treturn x\n\n\tdef n(self):\n\t\treturn 0\n"
    )
    stubbed, target = _stubbed(source, "T.m")
    assert target.body_indent == "\t\t"
    result = splice(
        stubbed, "def m(self, x):\n    if x:\n        return x * 3\n    return 0\n", target
    )
    assert b"\tdef m(self, x):\n\t    if x:\n" in result
    namespace = _run(result)
    assert namespace["T"]().m(2) == 6
    assert namespace["T"]().n() == 0


def test_fenced_candidate() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    candidate = "Sure! Here it is:\n\n```python\ndef clamp(x):\n    return 0\n```\nHope it helps."
    assert _run(splice(stubbed, candidate, target))["clamp"](5) == 0


def test_python_text_with_fences_inside_a_docstring_is_not_stripped() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    candidate = 'def clamp(x):\n    """Use:\n\n```python\nclamp(1)\n```\n    """\n    return 9\n'
    result = splice(stubbed, candidate, target)
    assert _run(result)["clamp"](5) == 9
    assert b"```python\nclamp(1)\n```\n" in result


def test_multiline_string_content_is_not_reindented() -> None:
    stubbed, target = _stubbed(MODULE, "Box.label")
    candidate = '@staticmethod\ndef label(x):\n    return """a\nb\n  c"""\n'
    assert _run(splice(stubbed, candidate, target))["Box"].label(0) == "a\nb\n  c"


def test_whole_file_candidate_is_the_file() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    whole = textwrap.dedent(MODULE).replace("return x\n", "return x + 1000\n", 1)
    whole = whole.replace('"""Module docstring."""', '"""Rewritten."""')
    result = splice(stubbed, whole, target)
    assert result == whole.encode()
    assert _run(result)["clamp"](1) == 1001


def test_bare_def_into_a_file_with_no_other_name_is_a_completion() -> None:
    source = (
        '"""Only f."""\nfrom __future__ import annotations\n\n\n'
        "def f(x: Missing) -> int:\n    return x\n"
    )
    stubbed, target = _stubbed(source, "f")
    result = splice(stubbed, "import math\ndef f(x: Missing) -> int:\n    return x + 1\n", target)
    assert result.startswith(b'"""Only f."""\nfrom __future__ import annotations\nimport math\n')
    assert _run(result)["f"](1) == 2  # the annotation is never evaluated


def test_def_with_helpers_into_a_file_with_no_other_name_is_a_whole_file() -> None:
    source = "def f(x):\n    return x\n"
    stubbed, target = _stubbed(source, "f")
    candidate = (
        "STEP = 3\n\ndef _helper(x):\n    return x + STEP\n\ndef f(x):\n    return _helper(x)\n"
    )
    result = splice(stubbed, candidate, target)
    assert result == candidate.encode()
    assert _run(result)["f"](1) == 4


def test_target_inside_a_top_level_if_block() -> None:
    source = "import sys\n\nif sys.version_info >= (3, 0):\n    def f(x):\n        return x\n"
    stubbed, target = _stubbed(source, "f")
    result = splice(stubbed, "def f(x):\n    return x * 5\n", target)
    assert b"    def f(x):\n        return x * 5\n" in result
    assert _run(result)["f"](2) == 10


def test_nested_class_method_inside_its_class_chain() -> None:
    source = "import os\n\nclass A:\n    class B:\n        def m(self):\n            return 1\n"
    stubbed, target = _stubbed(source, "A.B.m")
    candidate = "class B:\n    def m(self):\n        return 2\n"
    result = splice(stubbed, candidate, target)
    assert _run(result)["A"].B().m() == 2


def test_name_only_in_a_comment_is_no_definition() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    with pytest.raises(SpliceError) as caught:
        splice(stubbed, "# def clamp(x): return x\nimport os\nvalue = 1\n", target)
    assert caught.value.reason == "no definition of clamp"
    assert isinstance(caught.value, ValueError)


def test_method_name_at_wrong_level_for_a_function_target() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    with pytest.raises(SpliceError, match="no definition of clamp"):
        splice(stubbed, "class Other:\n    def clamp(self, x):\n        return x\n", target)


def test_candidate_that_does_not_parse() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    with pytest.raises(SpliceError) as caught:
        splice(stubbed, "def clamp(x):\n    return (x\n\n", target)
    assert caught.value.reason.startswith("candidate does not parse: line ")


def test_a_nul_byte_is_said_without_a_line() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    with pytest.raises(SpliceError) as caught:
        splice(stubbed, "def clamp(x):\n    return x\x00\n", target)
    assert caught.value.reason == (
        "candidate does not parse: source code string cannot contain null bytes"
    )


def test_candidate_that_parses_but_does_not_compile() -> None:
    stubbed, target = _stubbed(MODULE, "clamp")
    with pytest.raises(SpliceError, match="does not compile"):
        splice(stubbed, "def clamp(x):\n    nonlocal y\n    return x\n", target)


def test_dedent_code_keeps_string_contents() -> None:
    text = '    def f():\n        s = """\n  keep\n        """\n# note\n        return s\n'
    assert dedent_code(text) == 'def f():\n    s = """\n  keep\n        """\n# note\n    return s\n'
