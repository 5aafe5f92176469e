from __future__ import annotations

import pytest

from replicate.errors import ReplicateError
from replicate.languages import Language, available_languages, get_language
from replicate.languages.python import PythonLanguage


def test_the_languages() -> None:
    assert available_languages() == ("javascript", "python", "typescript")


def test_get_language_builds_the_python_adapter() -> None:
    adapter = get_language("python")
    assert isinstance(adapter, PythonLanguage)
    assert isinstance(adapter, Language)
    assert adapter.name == "python"


def test_unknown_language_names_the_choices() -> None:
    with pytest.raises(ReplicateError) as caught:
        get_language("cobol")
    assert (
        str(caught.value)
        == "unknown language 'cobol'; choose one of: javascript, python, typescript"
    )
