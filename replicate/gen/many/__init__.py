"""`replicate gen --repos FILE`: many repositories minted into one batch, each by the
single-repository pipeline in a child process, spread by an executor (`replicate.executors`)."""
