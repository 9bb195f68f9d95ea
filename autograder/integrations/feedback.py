"""The feedback page's math, rendered when the page is written: no MathJax, no network.

nbgrader's feedback pages load MathJax from a CDN, so a student who opens one offline (or behind
a filter) reads raw `$\\mathbf q^\\top \\mathbf k$`. `offline_math` (a Jinja filter of the course's
feedback template, templates/course_feedback) replaces the math that nbconvert's markdown
renderer leaves in the HTML (`$...$`, `$$...$$`, `\\(...\\)`, `\\[...\\]`, never inside `<code>` or
`<pre>`) by MathML, which current browsers draw natively. MathML Core draws `mathvariant` only as
"normal", so bold and double-struck letters (`\\mathbf q`, `\\mathbb R`) become the Unicode
mathematical letters (𝐪, ℝ) that it draws as such.

Everything here handles student text: `to_mathml` serialises latex2mathml's element tree itself
(latex2mathml's own `convert` un-escapes its whole output, so `\\text{<svg onload=...>}` came out as
a live element), and the template passes this filter's output through `untrusted_html`
(autograder/untrusted_html.py) as the last step.

The page is in the course's language (course.yml `language`): the template's fixed texts are gettext
messages (Jinja2's i18n extension, area `pages` of autograder/translations.py), this module's through `_`.
"""
from __future__ import annotations

import functools
import html
import re
from typing import Any
from xml.etree.ElementTree import tostring

import nbformat
from latex2mathml.converter import Converter
from nbconvert.exporters import HTMLExporter

from autograder.selfcheck import i18n
from autograder.selfcheck.i18n import _

#: Where the template finds its templates (nbgrader_config.py: HTMLExporter.extra_template_basedirs).
TEMPLATES = __file__.rsplit("/", 1)[0] + "/templates"


class FeedbackExporter(HTMLExporter):
    """The exporter of `nbgrader generate_feedback` only (nbgrader_config.py: GenerateFeedback.exporter_class):
    the course's template and filters are configured on this class, not on HTMLExporter, because
    nbgrader's formgrader renders its submission view with an HTMLExporter built from the same
    config (it sets template_name "formgrade", which a global HTMLExporter.template_name overrode:
    every submission view failed with TemplateNotFound: bootstrap.min.css). It bounds the student's
    markdown before anything renders it (`bound_markdown`), and writes the page in the course's language."""

    @functools.cached_property
    def language(self) -> str:
        """The student language of the course nbgrader runs with (course.yml `language`)."""
        from autograder.integrations.nbgrader_bridge import course_of
        return course_of(self.config).language

    def _create_environment(self) -> Any:
        """nbconvert's environment with gettext (`_` in the template) in the course's language."""
        environment = super()._create_environment()
        environment.add_extension("jinja2.ext.i18n")
        environment.install_gettext_translations(i18n.translations(self.language))
        environment.globals["page_language"] = HTML_LANG[self.language]
        return environment

    def from_notebook_node(self, nb: Any, resources: Any = None, **kw: Any) -> Any:
        nb = nbformat.from_dict(nb)  # a copy: the caller's notebook is left as it was
        with i18n.using(self.language):
            bound_markdown(nb)
        info = (resources or {}).get("nbgrader") or {}
        if info.get("db_url") and info.get("student") and info.get("assignment"):
            from autograder.integrations.nbgrader_bridge import final_grade
            resources["course_final"] = final_grade(self.config, info["db_url"], info["assignment"], info["student"])
        return super().from_notebook_node(nb, resources, **kw)


#: The page's `<html lang>` for each student language (it also selects the Chinese glyph variants).
HTML_LANG = {"en": "en", "zh": "zh-CN"}

_BOLD = {**{chr(ord("A") + i): chr(0x1D400 + i) for i in range(26)},
         **{chr(ord("a") + i): chr(0x1D41A + i) for i in range(26)},
         **{chr(ord("0") + i): chr(0x1D7CE + i) for i in range(10)}}
_DOUBLE = {**{chr(ord("A") + i): chr(0x1D538 + i) for i in range(26)},
           **{chr(ord("a") + i): chr(0x1D552 + i) for i in range(26)},
           **{chr(ord("0") + i): chr(0x1D7D8 + i) for i in range(10)},
           "C": "ℂ", "H": "ℍ", "N": "ℕ", "P": "ℙ", "Q": "ℚ", "R": "ℝ", "Z": "ℤ"}
