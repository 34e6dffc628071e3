"""A student's markup made safe for an instructor's or TA's browser: markdown, raw cells, attachments, outputs.

Formgrader's submission page and nbgrader's feedback page render the autograded notebook with nbconvert: markdown
through `markdown2html` (raw HTML passes through it as it is), so `<img onerror>`, `<details ontoggle>`,
`<iframe srcdoc>` or `[x](javascript:...)` in a student's cell would run in the instructor's session. Here a cell is
kept byte for byte only where what nbconvert renders from it passes `unsafe_parts`, a strict reader that accepts
only the tags, attributes and URLs of the allow-list below, written in one plain form (double-quoted values, lower
case, balanced): anything it cannot read counts as unsafe, so a parser trick gains nothing. Otherwise the cell
becomes what bleach (an allow-list sanitizer, html5lib's parser) keeps of the rendered HTML, under a note, and
that is rendered and read again; where even that fails, the student's text is shown escaped, as text.

An image loads when the page opens: one from another host would tell that host who opened the notebook and when (a
tracking pixel). Kept as images: inline raster images (attachments) and the student's own files beside the notebook,
named by a plain relative path (formgrader serves them from the student's autograded folder, so the request stays on
the instructor's server and reads that folder only; a relative path cannot leave it: no `..`, no leading `/`, no
`\\`). Any other image is shown as a link to it, which loads nothing until someone clicks it.

Both pages typeset math with MathJax 2 and its Safe extension, which drops `javascript:` links and ids or classes of
the page's own but keeps a `cursor: url(...)` style, loaded as the page opens. The TeX commands that write an HTML
attribute or CSS (`MATHJAX_MARKUP`: `\\href`, `\\class`, `\\cssId`, `\\style`, `\\bbox`, `\\mmlToken`) are unsafe
wherever MathJax may read them (any text: a class can make it read code), and are shown with a full-width backslash,
which MathJax does not read; a macro cannot spell them (MathJax puts a space after a command that an argument follows).

A `Page` holds what one notebook's page adds: the ids its own elements use (off the allow-list for that notebook),
and a bound on the characters rendered, so that no cell or notebook holds up a class (past it: escaped text).
"""

import functools
import html
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import bleach
from bleach.css_sanitizer import CSSSanitizer
from bleach.html5lib_shim import Filter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

__all__ = [
    "Cleaned", "INERT_BACKSLASH", "MATHJAX_MARKUP", "MAX_CELL_CHARS", "NOTE", "Page", "REMOTE_IMAGE",
    "RemoteImagesAsLinks", "inert_math", "render_markdown", "safe_attachments", "safe_markdown", "safe_raw",
    "sanitize_html", "unsafe_parts",
]

