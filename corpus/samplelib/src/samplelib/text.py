"""String helpers: slugs, wrapping, run-length coding, ciphers, casing and edit distance."""

import re
import unicodedata

_MINOR_WORDS = ("a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the", "to")


def slugify(text, sep="-"):
    """Turn ``text`` into a lowercase ASCII slug, words joined by ``sep``.

    Accents are stripped, runs of anything that is not a letter or digit become one separator,
    and separators at either end are dropped.

    >>> slugify("Hello, World!")
    'hello-world'
    >>> slugify("  Crème brûlée  recipe ", sep="_")
    'creme_brulee_recipe'
    """
    if not isinstance(text, str):
        raise TypeError(f"slugify() expects str, got {type(text).__name__}")
    normalized = unicodedata.normalize("NFKD", text)
    ascii_text = normalized.encode("ascii", "ignore").decode("ascii").lower()
    words = re.split(r"[^a-z0-9]+", ascii_text)
    return sep.join(word for word in words if word)


def wrap_words(text, width):
    """Greedily wrap ``text`` into lines of at most ``width`` characters.

    Words longer than ``width`` are put on a line of their own, unbroken.

    >>> wrap_words("the quick brown fox jumps", 10)
    ['the quick', 'brown fox', 'jumps']
    """
    if width < 1:
        raise ValueError("width must be at least 1")
    lines = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current = current + " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def rle_encode(text):
    """Run-length encode ``text`` as ``<count><char>`` pairs.

    Digits cannot be encoded unambiguously and are rejected.

    >>> rle_encode("aaabccdddd")
    '3a1b2c4d'
    >>> rle_encode("")
    ''
    """
    if any(ch.isdigit() for ch in text):
        raise ValueError("cannot run-length encode text containing digits")
    pieces = []
    index = 0
    while index < len(text):
        run_end = index
        while run_end < len(text) and text[run_end] == text[index]:
            run_end += 1
        pieces.append(f"{run_end - index}{text[index]}")
        index = run_end
    return "".join(pieces)


def rle_decode(encoded):
    """Decode the output of :func:`rle_encode`.

    >>> rle_decode("3a1b2c")
    'aaabcc'
    """
    result = []
    count_digits = ""
    for ch in encoded:
        if ch.isdigit():
            count_digits += ch
            continue
        if not count_digits:
            raise ValueError(f"missing count before {ch!r}")
        result.append(ch * int(count_digits))
        count_digits = ""
    if count_digits:
        raise ValueError("encoded text ends with a dangling count")
    return "".join(result)


def caesar_shift(text, shift):
    """Shift ASCII letters of ``text`` by ``shift`` places, keeping case; other characters stay.

    >>> caesar_shift("Hello, World", 3)
    'Khoor, Zruog'
    >>> caesar_shift("abc", -1)
    'zab'
    """
    if not isinstance(shift, int) or isinstance(shift, bool):
        raise TypeError("shift must be an int")
    out = []
    for ch in text:
        if "a" <= ch <= "z":
            out.append(chr((ord(ch) - ord("a") + shift) % 26 + ord("a")))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - ord("A") + shift) % 26 + ord("A")))
        else:
            out.append(ch)
    return "".join(out)


def title_case(text, minor_words=None):
    """Capitalise each word of ``text`` except minor words, which stay lowercase.

    The first and the last word are always capitalised.  ``minor_words`` replaces the default
    list of English articles, conjunctions and short prepositions.

    >>> title_case("the lord of the rings")
    'The Lord of the Rings'
    """
    minor = set(_MINOR_WORDS if minor_words is None else (w.lower() for w in minor_words))
    words = text.split()
    titled = []
    for position, word in enumerate(words):
        lowered = word.lower()
        if 0 < position < len(words) - 1 and lowered in minor:
            titled.append(lowered)
        else:
            titled.append(lowered[:1].upper() + lowered[1:])
    return " ".join(titled)


def levenshtein(a, b):
    """Edit distance between ``a`` and ``b`` (insertions, deletions, substitutions cost 1).

    >>> levenshtein("kitten", "sitting")
    3
    """
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            cost = 0 if ca == cb else 1
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost))
        previous = current
    return previous[-1]


def camel_to_snake(name):
    """Convert ``CamelCase`` or ``mixedCase`` to ``snake_case``; acronyms stay together.

    >>> camel_to_snake("parseHTTPResponse")
    'parse_http_response'
    """
    if not name:
        return ""
    step = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    step = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", step)
    return step.replace("-", "_").lower()


def snake_to_camel(name, upper_first=False):
    """Convert ``snake_case`` to ``camelCase`` (or ``CamelCase`` with ``upper_first``).

    Leading underscores are kept; empty segments from doubled underscores are skipped.

    >>> snake_to_camel("max_retry_count")
    'maxRetryCount'
    >>> snake_to_camel("_private_name", upper_first=True)
    '_PrivateName'
    """
    stripped = name.lstrip("_")
    prefix = name[: len(name) - len(stripped)]
    parts = [part for part in stripped.split("_") if part]
    if not parts:
        return name
    head = parts[0].capitalize() if upper_first else parts[0].lower()
    return prefix + head + "".join(part.capitalize() for part in parts[1:])


def truncate(text, limit, suffix="..."):
    """Shorten ``text`` to at most ``limit`` characters, ending with ``suffix`` when cut.

    Cuts at the last space that fits when there is one, so words are not split.

    >>> truncate("a quick brown fox", 12)
    'a quick...'
    """
    if limit < len(suffix):
        raise ValueError("limit is shorter than the suffix")
    if len(text) <= limit:
        return text
    room = limit - len(suffix)
    cut = text[:room]
    if " " in cut and text[room : room + 1] != " ":
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip() + suffix


def common_prefix(strings):
    """Longest common prefix of all ``strings`` ('' for an empty collection).

    >>> common_prefix(["interstellar", "internet", "interval"])
    'inter'
    """
    items = list(strings)
    if not items:
        return ""
    shortest = min(items, key=len)
    for index, ch in enumerate(shortest):
        if any(other[index] != ch for other in items):
            return shortest[:index]
    return shortest
