"""The pure core: records, ids, extraction results, splicing.

No subprocess, network or environment reads here.
"""
