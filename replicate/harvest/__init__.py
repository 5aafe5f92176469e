"""Recording the calls a repository's own tests make to each target (the traced inputs).

`collect` runs the tests in the sandbox with the recording plugin; `plugin`, `budget`, `rebuild`
and `byvalue` are shipped into that sandbox as source and import the standard library only.
"""
