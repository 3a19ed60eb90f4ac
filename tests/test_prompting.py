"""Prompts render from their templates' pieces to the very text string.Template gives."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from townbot import prompting
from townbot.prompting import PROMPT_DIR, render, template

NAMES = sorted(path.stem for path in PROMPT_DIR.glob("*.txt"))


def placeholders(name: str) -> set[str]:
    source = template(name)
    return {m.group("named") or m.group("braced") for m in source.pattern.finditer(source.template)
            if m.group("escaped") is None}


@pytest.mark.parametrize("name", NAMES)
def test_every_template_renders_as_substitute_does(name: str) -> None:
    # Values that a second pass over the text would change, numbers, and trailing newlines.
    values: dict[str, object] = {key: f"${key} costs $$5 {{x}}\n" for key in placeholders(name)}
    values.update(extra=7)  # a value the template does not use is left out, as before
    for key in sorted(placeholders(name))[:1]:
        values[key] = 12
    expected = template(name).substitute({k: str(v) for k, v in values.items()}).rstrip("\n")
    assert render(name, **values) == expected


def test_a_missing_value_raises_key_error_naming_it() -> None:
    with pytest.raises(KeyError, match="problem"):
        render("repair", prompt="P")


@pytest.fixture
def own_templates(tmp_path, monkeypatch) -> Iterator[None]:
    monkeypatch.setattr(prompting, "PROMPT_DIR", tmp_path)
    prompting.template.cache_clear()
    prompting.pieces.cache_clear()
    yield
    prompting.template.cache_clear()
    prompting.pieces.cache_clear()


def test_dollar_signs_and_braced_names_render_as_substitute_does(tmp_path, own_templates) -> None:
    (tmp_path / "t.txt").write_text("$$a ${b}c $b$$\n\n", encoding="utf-8")
    assert render("t", b="$x") == "$a $xc $x$"


def test_a_stray_dollar_sign_is_refused(tmp_path, own_templates) -> None:
    (tmp_path / "t.txt").write_text("costs $5", encoding="utf-8")
    with pytest.raises(ValueError, match="character 6"):
        render("t")
