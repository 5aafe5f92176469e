"""Recording the calls a repository's own tests make to each target (the traced inputs).

`collect` runs the tests in the sandbox with the recording plugin; `plugin`, `budget`,
`rebuild` and `by_value_pickler` are shipped into that sandbox as source and import the
standard library only.
"""

from __future__ import annotations

from replicate.harvest.collect import (
    PLUGIN_FILES,
    HarvestedCall,
    HarvestResult,
    install_plugin,
    run_harvest,
)
from replicate.harvest.detail import harvest_detail

__all__ = [
    "PLUGIN_FILES",
    "HarvestResult",
    "HarvestedCall",
    "harvest_detail",
    "install_plugin",
    "run_harvest",
]
