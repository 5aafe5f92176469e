import unittest

import pytest

from samplelib import text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Hello, World!", "hello-world"),
        ("  leading and trailing  ", "leading-and-trailing"),
        ("Crème Brûlée", "creme-brulee"),
        ("already-a-slug", "already-a-slug"),
        ("Multiple   spaces\tand\nnewlines", "multiple-spaces-and-newlines"),
        ("C++ & Python 3.11", "c-python-3-11"),
        ("", ""),
        ("!!!", ""),
        ("ÆON Flux", "on-flux"),
        ("snake_case_name", "snake-case-name"),
    ],
)
def test_slugify(raw, expected):
    assert text.slugify(raw) == expected


def test_slugify_custom_separator():
    assert text.slugify("Hello big World", sep="_") == "hello_big_world"
    assert text.slugify("a b c", sep="") == "abc"
    assert text.slugify("Über straße", sep=".") == "uber.strae"


@pytest.mark.parametrize("bad", [None, 42, b"bytes", ["a"]])
def test_slugify_rejects_non_strings(bad):
    with pytest.raises(TypeError):
        text.slugify(bad)


@pytest.mark.parametrize(
    ("raw", "width", "expected"),
    [
        ("the quick brown fox jumps over the lazy dog", 10,
         ["the quick", "brown fox", "jumps over", "the lazy", "dog"]),
        ("the quick brown fox", 100, ["the quick brown fox"]),
        ("", 5, []),
        ("   ", 5, []),
        ("supercalifragilistic is long", 8, ["supercalifragilistic", "is long"]),
        ("a b c d e", 1, ["a", "b", "c", "d", "e"]),
        ("a b c d e", 3, ["a b", "c d", "e"]),
        ("one\ntwo\tthree", 7, ["one two", "three"]),
        ("exactly ten", 11, ["exactly ten"]),
        ("exactly ten", 10, ["exactly", "ten"]),
    ],
)
def test_wrap_words(raw, width, expected):
    assert text.wrap_words(raw, width) == expected


@pytest.mark.parametrize("width", [0, -1, -20])
def test_wrap_words_rejects_small_width(width):
    with pytest.raises(ValueError):
        text.wrap_words("some words", width)


@pytest.mark.parametrize(
    ("plain", "encoded"),
    [
        ("aaabccdddd", "3a1b2c4d"),
        ("", ""),
        ("a", "1a"),
        ("abc", "1a1b1c"),
        ("zzzzzzzzzzzz", "12z"),
        ("  --", "2 2-"),
        ("AaA", "1A1a1A"),
        ("xxxyyx", "3x2y1x"),
    ],
)
def test_rle_roundtrip(plain, encoded):
    assert text.rle_encode(plain) == encoded
    assert text.rle_decode(encoded) == plain


@pytest.mark.parametrize("bad", ["abc1", "2024", "x9y"])
def test_rle_encode_rejects_digits(bad):
    with pytest.raises(ValueError):
        text.rle_encode(bad)


@pytest.mark.parametrize("bad", ["a", "3", "3a2", "ab", "10"])
def test_rle_decode_rejects_malformed(bad):
    with pytest.raises(ValueError):
        text.rle_decode(bad)


def test_rle_decode_multi_digit_counts():
    assert text.rle_decode("10x") == "x" * 10
    assert text.rle_decode("0a2b") == "bb"


@pytest.mark.parametrize(
    ("raw", "shift", "expected"),
    [
        ("Hello, World", 3, "Khoor, Zruog"),
        ("abc", -1, "zab"),
        ("xyz", 3, "abc"),
        ("ABC xyz", 26, "ABC xyz"),
        ("ABC xyz", 52 + 1, "BCD yza"),
        ("Zebra-123", 1, "Afcsb-123"),
        ("", 10, ""),
        ("Ünïcode", 2, "Üpïeqfg"),
        ("attack at dawn", -29, "xqqxzh xq axtk"),
    ],
)
def test_caesar_shift(raw, shift, expected):
    assert text.caesar_shift(raw, shift) == expected


@pytest.mark.parametrize("shift", [1.5, "3", True, None])
def test_caesar_shift_rejects_non_int_shift(shift):
    with pytest.raises(TypeError):
        text.caesar_shift("abc", shift)


