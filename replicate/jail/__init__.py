"""Running a program on a target's inputs in isolation, for gen and for grading alike.

The in-jail runner (`runner`, standard library only) and its wire format (`wire`) are shipped into
a sandbox (`sandbox/`: bubblewrap, Docker or none); `calls.run_calls` starts one, cold or from a
warm pool (`warm`), and reads its frames back on the trusted side (`frames`, `calltime`).
"""
