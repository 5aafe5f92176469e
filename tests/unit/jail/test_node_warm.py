"""A warm Node run ends at its runner's `done` frame, the run's nonce in front of it, wherever
the channel's chunks split it (no run)."""

from __future__ import annotations

from replicate.jail.node_warm import _until_done

NONCE = "ab" * 16
DONE = f'{NONCE} {{"event":"done"}}\n'.encode()


def test_the_done_frame_ends_the_run_across_chunks() -> None:
    before = f'{NONCE} {{"event":"result","i":0}}\n'.encode()
    for cut in range(1, len(DONE)):
        stop = _until_done(NONCE)
        assert not stop(before + DONE[:cut], 0.0)
        assert stop(DONE[cut:], 0.0)


def test_a_done_frame_without_the_nonce_does_not() -> None:
    stop = _until_done(NONCE)
    assert not stop(b'{"event":"done"}\n', 0.0)
    assert not stop(DONE.replace(NONCE.encode(), b"cd" * 16), 0.0)
    assert stop(DONE, 0.0)  # positive control: the same stop, the run's own frame
