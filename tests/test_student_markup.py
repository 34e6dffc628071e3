"""The student's markup, made safe for an instructor's browser (autograder/integrations/student_markup.py and
nbgrader_markup.py): each attack string loses what would run, each honest construct is kept byte for byte, and the
course's own notebooks are not changed at all. The pages themselves are driven in Chromium by
tests/test_student_markup_browser.py; here the HTML nbconvert renders is read with the standard library's parser,
not with the code's own reader.
"""

import base64
import copy
import html
import posixpath
import re
import urllib.parse
from html.parser import HTMLParser

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.integrations import nbgrader_markup, student_markup
from autograder.integrations.nbgrader_markup import SanitizeStudentMarkup, sanitize_notebook
from autograder.integrations.student_markup import render_markdown, safe_markdown, safe_raw, unsafe_parts

# What a student with a weekend tries in a markdown cell (the strings and more).
ATTACKS = {
    "img onerror": "<img src=x onerror=alert(1)>",
    "details ontoggle": "<details open ontoggle=alert(1)><summary>s</summary></details>",
    "iframe srcdoc": "<iframe srcdoc='<script>alert(1)</script>'></iframe>",
    "javascript link": "[click](javascript:alert(1))",
    "javascript link, mixed case": "[click](JaVaScRiPt:alert(1))",
    "javascript link, spaces": "[click](  javascript:alert(1))",
    "javascript reference link": "[click][r]\n\n[r]: javascript:alert(1)",
    "autolink": "<javascript:alert(1)>",
    "tab entity in the scheme": '<a href="jav&#x09;ascript:alert(1)">y</a>',
    "decimal entity scheme": '<a href="&#106;avascript:alert(1)">z</a>',
    "newline in the scheme": '<a href="java\nscript:alert(1)">n</a>',
    "svg animate onbegin": "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
    "svg script": "<svg><script>alert(1)</script></svg>",
    "math mutation": "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "noscript mutation": '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    "img srcset": "<img srcset='x 1x' onerror=alert(1)>",
    "meta refresh": '<meta http-equiv="refresh" content="0;url=https://example.invalid/">',
    "form action": '<form action="https://example.invalid/"><button>go</button></form>',
    "button formaction": '<button formaction="javascript:alert(1)">go</button>',
    "data link": "<a href='data:text/html,<script>alert(1)</script>'>d</a>",
    "svg data image": "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
    "unknown element with onfocus": "<x<y tabindex=1 autofocus onfocus=alert(1)>",
    "custom element onfocus": "<xss tabindex=1 autofocus onfocus=alert(1)>x</xss>",
    "uppercase handler": "<IMG SRC=x ONERROR=alert(1)>",
    "script": "<script>alert(1)</script>",
    "style": "<style>body{display:none}</style>",
    "style attribute": '<p style="position:fixed;top:0;left:0;width:100%;height:100%">cover</p>',
    "link stylesheet": "<link rel=stylesheet href=https://example.invalid/x.css>",
    "base href": "<base href=https://example.invalid/>",
    "object": "<object data=https://example.invalid/x></object>",
    "embed": "<embed src=https://example.invalid/x>",
    "unclosed comment": "<!--\neverything after this would vanish from the page",
    "closing the page's containers": "</div></div></div><b>x</b>",
    "template": "<template><img src=x onerror=alert(1)></template>",
    "textarea breakout": "<textarea></textarea><img src=x onerror=alert(1)>",
    "vbscript": '<a href="vbscript:msgbox(1)">v</a>',
    # Images that load from another host as the page opens (a tracking pixel: who graded, and when).
    "remote markdown image": "![x](https://attacker.example/pixel.png)",
    "remote image, upper-case scheme": "![x](HTTPS://attacker.example/pixel.png)",
    "remote image, no slashes": "![x](https:attacker.example/pixel.png)",
    "protocol-relative image": '<img src="//attacker.example/x">',
    "backslash host image": '<img src="\\\\attacker.example\\x">',
    "slash-backslash host image": '<img src="/\\attacker.example/x">',
    "entity-encoded protocol-relative image": '<img src="&#47;&#47;attacker.example/x">',
    "remote reference image": "![x][r]\n\n[r]: https://attacker.example/pixel.png",
    "image from the server's root": '<img src="/api/contents">',
    "image out of the folder": "![x](../../../logout)",
    "image out of the folder, %2e": "![x](%2e%2e/%2E%2e/logout)",
    "image out of the folder, %2f": "![x](..%2f..%2fsource%2fx.png)",
    "remote srcset": '<img srcset="https://attacker.example/x 1x">',
    "css url in a style": '<p style="background:url(https://attacker.example/x)">p</p>',
    "remote image in a table cell": '<table><tr><td><img src="https://attacker.example/x"></td></tr></table>',
    # MathJax (both pages load it) writes these into attributes and CSS; its Safe extension keeps `cursor: url()`.
    "mathjax javascript href": "$\\href{javascript:alert(1)}{click}$",
    "mathjax style cursor": "$\\style{cursor:url(https://attacker.example/c),auto}{x}$",
    "mathjax bbox cursor": "$$\\bbox[cursor:url(https://attacker.example/c)]{x}$$",
    "mathjax mmlToken style": '$\\mmlToken{mi}[style="cursor:url(https://attacker.example/c)"]{x}$',
    "mathjax cssId of a grade": "\\(\\cssId{test_mask}{x}\\)",
    "mathjax class": "\\[\\class{x}{y}\\]",
    "mathjax in an environment": "\\begin{equation}\\style{cursor:url(//attacker.example/c)}{x}\\end{equation}",
    "mathjax in code, read by class": '<code class="tex2jax_process">$\\style{cursor:url(//a.example/c)}{x}$</code>',
    "mathjax entity-encoded": "<p>&#92;(&#92;style{cursor:url(//attacker.example/c)}{x}&#92;)</p>",
}
# Tags and attributes the stored cell must not render to, whatever parser reads it.
FORBIDDEN_TAGS = {"script", "iframe", "svg", "math", "style", "link", "meta", "base", "form", "object", "embed",
                  "button", "noscript", "template", "textarea", "input", "animate", "frame", "frameset"}
