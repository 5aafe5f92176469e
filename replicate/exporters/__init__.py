"""Turning a task batch into what a training or evaluation framework reads (`replicate export`)."""
