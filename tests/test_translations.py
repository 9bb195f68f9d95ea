"""The gettext catalogues (autograder/translations.py) and the student-language switch (selfcheck/i18n.py)."""
from __future__ import annotations

import gettext
import io

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from autograder import translations
from autograder.selfcheck import i18n


@pytest.mark.parametrize("area", sorted(translations.areas()))
def test_every_message_has_a_checked_translation(area):
    """No message without a zh translation, none stale (fuzzy), none that drops or renames a placeholder."""
    assert translations.problems("zh", [area]) == []


def test_no_po_file_outside_the_areas():
    folder = i18n.LOCALE / "zh" / "LC_MESSAGES"
    assert {p.stem for p in folder.glob("*.po")} <= set(translations.areas())


def test_placeholders_are_compared_by_name_in_any_order():
    assert translations.placeholders("{b} and {a!r} at {x:.2f}, not {{this}}") == ["a", "b", "x"]
    assert translations.placeholders("{a}{b}") == translations.placeholders("{b}……{a}")
    assert translations.placeholders("{a}") != translations.placeholders("{a} {c}")


def test_notebook_blocks_split_paragraphs_and_keep_math_tables_and_code_whole():
    cell = ("First paragraph\nstill first.\n\n$$a = b\n\nc = d$$\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n"
            "```python\nx = 1\n\ny = 2\n```\n\nLast $$e$$ inline.")
    assert translations.notebook_blocks(cell) == [
        "First paragraph\nstill first.", "$$a = b\n\nc = d$$", "| x | y |\n|---|---|\n| 1 | 2 |",
        "```python\nx = 1\n\ny = 2\n```", "Last $$e$$ inline."]


def _po(tmp_path, entries):
    catalog = Catalog(locale="zh", domain="kit_selfcheck")
    for msgid, msgstr in entries.items():
        catalog.add(msgid, msgstr)
    folder = tmp_path / "zh" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    buffer = io.BytesIO()
    write_po(buffer, catalog)
    (folder / "kit_selfcheck.po").write_bytes(buffer.getvalue())


def test_the_switch_translates_in_its_block_only(tmp_path, monkeypatch):
    _po(tmp_path, {"{name} is missing": "缺少 {name}"})
    monkeypatch.setattr(i18n, "LOCALE", tmp_path)
    i18n.translations.cache_clear()
    try:
        assert i18n._("{name} is missing") == "{name} is missing"
        with i18n.using("zh"):
            assert i18n._("{name} is missing").format(name="W_q") == "缺少 W_q"
            assert i18n._("not in the catalogue") == "not in the catalogue"
        assert i18n.language() == "en"
        with pytest.raises(ValueError, match="unknown student language"):
            i18n.set_language("fr")
    finally:
        i18n.translations.cache_clear()


def test_a_release_mo_holds_only_the_messages_of_the_files_it_keeps():
    public = translations.compiled("zh", lambda f: "/suites/public/" in f)
    table = gettext.GNUTranslations(io.BytesIO(public))
    messages = [m for m in translations.extract("suite_02") if m.id]
    hidden = [m.id for m in messages if all("/suites/hidden/" in f for f, _ in m.locations)]
    public = [m.id for m in messages if any("/suites/public/" in f for f, _ in m.locations)]
    assert hidden and all(table.gettext(m) == m for m in hidden)
    assert public and all(table.gettext(m) != m for m in public)