GOOD_SCHEMES = ("http", "https", "mailto")
# Where formgrader shows a submission: an image is the student's own only where it resolves below this folder.
FORMGRADER_PAGE = "http://127.0.0.1:5000/formgrader/submissions/1/"

# An honest student's markdown: each is stored exactly as written.
HONEST = {
    "headings and emphasis": "# Attention\n\n## Step 1\n\nSome *emphasis*, **bold** and `code`.",
    "lists": "- one\n- two\n  - nested\n\n1. first\n2. second",
    "code block with <": '```python\nif a < b and c > d:\n    print("<b>not html</b>")\n```',
    "inline math with <": "the score $q \\cdot k^T / \\sqrt{d} < 1$ for small $d$",
    "display math": "$$\\mathrm{softmax}(x)_i = \\frac{e^{x_i}}{\\sum_j e^{x_j}}$$",
    "table with alignment": "| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |",
    "relative image": "![the heatmap](figures/heatmap.png)",
    "https link": "see [the paper](https://arxiv.org/abs/1706.03762)",
    "image beside the notebook": '![my plot](figures/my%20plot.png?v=2) and <img src="./fig.png" alt="f">',
    "inline png": "![dot](data:image/png;base64,iVBORw0KGgo=)",
    "mail link": "[write to me](mailto:student@example.org)",
    "blockquote": "> Attention is all you need.",
    "inline html": 'x<sub>1</sub>, x<sup>2</sup>, a<br>b, <img src="fig.png" width="300">',
    "entities": "a &lt; b &amp;&amp; c &gt; d, &copy; 2026",
    "details": "<details><summary>my notes</summary>\n\nhidden *text*\n\n</details>",
    "anchor link": "[see above](#Attention)",
    "math with a macro and colour": "$\\newcommand{\\R}{\\mathbb{R}} x \\in \\R^{d}$, $\\color{red}{q}$, "
                                    "$\\hrefx$ \\(\\textstyle y\\)",
}


