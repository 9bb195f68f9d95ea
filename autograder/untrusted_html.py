"""HTML built from student content, made inert for the staff who open it: the one allow-list.

Every page the kit writes from a submission (nbgrader feedback pages, templates in
integrations/templates/; the class report, report/page.py) passes its student-derived markup
through `clean` as the last step (after markdown and offline math), with nh3 (Rust's ammonia: it
parses as a browser does, then keeps only what is listed here), and carries `CSP` (and a
no-referrer policy, so that a link followed tells nobody where the page is) in its trusted
head, so that the browser itself refuses any script and any request to anywhere, whatever the
sanitiser or the page's own CSS (nbconvert's inlines fonts by relative url()) would let through.

What is kept: text markup, tables, code, details, the MathML latex2mathml writes, images whose
source is a `data:image/...;base64` URI (figures, nbconvert's embedded outputs), links to anchors
of the page or to http(s)/mailto (followed only when clicked), `class`/`id`, a `style` limited to
a few layout properties with no url(), image() or escapes. Everything else goes: script, style
and template elements with their content, event handlers, iframes, objects, forms, meta, base,
svg, srcset, remote or relative image sources, javascript: and data: links, comments.
"""
from __future__ import annotations

import re
from typing import Optional

import nh3

#: The Content-Security-Policy of every such page (a <meta http-equiv> first in its head): no
#: script, no connection, no frame, no form target; images, fonts and media only as data: URIs;
#: styles only inline (the page's own <style> and style attributes).
CSP = ("default-src 'none'; img-src data:; font-src data:; style-src 'unsafe-inline'; "
       "base-uri 'none'; form-action 'none'")

#: A CSP that also allows the one inline script whose sha256 (base64) is given.
def csp_with_script(sha256_base64: str) -> str:
    return CSP + f"; script-src 'sha256-{sha256_base64}'"


HTML_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del", "details",
    "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header",
    "hr", "i", "img", "ins", "kbd", "li", "main", "mark", "nav", "ol", "p", "pre", "q", "s", "samp", "section",
    "small", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead",
    "tr", "tt", "u", "ul", "var", "wbr",
}
#: Every element latex2mathml writes (MathML Core and the few presentation elements it adds).
MATHML_TAGS = {
    "math", "menclose", "merror", "mfrac", "mi", "mmultiscripts", "mn", "mo", "mover", "mpadded", "mphantom",
    "mprescripts", "mroot", "mrow", "ms", "mspace", "msqrt", "mstyle", "msub", "msubsup", "msup", "mtable", "mtd",
    "mtext", "mtr", "munder", "munderover", "none", "semantics", "annotation",
}
MATHML_ATTRIBUTES = {
    "accent", "accentunder", "alttext", "columnalign", "columnlines", "columnspacing", "depth", "display",
    "displaystyle", "fence", "form", "frame", "height", "largeop", "linethickness", "lspace", "mathsize",
    "mathvariant", "maxsize", "minsize", "movablelimits", "notation", "rowalign", "rowlines", "rowspacing",
    "rspace", "scriptlevel", "separator", "stretchy", "symmetric", "voffset", "width",
}
ATTRIBUTES = {
    "*": {"class", "id", "title", "lang", "dir", "aria-hidden", "aria-label", "style"},
    "a": {"href", "name"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "align"},
    "th": {"colspan", "rowspan", "align", "scope"},
    "ol": {"start"},
    "details": {"open"},
    **{tag: set(MATHML_ATTRIBUTES) for tag in MATHML_TAGS},
}
#: The only properties a style attribute keeps (ammonia parses the declarations).
STYLE_PROPERTIES = {"width", "height", "max-width", "text-align", "vertical-align", "color", "background-color",
                    "font-weight", "font-style", "white-space", "margin", "padding", "border"}

_IMAGE_SOURCE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*", re.I)
_LINK = re.compile(r"(#|https?://|mailto:)", re.I)
_STYLE_FUNCTION = re.compile(r"url\s*\(|image|\\|@|expression|/\*|attr\s*\(", re.I)


def _attribute(tag: str, name: str, value: str) -> Optional[str]:
    """The URL and style rules ammonia's lists cannot say: None drops the attribute."""
    if name == "src":
        return value if tag == "img" and _IMAGE_SOURCE.fullmatch(value.strip()) else None
    if name == "href":
        return value if tag == "a" and _LINK.match(value.strip()) else None
    if name == "style":
        return None if _STYLE_FUNCTION.search(value) else value
    return value


_CLEANER = nh3.Cleaner(
    tags=HTML_TAGS | MATHML_TAGS,
    clean_content_tags={"script", "style", "template", "noscript", "iframe", "object", "embed", "textarea",
                        "title", "xmp", "noembed", "noframes", "svg"},
    attributes=ATTRIBUTES,
    attribute_filter=_attribute,
    strip_comments=True,
    link_rel=None,  # the pages' <meta name="referrer" content="no-referrer"> covers every link
    url_schemes={"http", "https", "mailto", "data"},
    filter_style_properties=STYLE_PROPERTIES,
)


def clean(html: str) -> str:
    """`html` (a fragment: what goes inside <body>) with only the allow-listed markup left."""
    return str(_CLEANER.clean(html))