_VARIANT = re.compile(r'<(mi|mn|mo|mtext) mathvariant="(bold|double-struck)">([^<]*)</\1>')


def _letters(match: re.Match[str]) -> str:
    tag, variant, text = match.groups()
    table = _BOLD if variant == "bold" else _DOUBLE
    text = html.unescape(text)
    mapped = "".join(table.get(ch, ch) for ch in text)
    upright = ' mathvariant="normal"' if tag == "mi" and len(mapped) == 1 else ""  # no automatic italics
    return f"<{tag}{upright}>{html.escape(mapped)}</{tag}>"


def _serialised(tex: str, display: bool) -> str:
    """latex2mathml's MathML for `tex`, every text and attribute escaped once (its element tree
    holds character references as text, e.g. `&#x0003C;`, and the student's text as it is)."""
    tree = Converter(display="block" if display else "inline").convert_to_element(tex)
    for element in tree.iter():
        element.text = html.unescape(element.text) if element.text else element.text
        element.tail = html.unescape(element.tail) if element.tail else element.tail
        for name, value in element.attrib.items():
            element.attrib[name] = html.unescape(value)
    return tostring(tree, encoding="unicode")


def to_mathml(tex: str, display: bool = False) -> str:
    """MathML for one formula; the formula as text (in a <code>) if it cannot be converted."""
    try:
        out = _serialised(tex.strip(), display)
    except Exception:  # latex2mathml does not know every macro: show the source rather than nothing
        return f"<code>{html.escape(tex)}</code>"
    out = _VARIANT.sub(_letters, out)
    return out.replace("<math ", f'<math alttext="{html.escape(tex.strip(), quote=True)}" ', 1)


#: Bounds on the student markdown a feedback page renders (module constants: course.yml's `limits` has no
#: feedback bound). A markdown cell longer than MAX_CELL_MARKDOWN characters, and every markdown cell once
#: the notebook's cells have used MAX_NOTEBOOK_MARKDOWN characters, is shown as escaped plain text (its
#: first MAX_CELL_MARKDOWN characters) with a note; after MAX_MARKDOWN_CELLS markdown cells, the remaining
#: markdown cells that nbgrader does not grade are left out, one note saying how many.
MAX_CELL_MARKDOWN = 50_000
MAX_NOTEBOOK_MARKDOWN = 1_000_000
MAX_MARKDOWN_CELLS = 2_000
PLAIN = "course_plain"  # the cell metadata key the template reads (set here for every markdown cell)


def bound_markdown(nb: Any) -> None:
    """Mark (in place) the markdown cells shown as plain text and leave out those beyond the cell count."""
    used = count = dropped = 0
    kept = []
    note_at = None
    for cell in nb.cells:
        if cell.get("cell_type") != "markdown":
            kept.append(cell)
            continue
        cell.metadata.pop(PLAIN, None)  # a student's own key means nothing
        source = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        graded = bool(cell.metadata.get("nbgrader"))
        count += 1
        if count > MAX_MARKDOWN_CELLS and not graded:
            dropped += 1
            if note_at is None:
                note_at = len(kept)
            continue
        if len(source) > MAX_CELL_MARKDOWN or used + len(source) > MAX_NOTEBOOK_MARKDOWN:
            shown = source[:MAX_CELL_MARKDOWN]
            note = (_("This cell ({length:,} characters) is shown as plain text, its first {shown:,} characters:"
                      " the feedback page renders at most {cell:,} characters of markdown per cell and {notebook:,}"
                      " per notebook.") if len(shown) < len(source) else
                    _("This cell ({length:,} characters) is shown as plain text: the feedback page renders at most"
                      " {cell:,} characters of markdown per cell and {notebook:,} per notebook."))
            cell.metadata[PLAIN] = note.format(length=len(source), shown=len(shown), cell=MAX_CELL_MARKDOWN,
                                               notebook=MAX_NOTEBOOK_MARKDOWN)
            cell.source = shown
            used += len(shown)
        else:
            used += len(source)
        kept.append(cell)
    if dropped and note_at is not None:
        note = nbformat.v4.new_markdown_cell("")
        note.metadata[PLAIN] = _("{dropped:,} further markdown cells are not shown: the feedback page shows at most"
                                 " {cells:,} markdown cells.").format(dropped=dropped, cells=MAX_MARKDOWN_CELLS)
        kept.insert(note_at, note)
    nb.cells = kept