class Reader(HTMLParser):
    """Every start tag and attribute of a page fragment, as Python's own HTML parser reads it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.comments: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {name: value or "" for name, value in attrs}))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        self.text.append(data)


def dangers(rendered):
    """What in rendered HTML could run or load something, read independently of student_markup's reader."""
    reader = Reader()
    reader.feed(rendered)
    reader.close()
    found = [f"<!--{text}-->" for text in reader.comments]
    # MathJax's commands that write an attribute or CSS, in the page's text as the browser decodes it (read joined)
    found += [f"MathJax {command}" for command in re.findall(r"\\(?:href|class|cssId|style|bbox|mmlToken)(?![a-zA-Z])",
                                                             "".join(reader.text))]
    for tag, attributes in reader.tags:
        if tag in FORBIDDEN_TAGS or "<" in tag:
            found.append(f"<{tag}>")
        for name, value in attributes.items():
            if name.startswith("on") or name in ("srcdoc", "srcset", "formaction", "action"):
                found.append(f"{name} on <{tag}>")
            if name == "style" and not re.fullmatch(r"text-align:\s*(left|right|center);?", value.strip()):
                found.append(f"a style on <{tag}>")
            if name in ("href", "src"):
                url = re.sub(r"[\x00-\x20]", "", value).lower()
                scheme = re.match(r"([a-z][a-z0-9+.-]*:)?", url).group(0).rstrip(":")  # as browsers read a scheme
                if scheme and scheme not in GOOD_SCHEMES and not re.fullmatch(r"data:image/(png|jpeg|gif);base64,.*",
                                                                               url):
                    found.append(f"{scheme}: {name}")
            if tag == "img" and name == "src" and loads_from_elsewhere(value):
                found.append(f"an image from elsewhere: {value}")
    return found


def loads_from_elsewhere(src):
    """Whether a browser on formgrader's page would load this image from outside the submission's folder: resolved
    as the URL standard does (tabs and newlines dropped, `\\` read as `/`, `%2e` as a dot in `..`), then as the
    server decodes the path."""
    if re.fullmatch(r"data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=]*", src):
        return False
    if src == "":  # an empty src fetches nothing (HTML: the image fails at once, no request is made)
        return False
    url = re.sub(r"[\t\n\r]", "", src).strip("".join(map(chr, range(0x21)))).replace("\\", "/")
    resolved = urllib.parse.urlsplit(urllib.parse.urljoin(FORMGRADER_PAGE, re.sub("%2e", ".", url, flags=re.I)))
    path = posixpath.normpath(urllib.parse.unquote(resolved.path))
    page = urllib.parse.urlsplit(FORMGRADER_PAGE)
    return (resolved.scheme, resolved.netloc) != (page.scheme, page.netloc) or not path.startswith(page.path)


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_each_attack_loses_what_would_run(attack):
    assert dangers(render_markdown(attack)) or attack in (ATTACKS["unclosed comment"],
                                                         ATTACKS["closing the page's containers"]) \
        or unsafe_parts(render_markdown(attack)), "the attack string is harmless: it tests nothing"
    cleaned = safe_markdown(attack)
    assert cleaned.removed, f"nothing removed from {attack!r}"
    rendered = render_markdown(cleaned.source)
    assert not dangers(rendered), rendered
    assert not unsafe_parts(rendered), rendered
    assert rendered.startswith("<p><em>attnkit changed this cell"), rendered
    assert safe_markdown(cleaned.source).source == cleaned.source  # stored once, kept as it is from then on


