"""`replicate serve`: grading over HTTP for trainers that call a reward server."""
