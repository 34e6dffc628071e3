"""`attnkit --help` and each command's help name the documentation pages, by path, and every page they name exists
(the README's sections moved to docs/: no help may send a reader there)."""

import re
from pathlib import Path

import pytest

from autograder.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS_PATH = re.compile(r"\bdocs/[\w./-]+\.md\b")


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--help"])
    assert stopped.value.code == 0
    return capsys.readouterr().out


def _commands(top: str) -> list[str]:
    return re.search(r"\{([\w,-]+)\}", top).group(1).split(",")


def _named_pages(text: str) -> list[str]:
    pages = DOCS_PATH.findall(text)
    assert pages, text
    for page in pages:
        assert (ROOT / page).is_file(), f"help names {page}, which is not in the checkout"
    return pages


def test_attnkit_help_points_to_the_instructor_guides(capsys):
    top = _help(capsys)
    assert {"docs/instructor/index.md", "docs/instructor/feedback.md"} <= set(_named_pages(top))
    assert "README" not in top


def test_every_command_help_points_to_an_existing_docs_page(capsys):
    commands = _commands(_help(capsys))
    assert {"check", "grade", "merge", "export"} <= set(commands)
    pages = {}
    for command in commands:
        text = _help(capsys, command)
        assert "README" not in text, command
        pages[command] = _named_pages(text)
    assert pages["grade"] == ["docs/instructor/grade.md"] and pages["export"] == ["docs/instructor/export.md"]
    assert pages["merge"] == ["docs/scaling.md"] and pages["similarity"] == ["docs/similarity.md"]