@pytest.mark.parametrize("attack", ATTACKS.values(), ids=ATTACKS.keys())
def test_each_attack_in_a_raw_cell_or_html_output_is_cleaned(attack):
    cleaned = safe_raw(attack)
    assert cleaned.removed or not dangers(attack)
    assert not dangers(cleaned.source) and not unsafe_parts(cleaned.source), cleaned.source


@pytest.mark.parametrize("honest", HONEST.values(), ids=HONEST.keys())
def test_honest_markdown_is_kept_as_written(honest):
    cleaned = safe_markdown(honest)
    assert cleaned.removed == ()
    assert cleaned.source == honest


def test_honest_markdown_renders_what_it_says():
    rendered = render_markdown("\n\n".join(HONEST.values()))
    for piece in ("<h1", "<li>nested</li>", "<table>", 'style="text-align:right"', "$q \\cdot k^T / \\sqrt{d} &lt; 1$",
                  '<img src="figures/heatmap.png" alt="the heatmap"', 'href="https://arxiv.org/abs/1706.03762"',
                  "<blockquote>", "<sub>1</sub>", "&lt;b&gt;not html&lt;/b&gt;", "<details><summary>my notes"):
        assert piece in rendered, piece


def test_a_cell_that_is_mostly_honest_keeps_its_honest_part():
    cleaned = safe_markdown("# My answer\n\nThe mask hides the future.<img src=x onerror=alert(1)>\n\n- a\n- b")
    rendered = render_markdown(cleaned.source)
    assert "My answer" in rendered and "The mask hides the future." in rendered and "<li>a</li>" in rendered
    assert "onerror" not in rendered and cleaned.removed


def test_a_remote_image_is_shown_as_a_link_that_loads_nothing_and_the_students_own_image_stays():
    cleaned = safe_markdown("My plot: ![the pixel](https://attacker.example/pixel.png), and mine: "
                            "![mine](figures/mine.png)\n\n<img src=\"//attacker.example/x\">")
    reader = Reader()
    reader.feed(render_markdown(cleaned.source))
    assert [attributes["src"] for tag, attributes in reader.tags if tag == "img"] == ["figures/mine.png"]
    assert [attributes["href"] for tag, attributes in reader.tags if tag == "a"] == [
        "https://attacker.example/pixel.png", "//attacker.example/x"]
    assert "image: the pixel" in cleaned.source and "My plot:" in cleaned.source and "and mine:" in cleaned.source
    assert set(cleaned.removed) == {student_markup.REMOTE_IMAGE}


def png(width=1):
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(width)).decode()


