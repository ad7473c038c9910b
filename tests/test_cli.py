"""The ``aifabric`` command: every subcommand reachable, every option explained."""

import argparse
import importlib

import pytest

from aifabric.cli import COMMANDS, main
from aifabric.scripts import _cli


class _Captured(Exception):
    pass


def _parser_of(command: str, monkeypatch) -> argparse.ArgumentParser:
    """The parser a command's main() builds (stopped at parse_args)."""
    seen = []

    def capture(self, args=None, namespace=None):
        seen.append(self)
        raise _Captured

    monkeypatch.setattr(_cli.Parser, "parse_args", capture)
    module = importlib.import_module(f"aifabric.scripts.{COMMANDS[command][0]}")
    with pytest.raises(_Captured):
        module.main([])
    return seen[0]


def _options(parser, where=""):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{where} {name}")
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            yield f"{where} {action.option_strings[-1]}".strip(), action


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "blocks"])
def test_every_option_has_help(command, monkeypatch):
    missing = [name for name, action in _options(_parser_of(command, monkeypatch))
               if not (action.help or "").strip()]
    assert missing == [], f"aifabric {command}: options without help: {missing}"


def test_unknown_command_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["nope"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown command 'nope'" in err


def test_blocks_json_lists_ranges_and_defaults(capsys):
    import json
    with pytest.raises(SystemExit) as e:
        main(["blocks", "--json"])
    assert e.value.code == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    n = next(p for p in rows["wwfa"]["parameters"] if p["name"] == "n")
    assert (n["low"], n["high"], n["default"]) == (2, 128, 5)     # the first default set's
    rows_p = next(p for p in rows["bvn"]["parameters"] if p["name"] == "rows")
    assert rows_p["default"] == 1 and rows_p["high"] == 6      # rows <= n at n = 6


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "blocks"])
def test_every_description_is_whole_sentences(command, monkeypatch):
    """A command's --help opens with whole sentences (a docstring's first paragraph, not its
    first line cut mid-sentence), without reST markup."""
    text = _parser_of(command, monkeypatch).description
    assert text and text[0].isupper() and text.endswith((".", ".)")), repr(text)
    assert "``" not in text and "\n" not in text, repr(text)


_BLAS_PROBE = """
import os, sys
from aifabric import cli
try:
    cli.main(["netsim", "--help"])
except SystemExit:
    pass
import numpy
print(os.environ.get("OPENBLAS_NUM_THREADS"), len(os.listdir("/proc/self/task")))
"""


@pytest.mark.parametrize("given,threads", [(None, "1"), ("2", "2")])
def test_a_command_runs_with_one_blas_thread_unless_the_environment_asks(given, threads):
    """numpy loaded after the command's start has one thread (OpenBLAS started no worker);
    a value the user set is kept, and OpenBLAS starts its workers for it."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    out = subprocess.run([sys.executable, "-c", _BLAS_PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout.split("\n")[-2].split()
    assert out[0] == threads
    assert (int(out[1]) == 1) == (threads == "1")
