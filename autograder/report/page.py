"""The report's HTML page: one self-contained file (styles inline, figures embedded as data URIs,
no scripts or fonts from anywhere), rendered from `templates/report.html` with Jinja2, autoescaped.

Names, messages and code in it come from submissions: the whole body passes through the kit's
allow-list (`untrusted_html`, autograder/untrusted_html.py) as its last step, and the head's
Content-Security-Policy lets the browser fetch nothing and run no script but the page's own
(`PRINT_SCRIPT`, allowed by its hash)."""
from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path
from typing import Any, Optional

from autograder.untrusted_html import clean, csp_with_script

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "report.html"
_MARK = re.compile(r"</?mark>")
#: The page's one script, outside the sanitised body: printing opens every <details>.
PRINT_SCRIPT = """
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
"""


def percent(value: Optional[float], digits: int = 0) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f}%"


def number(value: Optional[float], digits: int = 2) -> str:
    """A score as people write it: 12.77, 14, 0.5."""
    if value is None:
        return "—"
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def signed(value: Optional[float]) -> str:
    return "—" if value is None else f"{value:+.2f}"


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def highlighted(html: str) -> Any:
    """copydetect's highlighted code (highlight_overlap with escape_html=True: the code escaped,
    `<mark>` tags around the similar regions) as markup; anything else in it is escaped again."""
    from markupsafe import Markup, escape

    if "<" in _MARK.sub("", html):
        return escape(html)
    return Markup(clean(html))


def untrusted_html(rendered: str) -> Any:
    """Rendered markup through the allow-list, as markup (the body's last step)."""
    from markupsafe import Markup

    return Markup(clean(str(rendered)))


def content_security_policy() -> str:
    digest = base64.b64encode(hashlib.sha256(PRINT_SCRIPT.encode()).digest()).decode("ascii")
    return csp_with_script(digest)


def environment() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(percent=percent, number=number, signed=signed, data_uri=data_uri, highlighted=highlighted,
                       untrusted_html=untrusted_html)
    return env


def render(context: dict[str, Any]) -> str:
    from markupsafe import Markup

    page = {**context, "csp": content_security_policy(), "print_script": Markup(PRINT_SCRIPT)}
    return str(environment().get_template(TEMPLATE).render(**page))


def write(path: Path, context: dict[str, Any]) -> Path:
    path.write_text(render(context), encoding="utf-8")
    return path