SVG = base64.b64encode(b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>')


def test_attachments_keep_raster_images_only():
    cell = nbformat.v4.new_markdown_cell("![a](attachment:a.png) ![b](attachment:b.svg)")
    cell.attachments = {"a.png": {"image/png": png()}, "b.svg": {"image/svg+xml": SVG.decode()},
                        "both": {"image/svg+xml": SVG.decode(), "image/png": png(2)}}
    removed = nbgrader_markup.sanitize_cell(cell)
    assert set(cell.attachments) == {"a.png", "both"} and cell.attachments["both"] == {"image/png": png(2)}
    assert "attachment 'b.svg'" in removed and "attachment 'both'" in removed
    # the reference to the dropped SVG cannot be rendered: the cell is shown as text, never as the SVG
    rendered = render_markdown(cell.source, cell.attachments)
    assert "svg" not in rendered.replace("b.svg", "") and not unsafe_parts(rendered) and not dangers(rendered)


def test_an_inline_png_attachment_renders_and_is_kept():
    cell = nbformat.v4.new_markdown_cell("![plot](attachment:plot.png)")
    cell.attachments = {"plot.png": {"image/png": png()}}
    before = copy.deepcopy(cell)
    assert nbgrader_markup.sanitize_cell(cell) == [] and cell == before
    assert f'src="data:image/png;base64,{png()}"' in render_markdown(cell.source, cell.attachments)


def test_an_svg_labelled_png_stays_an_image():
    """An attachment that says image/png holds an SVG: nbconvert shows it in an <img>, where no script runs."""
    cell = nbformat.v4.new_markdown_cell("![x](attachment:x.png)")
    cell.attachments = {"x.png": {"image/png": SVG.decode()}}
    nbgrader_markup.sanitize_cell(cell)
    rendered = render_markdown(cell.source, cell.attachments)
    assert not dangers(rendered) and re.search(r'<img src="data:image/png;base64,[^"]*"', rendered)


def test_raw_html_cell_is_cleaned():
    cell = nbformat.v4.new_raw_cell('<b>ok</b><img src=x onerror=alert(1)><script>alert(2)</script>',
                                    metadata={"raw_mimetype": "text/html"})
    removed = nbgrader_markup.sanitize_cell(cell)
    assert removed and not dangers(cell.source) and "<b>ok</b>" in cell.source


def test_student_outputs_lose_script_and_keep_attnkits_own():
    ours = [nbformat.v4.new_output("stream", name="stdout", text="<script>alert(1)</script>\n"),
            nbformat.v4.new_output("display_data", data={"image/svg+xml": "<svg></svg>", "text/plain": "heatmap"}),
            nbformat.v4.new_output("execute_result", data={"text/plain": "3.0"}, execution_count=1),
            nbformat.v4.new_output("error", ename="NameError", evalue="<img src=x onerror=alert(1)>",
                                   traceback=["<b>x</b>"])]
    theirs = [nbformat.v4.new_output("display_data", data={
        "text/html": "<p>table</p><img src=x onerror=alert(1)>", "application/javascript": "alert(1)",
        "text/markdown": "[x](javascript:alert(1))", "application/vnd.jupyter.widget-view+json": {"model_id": "1"},
        "text/latex": "$x$", "text/plain": "ok"}, metadata={"text/html": {"isolated": True}})]
    cell = nbformat.v4.new_code_cell("x", outputs=copy.deepcopy(ours) + theirs)
    removed = nbgrader_markup.sanitize_cell(cell)
    assert cell.outputs[:4] == ours  # attnkit's sandbox outputs (stdout text, SVG heatmap, points, error) as written
    data = cell.outputs[4].data
    assert set(data) == {"text/html", "text/markdown", "text/plain"}
    assert not dangers(data["text/html"]) and "<p>table</p>" in data["text/html"]
    assert not dangers(render_markdown(data["text/markdown"]))
    assert cell.outputs[4].metadata == {}
    assert "a application/javascript output" in removed


def test_metadata_the_pages_print_is_plain():
    nb = nbformat.v4.new_notebook(metadata={
        "title": '</title><script>alert(1)</script>', "widgets": {"application/vnd.jupyter.widget-state+json": {}},
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell("x")]
    nb.cells[0].metadata = nbformat.from_dict({  # as json.load gives it: nbformat would refuse to build it
        "tags": ["ok-tag", '" onmouseover="alert(1)', 3],
        "jupyter": {"source_hidden": "<b>x</b>", "outputs_hidden": True},
        "nbgrader": {"grade_id": '"><img src=x onerror=alert(1)>', "grade": False, "solution": True}})
    removed = sanitize_notebook(nb)
    assert "title" not in nb.metadata and "widgets" not in nb.metadata and nb.metadata.kernelspec.name == "python3"
    metadata = nb.cells[0].metadata
    assert metadata.tags == ["ok-tag"] and metadata.jupyter == {"outputs_hidden": True}
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", metadata.nbgrader.grade_id)
    assert len(removed) == 5, removed


def test_the_courses_own_notebooks_are_not_changed(repo_root):
    for path in sorted((repo_root / "release").glob("*/*.ipynb")) + sorted((repo_root / "source").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        before = copy.deepcopy(nb)
        assert sanitize_notebook(nb) == [], path
        assert nb == before, path


def test_the_preprocessor_runs_in_nbconverts_html_export():
    """What nbgrader's pages do with the notebook: nbconvert's HTMLExporter (classic template) after the
    preprocessor. Without it the same export carries the attacks (the control)."""
    from nbconvert import HTMLExporter

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(attack) for attack in ATTACKS.values()]
    nb.cells.append(nbformat.v4.new_markdown_cell(HONEST["headings and emphasis"]))
    def export(notebook, sanitize):
        exporter = HTMLExporter(template_name="classic")
        if sanitize:
            exporter.register_preprocessor(SanitizeStudentMarkup, enabled=True)
        page, _ = exporter.from_notebook_node(copy.deepcopy(notebook))
        return page[page.index("<body"):]

    honest_only = nbformat.v4.new_notebook(cells=nb.cells[-1:])
    template_own = dangers(export(honest_only, sanitize=False))  # the page's own scripts
    plain, body = export(nb, sanitize=False), export(nb, sanitize=True)
    assert len(dangers(plain)) > len(template_own) + 20  # the control: nbconvert alone keeps the attacks
    assert dangers(body) == template_own
    assert '<h1 id="Attention">' in body and "<em>emphasis</em>" in body


def test_the_course_config_sanitizes_autograde_and_feedback(repo_root):
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(repo_root)).load_config()
    assert list(config.Autograde.autograde_preprocessors)[-1] == nbgrader_markup.THIS
    assert nbgrader_markup.THIS in list(config.GenerateFeedback.preprocessors)
    assert student_markup.NOTE.startswith("attnkit changed")


def test_a_cell_too_long_or_too_deep_is_shown_as_text_without_rendering(monkeypatch):
    """mistune's time grows with the text and html5lib's with the square of the nesting (20,000 nested <div> took a
    minute): past the caps a cell is shown escaped, and nothing slow is called."""
    deep = "<div>" * 20_000
    monkeypatch.setattr(student_markup, "sanitize_html", lambda markup: pytest.fail("bleach called on a deep cell"))
    cleaned = safe_markdown(deep)
    assert cleaned.source.endswith("<pre>" + html.escape(deep) + "</pre>\n") and cleaned.removed

    long = "x" * (student_markup.MAX_CELL_CHARS + 1)
    real_render = student_markup.render_markdown

    def render_only_the_note(text, *args):  # the stored text (note and escaped cell) is checked as the page renders it
        if not text.startswith("<p><em>attnkit changed"):
            pytest.fail("the long cell itself was rendered")
        return real_render(text, *args)

    monkeypatch.setattr(student_markup, "render_markdown", render_only_the_note)
    cleaned = safe_markdown(long + "<script>alert(1)</script>")
    assert "&lt;script&gt;" in cleaned.source and "too long to render" in cleaned.source


def test_a_notebook_spends_a_bounded_budget_on_rendering():
    cell = "# heading\n\n" + "word " * 19_000
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(cell) for _ in range(12)])
    removed = sanitize_notebook(nb)
    kept = [c.source == cell for c in nb.cells]
    assert kept == [True] * 10 + [False] * 2  # 10 cells of ~95,000 characters fill the 1,000,000
    assert all("too long to render" in entry for entry in removed) and len(removed) == 2