class _Next:
    """The next index of `needle` in `text` at or after a position that only grows: each character is scanned
    at most once in all (a cached answer is reused while it is still ahead; -1 stays -1)."""

    def __init__(self, text: str, needle: str) -> None:
        self.text, self.needle, self.at = text, needle, -2

    def find(self, start: int) -> int:
        if self.at == -1 or self.at >= start:
            return self.at
        self.at = self.text.find(self.needle, start)
        return self.at


_OPEN = re.compile(r"<(pre|code|script|style|math)\b", re.I)  # at one position: O(1)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # keeps every index


def _math_in_text(text: str) -> str:
    """`text` (between tags) with its `$$...$$`, `\\[...\\]`, `\\(...\\)` and `$...$` replaced by MathML,
    in one left-to-right pass (the rules of the former regex: a single `$` not after `\\` or `$`, its
    formula neither starting nor ending with a space, the closing `$` not followed by a digit)."""
    dollar, backslash = _Next(text, "$"), _Next(text, "\\")
    closers = {"$$": _Next(text, "$$"), "\\]": _Next(text, "\\]"), "\\)": _Next(text, "\\)")}
    out: list[str] = []
    p = c = 0
    n = len(text)
    while c < n:
        candidates = [i for i in (dollar.find(c), backslash.find(c)) if i >= 0]
        if not candidates:
            break
        c = min(candidates)
        found = None
        if text.startswith("$$", c):
            end = closers["$$"].find(c + 3)
            if end >= 0:
                found = (c + 2, end, end + 2, True)
        elif text.startswith("\\[", c) or text.startswith("\\(", c):
            closer = "\\]" if text[c + 1] == "[" else "\\)"
            end = closers[closer].find(c + 3)
            if end >= 0:
                found = (c + 2, end, end + 2, closer == "\\]")
        elif text[c] == "$" and (c == 0 or text[c - 1] not in "\\$") and c + 1 < n and not text[c + 1].isspace():
            end = dollar.find(c + 1)
            if end >= 0 and not text[end - 1].isspace() and not (end + 1 < n and text[end + 1].isdecimal()):
                found = (c + 1, end, end + 1, False)
        if found is None:
            c += 1
            continue
        start, end, after, display = found
        out.append(text[p:c])
        out.append(to_mathml(html.unescape(text[start:end]), display=display))
        p = c = after
    out.append(text[p:])
    return "".join(out)


def offline_math(rendered: str) -> str:
    """Replace the math in rendered HTML (text between tags; not in pre, code, script, style, math) by MathML.

    One left-to-right pass over `rendered`: every search for a delimiter or a closing tag starts where the
    previous one of its kind ended or reuses its answer, so the time is linear in the length (the former
    regexes rescanned the rest of the text from every unclosed `\\(` or `<pre>`: quadratic)."""
    if "$" not in rendered and "\\(" not in rendered and "\\[" not in rendered:
        return rendered
    lower = rendered.translate(_ASCII_LOWER)
    lt, gt = _Next(rendered, "<"), _Next(rendered, ">")
    closes: dict[str, _Next] = {}
    out: list[str] = []
    p = q = 0  # p: where the current text starts; q: where the next tag is looked for
    while True:
        i = lt.find(q)
        if i < 0:
            break
        end = -1
        opened = _OPEN.match(lower, i)
        if opened:
            name = opened.group(1).lower()
            j = closes.setdefault(name, _Next(lower, f"</{name}>")).find(opened.end())
            if j >= 0:
                end = j + len(name) + 3
        if end < 0:
            k = gt.find(i + 1)
            if k < 0:
                break  # no ">" from here on: the rest is text
            if k == i + 1:  # "<>" is text
                q = i + 1
                continue
            end = k + 1
        out.append(_math_in_text(rendered[p:i]))
        out.append(rendered[i:end])
        p = q = end
    out.append(_math_in_text(rendered[p:]))
    return "".join(out)
