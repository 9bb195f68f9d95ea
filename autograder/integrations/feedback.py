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
"""
from __future__ import annotations

import html
import re
from xml.etree.ElementTree import tostring

from latex2mathml.converter import Converter

#: Where the template finds its templates (nbgrader_config.py: HTMLExporter.extra_template_basedirs).
TEMPLATES = __file__.rsplit("/", 1)[0] + "/templates"

_PROTECTED = re.compile(r"(<(pre|code|script|style|math)\b.*?</\2>|<[^>]+>)", re.S | re.I)
_MATH = re.compile(r"\$\$(?P<d1>.+?)\$\$|\\\[(?P<d2>.+?)\\\]|\\\((?P<i2>.+?)\\\)|(?<![\\$])\$(?P<i1>[^$\s](?:[^$]*?[^$\s])?)\$(?!\d)",
                   re.S)

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


def offline_math(rendered: str) -> str:
    """Replace the math in rendered HTML (text between tags; not in pre, code, script, style) by MathML."""
    if "$" not in rendered and "\\(" not in rendered and "\\[" not in rendered:
        return rendered
    out = []
    for i, part in enumerate(_PROTECTED.split(rendered)):
        if part is None:
            continue
        if i % 3 == 0:  # text between tags (split's groups: the whole tag, the protected tag's name)
            out.append(_MATH.sub(lambda m: to_mathml(html.unescape(next(g for g in m.groups() if g is not None)),
                                                     display=bool(m["d1"] or m["d2"])), part))
        elif i % 3 == 1:
            out.append(part)
    return "".join(out)