ATOMS = ["<", ">", '"', "'", "`", "```", "&#x09;", "&#106;", "&lt;", "javascript:", "data:", "vbscript:", ":", "[",
         "](", ")", "\n", "\n\n", "    ", "<a href=", "<img src=", " onerror=", " onfocus=alert(1) autofocus", "<svg>",
         "<math>", "<!--", "-->", "$", "$$", "*", "_", "<pre>", "</pre>", "<p>", "</p>", "<details open>", "<style>",
         "</style>", "<script>", "</script>", "<table>", "<td>", "</div>", "x", "alert(1)", "> ", "- ", "# ", "|", "\\",
         "<br>"]


@settings(max_examples=150, deadline=None)
@given(pieces=st.lists(st.sampled_from(ATOMS + list(ATTACKS.values()) + list(HONEST.values())), max_size=12))
def test_whatever_a_student_strings_together_is_stored_safe(pieces):
    source = "".join(pieces)
    cleaned = safe_markdown(source)
    rendered = render_markdown(cleaned.source)
    assert not unsafe_parts(rendered) and not dangers(rendered), (source, rendered)
    assert safe_markdown(cleaned.source).source == cleaned.source  # what is stored stays as it is
    raw = safe_raw(source)
    assert not unsafe_parts(raw.source) and not dangers(raw.source), (source, raw.source)


