import inspect

import samplelib


def test_all_names_are_exported():
    exported = {name for name in dir(samplelib) if not name.startswith("_")}
    modules = {"accounts", "containers", "functional", "inplace", "iterables", "numeric", "shapes",
               "text"}
    assert set(samplelib.__all__) == exported - modules
    assert samplelib.__all__ == sorted(samplelib.__all__)


def test_every_public_callable_has_a_docstring():
    for name in samplelib.__all__:
        obj = getattr(samplelib, name)
        assert inspect.getdoc(obj), name
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if not attr.startswith("_"):
                    assert inspect.getdoc(member), f"{name}.{attr}"


def test_top_level_reexports_work():
    assert samplelib.slugify("Top Level") == "top-level"
    assert samplelib.prime_factors(84) == [2, 2, 3, 7]
    assert list(samplelib.chunked("abc", 2)) == [["a", "b"], ["c"]]
    assert samplelib.Interval(0, 1).contains(0.5) is True
