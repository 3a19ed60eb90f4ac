"""README kept honest: its set-up commands are the ones CI runs, every `townbot` command it
shows is one the real parser accepts with exactly the flags shown, every link it (or a page of
docs/) makes reaches a file and a heading that exist, and it stays short enough to read.

Markdown is read by markdown-it-py, the parser rich already brings with it, so that code blocks
inside list items, inline code broken over lines and links are found the way a renderer finds
them."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex
import subprocess
import sys
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from townbot.cli import DOC_PAGES, READ_MORE, build_parser, installed_version

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MOST_LINES = 160
INSTALL_AND_SIM = "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/townbot sim --days 1"


@cache
def tokens(path: Path) -> tuple[Token, ...]:
    return tuple(MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8")))


def code_blocks(path: Path) -> list[str]:
    return [token.content for token in tokens(path) if token.type in ("code_block", "fence")]


def inline_codes(path: Path) -> list[str]:
    return [" ".join(child.content.split()) for token in tokens(path) if token.type == "inline"
            for child in token.children or [] if child.type == "code_inline"]


def links(path: Path) -> list[str]:
    found = []
    for token in tokens(path):
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrs["href"]))
            elif child.type == "image":
                found.append(str(child.attrs["src"]))
    return found


def townbot_commands(path: Path) -> list[list[str]]:
    """The argument lists of every `townbot` command the page shows: each command of a shell
    line in a code block (after `&&`, `|` or `;`, past variable assignments), and inline code
    that starts with `townbot `."""
    commands = []
    for block in code_blocks(path):
        for line in block.replace("\\\n", " ").splitlines():
            for part in re.split(r"&&|\||;", line):
                words = shlex.split(part, comments=True)
                while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
                    words.pop(0)
                if words and (words[0] == "townbot" or words[0].endswith("/townbot")):
                    commands.append(words[1:])
    commands += [shlex.split(code)[1:] for code in inline_codes(path) if code.startswith("townbot ")]
    return commands


def subcommand_options(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The option strings of the (sub)command `argv` names, following nested subcommands."""
    options = set(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = next((word for word in argv if word in action.choices), None)
            if chosen is not None:
                rest = argv[argv.index(chosen) + 1:]
                return subcommand_options(action.choices[chosen], rest)
    return options


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    items = tokens(path)
    for opening, inline in zip(items, items[1:], strict=False):
        if opening.type == "heading_open":
            base = slug(inline.content)
            name, number = base, 0
            while name in found:
                number += 1
                name = f"{base}-{number}"
            found.add(name)
    return found


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def test_the_set_up_commands_come_first_and_the_test_one_is_what_ci_runs():
    blocks = code_blocks(README)
    install_and_sim, install_and_test = (block.strip() for block in blocks[:2])
    assert install_and_sim == INSTALL_AND_SIM
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert install_and_test in ci_lines, "README's test command must be the line .ci/run runs"
    assert install_and_test.startswith("python3 -m venv .venv && .venv/bin/pip install ")
    assert install_and_sim.split(" && ")[0] == install_and_test.split(" && ")[0]
    first_other = next(i for i, token in enumerate(tokens(README))
                       if token.type in ("code_block", "fence") and token.content.strip()
                       not in (install_and_sim, install_and_test))
    first_set_up = next(i for i, token in enumerate(tokens(README))
                        if token.type == "code_block" and token.content.strip() == install_and_test)
    assert first_set_up < first_other, "the set-up commands come before any other command"


def test_every_townbot_command_readme_shows_parses_with_exactly_its_flags():
    commands = townbot_commands(README)
    shown = {argv[0] for argv in commands if argv}
    assert {"sim", "play", "run", "sync", "doctor", "usage", "export", "web", "map", "eval"} <= shown
    parser = build_parser()
    wrong = []
    for argv in commands:
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            try:
                parser.parse_args(argv)
            except SystemExit:
                wrong.append(f"`townbot {shlex.join(argv)}`: {errors.getvalue().strip().splitlines()[-1]}")
                continue
        known = subcommand_options(parser, argv)
        wrong += [f"`townbot {shlex.join(argv)}`: {word} is an abbreviation or unknown"
                  for word in argv if word.startswith("--") and word.split("=")[0] not in known]
    assert not wrong, "README shows commands townbot refuses:\n" + "\n".join(wrong)


def test_the_command_synopsis_names_only_real_flags():
    """docs/commands.md's synopsis is written by hand, brackets and all: each `--flag` it gives a
    command is one of that command's own."""
    parser = build_parser()
    block = code_blocks(DOCS / "commands.md")[0]
    for line in block.splitlines():
        command = line.split()[1]
        # `a | b` is either a choice of flags or, as for eval, another form of the command
        for variant in line.split(" | "):
            words = variant.replace("[", " ").replace("]", " ").split()
            words = words[1:] if words[0] == "townbot" else words
            words = words if words[0] == command else [command, *words]
            known = subcommand_options(parser, words)
            for word in words:
                if word.startswith("--"):
                    assert word in known, f"docs/commands.md: {line.strip()!r} shows {word}"


@pytest.mark.parametrize("page", pages(), ids=lambda page: page.name)
def test_every_link_reaches_a_file_and_a_heading(page):
    broken = []
    for href in links(page):
        if re.match(r"[a-z]+:", href):
            continue  # a web address: not checked here (no test touches the network)
        target, _, fragment = href.partition("#")
        path = (page.parent / unquote(target)).resolve() if target else page
        if not path.exists():
            broken.append(f"{href}: no such file")
        elif fragment and path.suffix == ".md" and fragment not in anchors(path):
            broken.append(f"{href}: no such heading")
    assert not broken, f"{page.name} links nowhere:\n" + "\n".join(broken)


def test_readme_links_every_page_of_the_documentation():
    linked = {(README.parent / href.partition("#")[0]).resolve() for href in links(README)}
    for page in sorted(DOCS.glob("*.md")):
        assert page.resolve() in linked, f"README's Documentation list lacks {page.name}"


def test_readme_stays_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MOST_LINES, f"README has {lines} lines; details belong in docs/"


def test_help_ends_with_where_to_read_more_and_names_pages_that_exist():
    help_text = " ".join(build_parser().format_help().split())
    assert help_text.endswith(" ".join(READ_MORE.split()))
    assert "README.md" in READ_MORE and "docs/" in READ_MORE
    for name in DOC_PAGES:
        assert (DOCS / f"{name}.md").exists(), f"--help names docs/{name}.md"


def test_version_prints_the_installed_version():
    done = subprocess.run([sys.executable, "-m", "townbot", "--version"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == f"townbot {installed_version()}\n"
    assert re.fullmatch(r"townbot \d+\.\d+\.\d+\S*\n", done.stdout)
