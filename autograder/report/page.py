"""The report's HTML page: one self-contained file (styles inline, figures embedded as data URIs,
no scripts or fonts from anywhere), rendered from `templates/report.html` with Jinja2, autoescaped."""
from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any, Optional

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "report.html"
_MARK = re.compile(r"</?mark>")


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
    return Markup(html)


def environment() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(percent=percent, number=number, signed=signed, data_uri=data_uri, highlighted=highlighted)
    return env


def render(context: dict[str, Any]) -> str:
    return str(environment().get_template(TEMPLATE).render(**context))


def write(path: Path, context: dict[str, Any]) -> Path:
    path.write_text(render(context), encoding="utf-8")
    return path
