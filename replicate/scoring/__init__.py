"""Scoring agents on task batches (`replicate run`)."""
