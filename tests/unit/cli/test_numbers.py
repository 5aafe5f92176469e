"""Every number an option takes is checked as the command line is read: a bad one is one line
naming the option, exit 2, before any work (a negative `run --limit` once ran all tasks but the
last three: `[:-3]`)."""

from __future__ import annotations

import socket

import pytest

from replicate.cli import numbers
from replicate.cli.main import build_parser, main
from replicate.cli.serve import can_listen
from replicate.errors import ReplicateError

RUN = ["run", "--tasks", "t", "--agent", "true", "--out", "o"]
GEN = ["gen", "--repo", "r", "--out", "o"]
SERVE = ["serve", "--tasks", "t"]
EXPORT = ["export", "--tasks", "t", "--out", "o"]

BAD = [
    (RUN, "--limit", "-3"),
    (RUN, "--limit", "0"),
    (RUN, "--workers", "0"),
    (RUN, "--samples", "0"),
    (RUN, "--timeout", "-1"),
    (RUN, "--timeout", "inf"),
    (RUN, "--disk-quota-mb", "-1"),
    (RUN, "--max-steps", "0"),
    (RUN, "--max-tokens", "many"),
    (RUN, "--max-solve-rate", "1.5"),
    (GEN, "--workers", "0"),
    (GEN, "--limit", "-1"),
    (GEN, "--budget", "0"),
    (GEN, "--min-kill-rate", "2"),
    (GEN, "--jobs", "0"),
    (SERVE, "--port", "99999"),
    (SERVE, "--workers", "0"),
    (SERVE, "--queue", "-1"),
    (SERVE, "--max-body-mb", "nan"),
    (EXPORT, "--limit", "0"),
    (EXPORT, "--max-solve-rate", "-0.1"),
]


@pytest.mark.parametrize(("head", "option", "value"), BAD)
def test_a_bad_number_is_one_line_naming_the_option(
    head: list[str], option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main([*head, option, value])
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert err.count("\n") == 1 and err.startswith(f"error: argument {option}: ")
    assert repr(value) in err and f"replicate {head[0]} --help" in err


def test_good_numbers_are_read_as_their_kind() -> None:
    args = build_parser().parse_args(
        [*RUN, "--limit", "3", "--timeout", "2.5", "--disk-quota-mb", "0", "--max-solve-rate", "1"]
    )
    assert (args.limit, args.timeout, args.disk_quota_mb, args.max_solve_rate) == (3, 2.5, 0, 1.0)
    assert isinstance(args.limit, int) and isinstance(args.timeout, float)
    served = build_parser().parse_args([*SERVE, "--port", "0", "--queue", "0"])
    assert (served.port, served.queue) == (0, 0)


def test_the_kinds_alone() -> None:
    assert numbers.count("7") == 7 and numbers.amount("0") == 0 and numbers.rate("0.25") == 0.25
    for kind, text in ((numbers.count, "1.5"), (numbers.port, "-1"), (numbers.seconds, "-0.0")):
        with pytest.raises(Exception, match="not"):
            kind(text)


def test_an_address_in_use_is_refused_before_the_server_starts() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ReplicateError, match=f"cannot listen on 127.0.0.1:{port}"):
            can_listen("127.0.0.1", port)
    can_listen("127.0.0.1", port)  # the control: once let go, the same port is taken up