def test_a_heading_cannot_take_the_id_of_formgraders_own_elements():
    """formgrader finds a grade's score input with $("#" + grade_id): a student's heading named after it (mistune
    gives headings ids) would stand in for the input. Ids the page uses are dropped; other headings keep theirs."""
    grade = nbformat.v4.new_code_cell("grade(...)", metadata={"nbgrader": {"grade": True, "grade_id": "test_mask",
                                                                            "points": 2, "solution": False}})
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# {name}") for name in
                                         ("test_mask", "test_mask-comment", "statusmessage", "My answer")] + [grade])
    assert {"test_mask", "test_mask-comment", "test_mask_extra_credit", "notebook"} <= nbgrader_markup.page_ids(nb)
    removed = sanitize_notebook(nb)
    rendered = [render_markdown(cell.source) for cell in nb.cells[:4]]
    for name, page in zip(("test_mask", "test_mask-comment", "statusmessage"), rendered, strict=False):
        assert f'id="{name}"' not in page and name in page, page
    assert nb.cells[3].source == "# My answer" and 'id="My-answer"' in rendered[3]
    assert len(removed) == 3, removed


def test_a_cell_seen_before_is_rendered_once_and_the_same_and_hostile_or_large_cells_are_not_kept():
    """The release's instructions are in every student's notebook: their rendering is kept (render_markdown), and
    is what rendering anew gives; a cell with attachments or past CACHED_CELL_CHARS is rendered each time."""
    cache = student_markup._rendered_once
    cells = ["# Causal attention\n\nMask the *future* with `triu`.", '<img src=x onerror="alert(1)">',
             "[x](javascript:alert(1))", "a" * student_markup.CACHED_CELL_CHARS]
    for cell in cells:
        first, hits = student_markup.render_markdown(cell), cache.cache_info().hits
        assert student_markup.render_markdown(cell) == first == student_markup._rendered(cell, None)
        assert cache.cache_info().hits == hits + 1
        assert student_markup.safe_markdown(cell) == student_markup.safe_markdown(cell)
    size = cache.cache_info().currsize
    student_markup.render_markdown("b" * (student_markup.CACHED_CELL_CHARS + 1))
    student_markup.render_markdown("![p](attachment:p.png)", {"p.png": {"image/png": "iVBORw0KGgo="}})
    assert cache.cache_info().currsize == size
    assert cache.cache_info().maxsize == student_markup.CACHED_CELLS


def test_the_same_markup_is_read_once_for_the_same_ids_and_each_caller_gets_its_own_list(monkeypatch):
    """The release's instructions are the same markup in every notebook of a class: read once per process, for the
    same reserved ids only (an id reserved on one page is not on another), and a caller's list is its own."""
    markup = '<p id="grade-cell-7" onclick="steal()">the same in every notebook</p>'
    first = unsafe_parts(markup)
    reserved = unsafe_parts(markup, frozenset({"grade-cell-7"}))
    assert first and len(reserved) == len(first) + 1
    monkeypatch.setattr(student_markup, "_TAG", None)  # a second reading of the markup would fail
    assert unsafe_parts(markup) == first and unsafe_parts(markup, frozenset({"grade-cell-7"})) == reserved
    first.append("changed by its caller")
    assert "changed by its caller" not in unsafe_parts(markup)