# What rendered markdown and an honest student's own HTML use; nothing that runs, loads a page, holds raw text
# (style, textarea, title...) or switches the parser to foreign content (svg, math).
TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol",
    "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td",
    "tfoot", "th", "thead", "tr", "u", "ul", "var",
})
VOID_TAGS = frozenset({"br", "hr", "img"})
COMMON_ATTRIBUTES = frozenset({"class", "id", "title"})
ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "a": frozenset({"href"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "details": frozenset({"open"}),
    "ol": frozenset({"start"}),
    "td": frozenset({"colspan", "rowspan", "style"}),
    "th": frozenset({"colspan", "rowspan", "style"}),
}
URL_ATTRIBUTES = frozenset({"href", "src"})
PROTOCOLS = ("http", "https", "mailto")
# A markdown table's column alignment is the only style kept.
STYLE = re.compile(r"text-align:\s*(left|right|center);?")
# An attachment inlined by nbconvert: raster images only (an SVG can hold script).
RASTER_MIMETYPES = ("image/png", "image/jpeg", "image/gif")
RASTER_DATA_URL = re.compile(r"data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=]*")
BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")

_TAG = re.compile(r'<(/?)([a-z][a-z0-9]*)((?:\s+[a-z][a-z-]*(?:="[^"<]*")?)*)\s*(/?)>')
_ATTRIBUTE = re.compile(r'\s+([a-z][a-z-]*)(?:="([^"<]*)")?')
_SCHEME = re.compile(r"([^/?#]*):")
# A path segment a browser reads as `..` (the URL standard decodes %2e there), or an escaped `/` or `\` that the server
# decodes: either could name a file outside the student's folder.
_OUT_OF_FOLDER = re.compile(r"(^|/)(\.|%2e){2}(/|[?#]|$)|%2f|%5c", re.IGNORECASE)
REMOTE_IMAGE = "an image from outside the notebook's folder"
MATHJAX_MARKUP = re.compile(r"\\(href|class|cssId|style|bbox|mmlToken)(?![A-Za-z])")
INERT_BACKSLASH = "\uff3c"  # FULLWIDTH REVERSE SOLIDUS: reads as a backslash, starts no MathJax command
NOTE = ("attnkit changed this cell so that nothing in it runs or loads in a browser ({removed}); the student's own "
        "text is in the submitted notebook.")
# Past these a cell is not rendered (mistune's time grows with the text) or not given to bleach (html5lib's time grows
# with the square of the nesting): it is shown as escaped text. An honest cell is far below both.
MAX_CELL_CHARS = 100_000
MAX_NOTEBOOK_CHARS = 1_000_000
MAX_CELL_TAGS = 1_000
# Markdown rendered once per process (render_markdown): at most this many cells of at most this many characters, so a
# class of hostile notebooks holds at most 8 MB of their text and its renderings (a few times that): tens of MB.
CACHED_CELLS = 1_024
CACHED_CELL_CHARS = 8_000


@dataclass(frozen=True)
class Cleaned:
    """A cell's text as it is stored for the instructor, and what was taken out of it (empty: kept as it was)."""

    source: str
    removed: tuple[str, ...] = ()


def render_markdown(source: str, attachments: Mapping[str, dict[str, str]] | None = None) -> str:
    """The HTML nbconvert's HTMLExporter.markdown2html makes of a markdown cell (formgrader's and feedback's pages).

    A cell without attachments and of at most CACHED_CELL_CHARS is rendered once per process: in a class most
    markdown cells are the release's own instructions, the same text in every student's notebook.
    """
    if not attachments and len(source) <= CACHED_CELL_CHARS:
        return _rendered_once(source)
    return _rendered(source, attachments)


def _rendered(source: str, attachments: Mapping[str, dict[str, str]] | None) -> str:
    renderer = IPythonRenderer(escape=False, attachments=dict(attachments or {}))
    return str(MarkdownWithMath(renderer=renderer).render(source))


@functools.lru_cache(maxsize=CACHED_CELLS)
def _rendered_once(source: str) -> str:
    """The same text, the same HTML: the rendering is a function of the text alone (an error is not kept)."""
    return _rendered(source, None)


def unsafe_parts(markup: str, reserved_ids: frozenset[str] = frozenset()) -> list[str]:
    """What in `markup` is not plainly on the allow-list (empty when every `<` opens an allowed, balanced tag whose
    id, if any, is none of `reserved_ids`).

    Markup of at most CACHED_CELL_CHARS is read once per process for the same ids, as a cell is rendered once: the
    release's instructions are the same markup in every student's notebook."""
    if len(markup) <= CACHED_CELL_CHARS:
        return list(_unsafe_parts_once(markup, reserved_ids))
    return _unsafe_parts(markup, reserved_ids)


@functools.lru_cache(maxsize=CACHED_CELLS)
def _unsafe_parts_once(markup: str, reserved_ids: frozenset[str]) -> tuple[str, ...]:
    """The same markup and ids, the same parts (a function of them alone; kept as a tuple, handed out as a list)."""
    return tuple(_unsafe_parts(markup, reserved_ids))


def _unsafe_parts(markup: str, reserved_ids: frozenset[str]) -> list[str]:
    found: list[str] = []
    open_tags: list[str] = []
    at = markup.find("<")
    while at != -1:
        tag = _TAG.match(markup, at)
        if tag is None:
            found.append("markup that is not a plain tag")
            break
        closing, name, attributes, _self_closing = tag.groups()
        if name not in TAGS:
            found.append(f"<{name}>")
        elif closing:
            if not open_tags or open_tags.pop() != name:
                found.append(f"an unbalanced </{name}>")
        else:
            found.extend(_unsafe_attributes(name, attributes, reserved_ids))
            if name not in VOID_TAGS:
                open_tags.append(name)
        at = markup.find("<", tag.end())
    if open_tags:
        found.append(f"an unclosed <{open_tags[-1]}>")
    found.extend(f"a MathJax {command} command" for command in _mathjax_markup(markup))  # no backslash: the note
    # that names it is read again
    return found


def _mathjax_markup(markup: str) -> list[str]:
    """The MATHJAX_MARKUP commands in the text of `markup` as a browser gives it to MathJax: tags taken out (text
    split by a tag is read joined, more than MathJax would), character references decoded."""
    return sorted(set(MATHJAX_MARKUP.findall(html.unescape(_TAG.sub("", markup)))))


def inert_math(text: str) -> str:
    """`text` with each MATHJAX_MARKUP command's backslash made INERT_BACKSLASH."""
    return MATHJAX_MARKUP.sub(lambda command: INERT_BACKSLASH + command.group(1), text)


def _unsafe_attributes(tag: str, attributes: str, reserved_ids: frozenset[str]) -> list[str]:
    found = []
    for name, value in _ATTRIBUTE.findall(attributes):
        if name not in COMMON_ATTRIBUTES and name not in ATTRIBUTES.get(tag, ()):
            found.append(f"{name} on <{tag}>")
        elif name == "id" and html.unescape(value) in reserved_ids:
            found.append("an id the page's own elements use")
        elif name in URL_ATTRIBUTES and not _safe_url(html.unescape(value), data_image=tag == "img"):
            found.append(f"a {_scheme(html.unescape(value))}: {name}")
        elif tag == "img" and name == "src" and not _loads_nothing_remote(html.unescape(value)):
            found.append(REMOTE_IMAGE)
        elif name == "style" and not STYLE.fullmatch(html.unescape(value).strip()):
            found.append(f"a style on <{tag}>")
    return found


def _safe_url(url: str, *, data_image: bool = False) -> bool:
    """A relative URL, or http(s)/mailto; an inline raster image where `data_image`. Whitespace or control
    characters anywhere (which browsers drop, e.g. `jav&#x09;ascript:`) make any URL unsafe."""
    if any(char.isspace() or ord(char) < 0x20 or ord(char) == 0x7F for char in url):
        return False
    scheme = _SCHEME.match(url)
    if scheme is None:
        return True
    if scheme.group(1).lower() in PROTOCOLS:
        return True
    return data_image and RASTER_DATA_URL.fullmatch(url) is not None


def _loads_nothing_remote(src: str) -> bool:
    """An image source the page may load: an inline raster image, or a file in the student's own folder by a plain
    relative path (no scheme, no leading `/` or `\\`: a browser reads `//host`, `/\\host` and `\\\\host` as another
    host; no `..` segment or escaped slash). Whitespace and control characters are refused by `_safe_url` first."""
    if RASTER_DATA_URL.fullmatch(src):
        return True
    return (_SCHEME.match(src) is None and not src.startswith("/") and "\\" not in src
            and _OUT_OF_FOLDER.search(src) is None)


def _scheme(url: str) -> str:
    scheme = _SCHEME.match(url)
    return re.sub(r"[^a-z0-9+.-]", "?", scheme.group(1).lower())[:20] if scheme else "bad"


@functools.cache
def _cleaner(reserved_ids: frozenset[str]) -> bleach.Cleaner:
    def allowed(tag: str, name: str, value: str) -> bool:
        if name == "id" and value in reserved_ids:
            return False
        return name in COMMON_ATTRIBUTES or name in ATTRIBUTES.get(tag, ())

    return bleach.Cleaner(tags=TAGS, attributes=allowed, protocols=list(PROTOCOLS), strip=True, strip_comments=True,
                          css_sanitizer=CSSSanitizer(allowed_css_properties=["text-align"]),
                          filters=[RemoteImagesAsLinks])


class RemoteImagesAsLinks(Filter):  # type: ignore[misc] # bleach's vendored html5lib is untyped
    """An html5lib filter (after bleach's): an <img> whose source is not `_loads_nothing_remote` becomes a link to it
    (`image: ALT`), which loads nothing until it is clicked."""

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for token in super().__iter__():
            if token["type"] not in ("StartTag", "EmptyTag") or token["name"] != "img":
                yield token
                continue
            attributes = token["data"]
            src = attributes.get((None, "src"))
            if src is None or (_safe_url(src, data_image=True) and _loads_nothing_remote(src)):
                yield token
                continue
            alt = attributes.get((None, "alt"), "")
            yield {"type": "StartTag", "name": "a", "namespace": token["namespace"], "data": {(None, "href"): src}}
            yield {"type": "Characters", "data": f"image: {alt}" if alt else "image"}
            yield {"type": "EndTag", "name": "a", "namespace": token["namespace"]}


def sanitize_html(markup: str, reserved_ids: frozenset[str] = frozenset()) -> str:
    """`markup` with everything off the allow-list taken out (bleach): tags stripped, their text kept as text."""
    return str(_cleaner(reserved_ids).clean(markup))


def safe_markdown(source: str, attachments: Mapping[str, dict[str, str]] | None = None,
                  page: "Page | None" = None) -> Cleaned:
    """A markdown cell kept as it is where its rendering is safe; otherwise its sanitized rendering, under a note."""
    return _first_safe(source, lambda text: render_markdown(text, attachments), page or Page())


def safe_raw(source: str, page: "Page | None" = None) -> Cleaned:
    """A raw cell (or an HTML output) that a page may insert as it is: kept where safe, otherwise sanitized."""
    return _first_safe(source, lambda text: text, page or Page())


@dataclass
class Page:
    """One notebook's page: the ids its own elements use (formgrader finds a grade's input by its id; a student's
    element with that id would stand in for it), and the characters it may still have rendered (mistune takes about
    20 µs a character at worst: past that, a cell is shown as escaped text unrendered, so no notebook holds up a class).
    """

    reserved_ids: frozenset[str] = frozenset()
    chars_left: int = MAX_NOTEBOOK_CHARS

    def take(self, count: int) -> bool:
        if count > min(self.chars_left, MAX_CELL_CHARS):
            return False
        self.chars_left -= count
        return True


def _first_safe(source: str, render: Callable[[str], str], page: Page) -> Cleaned:
    rendered = None
    if not page.take(len(source)):
        removed = [f"{len(source)} characters, too long to render: shown as text"]
    else:
        try:
            rendered = render(source)
            removed = unsafe_parts(rendered, page.reserved_ids)
        except Exception:  # noqa: BLE001 - nbconvert refuses some markdown (a missing attachment): show the text
            removed = ["markdown nbconvert cannot render"]
        if not removed:
            return Cleaned(source)
    note = f"<p><em>{html.escape(NOTE.format(removed=', '.join(sorted(set(removed)))))}</em></p>\n"
    candidates = []
    # html5lib's time grows with the square of the nesting: a cell with too many tags is shown as text instead.
    if rendered is not None and rendered.count("<") <= MAX_CELL_TAGS:
        candidates.append(note + inert_math(sanitize_html(rendered, page.reserved_ids)) + "\n")
    candidates += [note + "<pre>" + inert_math(html.escape(source)) + "</pre>\n", note]
    # What is stored is rendered again by the page: each candidate must pass as the page will render it.
    for candidate in candidates:
        if not _problems(candidate, render, page.reserved_ids):
            return Cleaned(candidate, tuple(removed))
    raise AssertionError("the note alone did not pass the allow-list")  # pragma: no cover - the note is plain text


def _problems(text: str, render: Callable[[str], str], reserved_ids: frozenset[str]) -> list[str]:
    try:
        return unsafe_parts(render(text), reserved_ids)
    except Exception:  # noqa: BLE001 - whatever nbconvert cannot render is not kept as it is
        return ["markdown nbconvert cannot render"]


def safe_attachments(attachments: object) -> tuple[dict[str, dict[str, str]], list[str]]:
    """Attachments with only base64 raster images kept; (kept, names of what was dropped)."""
    kept: dict[str, dict[str, str]] = {}
    dropped: list[str] = []
    if not isinstance(attachments, Mapping):
        return kept, ([] if attachments is None else ["attachments that are not a mapping"])
    for name, bundle in attachments.items():
        images = {mimetype: data for mimetype, data in (bundle.items() if isinstance(bundle, Mapping) else ())
                  if mimetype in RASTER_MIMETYPES and isinstance(data, str) and BASE64.fullmatch(data)}
        if isinstance(name, str) and images:
            kept[name] = images
        if not isinstance(bundle, Mapping) or len(images) != len(bundle):
            dropped.append(f"attachment {name!r}")
    return kept, dropped
