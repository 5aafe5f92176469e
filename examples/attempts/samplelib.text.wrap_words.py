# attempt: wrong — returns one newline-joined string instead of a list of lines
def wrap_words(text, width):
    """Greedily wrap ``text`` into lines of at most ``width`` characters."""
    if width < 1:
        raise ValueError("width must be at least 1")
    lines = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)
