"""An attempt by an agent at one task: its workspace, the sandbox it runs in, its egress.

`registry` names what `replicate run --agent` accepts (a command, or a built-in model agent);
`protocol` runs a command agent by the public agent protocol; `workspace` makes the stubbed tree.
"""
