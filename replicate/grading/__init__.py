"""Grading a candidate against a task's hidden inputs and expected outcomes.

`grader` splices the candidate, runs it in the jail and compares each outcome (`compare`) on the
trusted side; `reward` weighs the matches by stratum and normalises against degenerate programs.
"""
