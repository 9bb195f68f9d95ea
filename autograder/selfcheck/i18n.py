"""The language a student reads: every student-facing message goes through `_` (gettext).

    from autograder.selfcheck.i18n import _, N_
    _("{name} is missing").format(name=name)    # translated now, placeholders filled after
    HINT = N_("...")                             # marked for extraction, translated where it is shown

The source of each message is its English text (the msgid); the translations live in gettext
catalogues, `autograder/locale/<lang>/LC_MESSAGES/<area>.po`, written and checked with Babel
(`python -m autograder.translations`, docs/translations.md). In the kit they are compiled
in memory on first use; a student release carries one compiled `autograder/locale/<lang>.mo` holding
only the messages its bundle can show. Placeholders are Python's `{name}`: a translation keeps each
one, in any order.

Staff-facing output (the CLI, the class report, grades.csv) stays English and does not use this.
This module is part of the student bundle: it imports only the standard library (Babel in the kit).
"""
from __future__ import annotations

import contextlib
import functools
import gettext
import io
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

#: The languages a course can set for its students (course.yml `language`).
LANGUAGES = ("en", "zh")
#: The language of the msgids: nothing to look up.
SOURCE = "en"

LOCALE = Path(__file__).resolve().parents[1] / "locale"  # autograder/locale/

_language: ContextVar[str] = ContextVar("student_language", default=SOURCE)


def language() -> str:
    """The language student-facing messages are in now."""
    return _language.get()


def set_language(lang: str) -> None:
    """Show student-facing messages in `lang` from now on (in this context)."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown student language {lang!r}: one of {', '.join(LANGUAGES)}")
    _language.set(lang)


@contextlib.contextmanager
def using(lang: str) -> Iterator[None]:
    """Show student-facing messages in `lang` inside the block, and as before after it."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown student language {lang!r}: one of {', '.join(LANGUAGES)}")
    token = _language.set(lang)
    try:
        yield
    finally:
        _language.reset(token)


def _(message: str) -> str:
    """`message` in the current language (itself when it has no translation, or in English)."""
    lang = _language.get()
    if lang == SOURCE or not message:
        return message
    return translations(lang).gettext(message)


def every_translation(message: str) -> set[str]:
    """`message` in every language (staff tools that find a student-facing text in results of any course)."""
    out = {message}
    for lang in LANGUAGES:
        if lang != SOURCE:
            out.add(translations(lang).gettext(message))
    return out


def N_(message: str) -> str:
    """Mark `message` for extraction without translating it (a constant translated where it is shown)."""
    return message


@functools.cache
def translations(lang: str) -> gettext.NullTranslations:
    """The catalogue of `lang`: a release's compiled `<lang>.mo`, else the kit's `.po` files compiled in
    memory (every area merged), else none (messages stay English)."""
    compiled = LOCALE / f"{lang}.mo"
    if compiled.is_file():
        with compiled.open("rb") as fh:
            return gettext.GNUTranslations(fh)
    sources = sorted((LOCALE / lang / "LC_MESSAGES").glob("*.po"))
    try:
        from babel.messages.mofile import write_mo
        from babel.messages.pofile import read_po
    except ImportError:  # pragma: no cover - the kit always has Babel; a release carries its .mo
        return gettext.NullTranslations()
    merged = None
    for path in sources:
        with path.open("rb") as fh:
            catalog = read_po(fh, locale=lang)
        if merged is None:
            merged = catalog
            continue
        for msg in catalog:
            if msg.id and msg.string and not merged.get(msg.id):
                merged.add(msg.id, msg.string, flags=msg.flags)
    if merged is None:
        return gettext.NullTranslations()
    buffer = io.BytesIO()
    write_mo(buffer, merged)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)