class TestTitleCase(unittest.TestCase):
    def test_default_minor_words(self):
        self.assertEqual(text.title_case("the lord of the rings"), "The Lord of the Rings")
        self.assertEqual(text.title_case("a tale of two cities"), "A Tale of Two Cities")
        self.assertEqual(text.title_case("war AND peace"), "War and Peace")

    def test_last_word_is_capitalised(self):
        self.assertEqual(text.title_case("what are you looking at"), "What Are You Looking At")
        self.assertEqual(text.title_case("of"), "Of")

    def test_empty_and_spacing(self):
        self.assertEqual(text.title_case(""), "")
        self.assertEqual(text.title_case("  many   spaces here "), "Many Spaces Here")

    def test_custom_minor_words(self):
        self.assertEqual(
            text.title_case("le petit prince de la mer", minor_words=["le", "de", "la"]),
            "Le Petit Prince de la Mer",
        )
        self.assertEqual(text.title_case("the cat in the hat", minor_words=()), "The Cat In The Hat")
        self.assertEqual(text.title_case("o'neil of mcDONALD", minor_words=["OF"]), "O'neil of Mcdonald")


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("kitten", "sitting", 3),
        ("", "", 0),
        ("", "abc", 3),
        ("abc", "", 3),
        ("flaw", "lawn", 2),
        ("same", "same", 0),
        ("intention", "execution", 5),
        ("a", "b", 1),
        ("abcdef", "azced", 3),
        ("gumbo", "gambol", 2),
    ],
)
def test_levenshtein(a, b, distance):
    assert text.levenshtein(a, b) == distance
    assert text.levenshtein(b, a) == distance


def test_levenshtein_on_lists():
    assert text.levenshtein([1, 2, 3], [1, 3]) == 1
    assert text.levenshtein(("x", "y"), ("y", "x")) == 2


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("parseHTTPResponse", "parse_http_response"),
        ("CamelCase", "camel_case"),
        ("already_snake", "already_snake"),
        ("getX", "get_x"),
        ("HTMLParser", "html_parser"),
        ("version2Update", "version2_update"),
        ("", ""),
        ("kebab-case-Name", "kebab_case_name"),
        ("A", "a"),
    ],
)
def test_camel_to_snake(name, expected):
    assert text.camel_to_snake(name) == expected


@pytest.mark.parametrize(
    ("name", "upper_first", "expected"),
    [
        ("max_retry_count", False, "maxRetryCount"),
        ("max_retry_count", True, "MaxRetryCount"),
        ("_private_name", True, "_PrivateName"),
        ("__dunder__value", False, "__dunderValue"),
        ("single", False, "single"),
        ("single", True, "Single"),
        ("HTTP_status", False, "httpStatus"),
        ("___", False, "___"),
        ("", True, ""),
        ("a__b", False, "aB"),
    ],
)
def test_snake_to_camel(name, upper_first, expected):
    assert text.snake_to_camel(name, upper_first=upper_first) == expected


@pytest.mark.parametrize(
    ("raw", "limit", "suffix", "expected"),
    [
        ("a quick brown fox", 12, "...", "a quick..."),
        ("short", 10, "...", "short"),
        ("exactly", 7, "...", "exactly"),
        ("abcdefghij", 6, "...", "abc..."),
        ("hello world", 8, "~", "hello~"),
        ("hello world", 6, "", "hello"),
        ("the end", 3, "...", "..."),
        ("word   spaced   out", 12, "..", "word.."),
    ],
)
def test_truncate(raw, limit, suffix, expected):
    assert text.truncate(raw, limit, suffix) == expected


def test_truncate_rejects_limit_below_suffix():
    with pytest.raises(ValueError):
        text.truncate("anything", 2)
    with pytest.raises(ValueError):
        text.truncate("anything", 0, suffix=" [more]")


@pytest.mark.parametrize(
    ("strings", "expected"),
    [
        (["interstellar", "internet", "interval"], "inter"),
        (["dog", "racecar", "car"], ""),
        ([], ""),
        (["alone"], "alone"),
        (["", "abc"], ""),
        (["prefix", "pre", "prefixes"], "pre"),
        (("same", "same"), "same"),
        (["Case", "case"], ""),
    ],
)
def test_common_prefix(strings, expected):
    assert text.common_prefix(strings) == expected


def test_common_prefix_accepts_generators():
    assert text.common_prefix(word for word in ["flower", "flow", "flight"]) == "fl"
