"""The answer reader with a class target: a single completion (the built-in single agent's, a
trainer's rollout) holding the whole class among thinking, prose and other blocks is spliced
whole, as `builtin:openai-single`, `serve` and the reward functions read it."""

from __future__ import annotations

import pytest

from replicate.core import SpliceError
from replicate.languages.python_answer import CodeFrom, extract_code
from replicate.languages.python_splice import splice, stub_source
from tests.unit.languages.test_python_classes import CANDIDATE, SOURCE, _box, _run

USAGE = "```python\nbox = Box.of(1, 2)\nbox.add(3)\n```"
COMPLETION = f"""<think>
The box keeps at most three items; `add` refuses a fourth.
```python
class Box:
    pass
```
</think>
Here is the whole class, every method written.

{USAGE}

```python
{CANDIDATE}```

And a helper you will not need:

```python
def unused():
    return None
```
"""


def test_the_whole_class_is_read_from_a_completion_and_spliced() -> None:
    box = _box()
    code = extract_code(COMPLETION, box)
    assert code.found_in is CodeFrom.BLOCK and code.text == CANDIDATE  # not the thought's class
    spliced = splice(stub_source(SOURCE, box), COMPLETION, box)
    made = _run(spliced)["Box"].of(1, 2)
    assert made.add(5) is made and len(made) == 3 and made.first == 1


def test_a_class_written_only_in_the_thinking_is_not_the_answer() -> None:
    box = _box()
    thought_only = COMPLETION.split("</think>")[0] + "</think>\nSee above.\n\n" + USAGE
    with pytest.raises(SpliceError, match="no definition of Box"):
        splice(stub_source(SOURCE, box), thought_only, box)
