"""Running a program on a target's inputs in isolation, for gen and for grading alike.

The in-jail runner (`runner`, standard library only) and its wire format (`wire`) are shipped into
a sandbox (`sandbox/`: bubblewrap, Docker or none); `calls.run_calls` starts one, cold or from a
warm pool (`warm`), and reads its frames back on the trusted side (`frames`, `calltime`).
Many runs share one jail as forked children of a session (`session`): gen's own programs
(`series`) and, in sessions sealed against their children, graders' candidates (`candidates`).
"""

from __future__ import annotations

from replicate.jail.by_value_module import module_file
from replicate.jail.bytecode import compile_candidate
from replicate.jail.calls import JAIL_ENV, JailRun, RepoContext, Until, run_calls
from replicate.jail.candidates import CandidateSessions, idle_sessions
from replicate.jail.context import context_for
from replicate.jail.frames import ParsedRun, is_result
from replicate.jail.jail import Jail
from replicate.jail.known_outcomes import KNOWN as KNOWN_OUTCOMES
from replicate.jail.sequences import Replay, class_target, replay, replay_of, sequence_input
from replicate.jail.series import WorkerSessions
from replicate.jail.warm import WarmJail, WarmPool
from replicate.jail.wire import CTOR_RECIPE_TAG, PROBE, PROBED, READ, RECIPE_TAG
from replicate.sandbox import (
    Limits,
    Mount,
    Sandbox,
    SandboxRequest,
    SandboxUnavailable,
    WarmStart,
    get_sandbox,
    sandbox_names,
    sweep_cgroups,
    system_view,
)

__all__ = [
    "CTOR_RECIPE_TAG",
    "JAIL_ENV",
    "KNOWN_OUTCOMES",
    "PROBE",
    "PROBED",
    "READ",
    "RECIPE_TAG",
    "CandidateSessions",
    "Jail",
    "JailRun",
    "Limits",
    "Mount",
    "ParsedRun",
    "Replay",
    "RepoContext",
    "Sandbox",
    "SandboxRequest",
    "SandboxUnavailable",
    "Until",
    "WarmJail",
    "WarmPool",
    "WarmStart",
    "WorkerSessions",
    "class_target",
    "compile_candidate",
    "context_for",
    "get_sandbox",
    "idle_sessions",
    "is_result",
    "module_file",
    "replay",
    "replay_of",
    "run_calls",
    "sandbox_names",
    "sequence_input",
    "sweep_cgroups",
    "system_view",
]
