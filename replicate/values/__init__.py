"""The runner's tagged values as the trusted side reads them (pure, no I/O).

`plain` decodes them to Python values and encodes them back; `render` writes short Python-like text.
"""
