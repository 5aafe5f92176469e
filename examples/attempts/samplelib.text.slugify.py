# attempt: correct — walks the characters instead of splitting with a regex
def slugify(text, sep="-"):
    """Turn ``text`` into a lowercase ASCII slug, words joined by ``sep``."""
    if not isinstance(text, str):
        raise TypeError("slugify() needs a string")
    words = []
    current = []
    for ch in unicodedata.normalize("NFKD", text):
        if not ch.isascii():
            continue
        ch = ch.lower()
        if ch.isalnum():
            current.append(ch)
        elif current:
            words.append("".join(current))
            current = []
    if current:
        words.append("".join(current))
    return sep.join(words)
