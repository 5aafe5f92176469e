"""Recording the calls a repository's own tests make to each target (the traced inputs).

`collect` runs the tests in the sandbox with the recording plugin (and, for chosen classes, the
call sequences made on their instances: `record_sequences`, `call_sequences`); `plugin`,
`budget`, `rebuild`, `by_value_pickler` and `sequences` are shipped into that sandbox as source and
import the standard library only."""

from __future__ import annotations

from replicate.harvest.call_sequences import SequenceBudget
from replicate.harvest.collect import (
    PLUGIN_FILES,
    HarvestedCall,
    HarvestResult,
    install_plugin,
    record_sequences,
    run_harvest,
)
from replicate.harvest.detail import harvest_detail
from replicate.harvest.documented import from_documentation

__all__ = [
    "PLUGIN_FILES",
    "HarvestResult",
    "HarvestedCall",
    "SequenceBudget",
    "from_documentation",
    "harvest_detail",
    "install_plugin",
    "record_sequences",
    "run_harvest",
]
