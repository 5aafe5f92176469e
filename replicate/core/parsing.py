"""One `ast.parse` at a time, across the threads of a process (pure).

CPython before 3.11.8/3.12.2 (gh-106905) keeps the AST constructor's recursion depth per
interpreter, so two threads parsing at once (`gen` mints on threads, `run --workers 2` grades on
them) can fail with "SystemError: AST constructor recursion depth mismatch"; `warnings.
catch_warnings`, often held around a parse, is process-wide too.  Every parse that can run on a
worker thread holds `PARSE_LOCK`.
"""

from __future__ import annotations

import threading

PARSE_LOCK = threading.Lock()
