"""The pictures of failed public checks (autograder.checking.pictures): SVG drawn without matplotlib, both heatmap
panels on one colour scale, labels in the student's language, a tick per token, and head layouts read from the
outputs themselves; and the details beside them show the real inputs and shapes."""

import ast
import subprocess
import sys
from xml.etree import ElementTree

import pytest
import torch
from mutants import multihead as multihead_mutants

from attnkit import solutions
from autograder.checking.check_types import HeadLayout
from autograder.checking.pictures import (
    MAX_TICKS,
    head_layout_svg,
    heatmap_svg,
    merge_layout,
    split_layout,
    ticks,
    value_sources,
)
from autograder.course.messages import MESSAGES
from autograder.running.runner import run_exercise

SVG = "{http://www.w3.org/2000/svg}"


def parsed(svg: str) -> ElementTree.Element:
    root = ElementTree.fromstring(svg)  # raises on anything not well-formed
    assert root.tag == f"{SVG}svg"
    return root


def panels(root: ElementTree.Element) -> list[ElementTree.Element]:
    return [group for group in root.iter(f"{SVG}g") if group.get("class") == "panel"]


def cell_fills(panel: ElementTree.Element) -> dict[tuple[int, int], str]:
    """{(x, y) of every cell-sized square a rectangle covers: its fill}, rectangles being runs along a row."""
    cells = [rect for rect in panel.iter(f"{SVG}rect") if rect.get("class") == "cell"]
    size = min(int(rect.get("height")) for rect in cells)
    fills = {}
    for rect in cells:
        x, y, width = int(rect.get("x")), int(rect.get("y")), int(rect.get("width"))
        for left in range(x, x + width, size):
            fills[(left, y)] = rect.get("fill")
    return fills


def texts(element: ElementTree.Element, css: str | None = None) -> list[str]:
    return [text.text or "" for text in element.iter(f"{SVG}text") if css is None or text.get("class") == css]


# ---------------------------------------------------------------------------------------------
# the check's path


@pytest.mark.slow
def test_a_failing_check_draws_its_pictures_without_importing_matplotlib():
    """In a fresh process, as a kernel's first check: the heatmap and the head diagram are drawn (counted), each
    shown with its words (never the check's id), and matplotlib never imported."""
    script = """
import sys
import torch
from autograder.checking import pictures
from autograder.running import notebook_runtime
drawn, shown = [], []
for name in ("heatmap_svg", "head_layout_svg"):
    original = getattr(pictures, name)
    def counted(*args, original=original, name=name):
        drawn.append(name)
        return original(*args)
    setattr(pictures, name, counted)
notebook_runtime.show_svg = lambda svg, alt: shown.append(alt)
from autograder import check
check("causal_mask", lambda num_tokens: torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu())
check("split_heads", lambda x, num_heads: x.reshape(x.shape[0], num_heads, x.shape[1], -1))
print(shown)
print(sorted(set(drawn)), "matplotlib" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=True)
    *_, alts, counted = done.stdout.strip().splitlines()
    assert counted == "['head_layout_svg', 'heatmap_svg'] False", done.stdout
    assert "Heatmap of the expected matrix and yours" in alts and "features out of place" in alts, alts
    assert "causal_mask.notes" not in alts and "split_heads." not in alts, alts


# ---------------------------------------------------------------------------------------------
# heatmaps


def test_both_panels_share_one_colour_scale_and_one_legend():
    expected, got = torch.tensor([[0.0, 2.0]]), torch.tensor([[0.0, 1.0]])
    root = parsed(heatmap_svg(expected, got, MESSAGES, "en"))
    left, right = (list(cell_fills(panel).values()) for panel in panels(root))
    assert left[0] == right[0]  # 0 is one colour in both
    assert left[1] != right[1]  # 2 and 1 are not, although each is its panel's largest value
    assert len([group for group in root.iter(f"{SVG}g") if group.get("class") == "legend"]) == 1


def test_the_chinese_picture_carries_the_chinese_titles_and_labels():
    mask = torch.ones(3, 3, dtype=torch.bool).triu(1)
    words = texts(parsed(heatmap_svg(mask, ~mask, MESSAGES, "zh")))
    for key in ("label.heatmap_expected", "label.heatmap_got", "label.heatmap_query", "label.heatmap_key",
                "label.heatmap_hidden", "label.heatmap_visible"):
        assert MESSAGES[key]["zh"] in words, key
    assert MESSAGES["label.heatmap_expected"]["en"] not in words


def test_a_one_by_one_picture_has_one_tick_per_axis():
    root = parsed(heatmap_svg(torch.tensor([[False]]), torch.tensor([[True]]), MESSAGES, "en"))
    for panel in panels(root):
        assert texts(panel, "tick-row") == ["0"] and texts(panel, "tick-column") == ["0"]


def test_ticks_name_every_token_of_a_short_sequence_and_thin_out_on_a_long_one():
    assert ticks(6) == [0, 1, 2, 3, 4, 5]
    assert ticks(1) == [0]
    long = ticks(40)
    assert len(long) <= MAX_TICKS and long[0] == 0 and long[1] - long[0] in (2, 5, 10)
    root = parsed(heatmap_svg(torch.rand(2, 40, 40), torch.rand(2, 40, 40), MESSAGES, "en"))
    for panel in panels(root):
        assert texts(panel, "tick-row") == [str(index) for index in long]


def test_a_bool_mask_is_drawn_as_hidden_and_visible_and_non_finite_values_get_their_own_swatch():
    mask = torch.ones(4, 4, dtype=torch.bool).triu(1)
    fills = set(cell_fills(panels(parsed(heatmap_svg(mask, mask, MESSAGES, "en")))[0]).values())
    assert len(fills) == 2
    scores = torch.zeros(3, 3).masked_fill(torch.ones(3, 3, dtype=torch.bool).triu(1), float("-inf"))
    words = texts(parsed(heatmap_svg(scores, scores.nan_to_num(neginf=0.0), MESSAGES, "en")))
    assert MESSAGES["label.heatmap_not_finite"]["en"] in words


# ---------------------------------------------------------------------------------------------
# head layouts


def split_without_transpose(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.view(b, num_heads, num_tokens, d_out // num_heads)


def test_the_head_diagram_of_a_split_without_transpose_shows_where_its_features_landed():
    (result,) = [r for r in run_exercise("split_heads", {"split_heads": split_without_transpose},
                                         include_hidden=False, lang="en") if r.id == "split_heads.notes"]
    layout = result.head_layout
    assert layout is not None
    # The first notes case: an arange (2, 6, 4) input and 2 heads of 2 features.
    num_tokens, d_out, head_dim = 6, 4, 2
    assert layout.expected == tuple(tuple((token, column // head_dim) for column in range(d_out))
                                    for token in range(num_tokens))
    # view without transpose: output (head h, row t, feature d) is input element h*T*hd + t*hd + d of example 0.
    received = []
    for row in range(num_tokens):
        line = []
        for column in range(d_out):
            flat = (column // head_dim) * num_tokens * head_dim + row * head_dim + column % head_dim
            line.append((flat // d_out, flat % d_out // head_dim))
        received.append(tuple(line))
    assert layout.received == tuple(received)
    root = parsed(head_layout_svg(layout, MESSAGES, "zh"))
    assert MESSAGES["label.heatmap_got"]["zh"] in texts(root)
    assert [rect for rect in root.iter(f"{SVG}rect") if rect.get("class") == "misplaced"]


def test_the_expected_layout_is_the_reference_and_a_correct_split_has_none_to_show():
    x = torch.randn(2, 5, 6)
    reference = solutions.split_heads(x, 3)
    layout = split_layout(x, reference, reference, 3)
    assert layout is not None and layout.received == layout.expected
    assert layout.expected == tuple(tuple((token, column // 2) for column in range(6)) for token in range(5))
    results = run_exercise("split_heads", {"split_heads": solutions.split_heads}, include_hidden=False, lang="en")
    assert all(result.head_layout is None for result in results)


def test_a_merge_without_transpose_reads_its_heads_from_the_output():
    x = torch.randn(1, 2, 3, 2)  # (b, num_heads, num_tokens, head_dim)
    got = x.reshape(1, 3, 4)
    layout = merge_layout(x, solutions.merge_heads(x), got)
    assert layout is not None
    assert layout.expected == tuple(tuple((token, column // 2) for column in range(4)) for token in range(3))
    # memory order (head, token, feature) read as (token, features): row t holds blocks 2t and 2t+1 of it
    assert layout.received == tuple(tuple(divmod(2 * token + column // 2, 3)[::-1] for column in range(4))
                                    for token in range(3))


def test_merged_heads_of_a_module_are_matched_block_by_block():
    results = run_exercise("multi_head_attention", {"MultiHeadAttention": multihead_mutants.MHAMergeWithoutTranspose},
                           include_hidden=False, lang="en")
    (notes,) = [result for result in results if result.id == "multi_head_attention.notes"]
    layout = notes.head_layout
    assert layout is not None and layout.head_dim == 1  # the notes' d_out=2 over 2 heads
    num_tokens, num_heads = 6, 2
    # context (b, H, T, hd) viewed as (b, T, H*hd): token t's slot j holds block t*H + j of (head, token) order
    assert layout.received == tuple(tuple(divmod(token * num_heads + slot, num_tokens)[::-1]
                                          for slot in range(num_heads)) for token in range(num_tokens))


def test_a_value_found_twice_in_the_input_draws_no_layout():
    assert value_sources(torch.zeros(2), torch.zeros(3)) is None
    x = torch.zeros(1, 2, 4)
    assert split_layout(x, solutions.split_heads(x, 2), split_without_transpose(x, 2), 2) is None


def test_a_value_from_nowhere_is_drawn_as_unknown():
    layout = HeadLayout(1, (((0, 0), (0, 1)),), (((0, 0), None),))
    root = parsed(head_layout_svg(layout, MESSAGES, "en"))
    assert "?" in texts(root) and MESSAGES["label.picture_unknown"]["en"] in texts(root)


# ---------------------------------------------------------------------------------------------
# details


def test_causal_mask_details_name_its_integer_input():
    def with_diagonal(num_tokens):
        return torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu()

    for lang, line in (("en", "input: num_tokens = 6"), ("zh", "输入：num_tokens = 6")):
        result = run_exercise("causal_mask", {"causal_mask": with_diagonal}, include_hidden=False, lang=lang)[0]
        assert result.id == "causal_mask.notes" and line in result.details, result.details
        assert not [detail for detail in result.details if "(6,)" in detail]


def test_padding_details_show_the_whole_output_shapes():
    results = run_exercise("padding_mask", {"MultiHeadAttention": multihead_mutants.MHAPaddingFilledWithZero},
                           include_hidden=False, lang="en")
    (example,) = [result for result in results if result.id == "padding_mask.example"]
    shapes = [detail for detail in example.details if detail.startswith(("expected", "got"))]
    assert len(shapes) == 2 and all("shape (2, 6, 2)" in detail for detail in shapes), example.details
    difference = next(detail for detail in example.details if detail.startswith("largest difference"))
    assert difference.endswith(")") and difference.count(",") == 2  # an index of the (2, 6, 2) output


def test_the_student_kit_ships_the_pictures_and_nothing_that_imports_matplotlib():
    from autograder.course import catalog
    from autograder.course.exercises import EXERCISES
    from autograder.integrations.student_kit.build import SOURCE_ROOT, kit_pyproject, shipped_modules

    public = [check for exercise in EXERCISES for check in catalog.checks_of(exercise.id, include_hidden=False)]
    shipped = shipped_modules(public)
    assert "checking/pictures.py" in shipped
    imported = set()
    for path in shipped:
        for node in ast.walk(ast.parse((SOURCE_ROOT / path).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.split(".")[0])
    assert "torch" in imported and "matplotlib" not in imported
    assert "matplotlib" not in kit_pyproject()


def test_a_hidden_check_draws_no_head_layout():
    results = run_exercise("split_heads", {"split_heads": split_without_transpose}, lang="en")
    hidden = [result for result in results if result.hidden and result.status != "passed"]
    assert hidden and all(result.head_layout is None and result.heatmap is None for result in hidden)


# ---------------------------------------------------------------------------------------------
# words for where a picture cannot show


def test_a_heatmap_says_in_words_which_matrices_their_size_and_where_they_differ():
    expected = torch.softmax(torch.arange(24.0).reshape(2, 3, 4), dim=-1)
    got = expected.clone()
    got[0, 2, 1] += 0.5
    got[0, 0, 3] += 0.25
    for lang, words in (("en", ["expected matrix and yours", "x[0, :, :]", "(2, 3, 4)", "2 of 12 cells",
                                "row 2, column 1"]),
                        ("zh", ["期望的矩阵和你的结果", "x[0, :, :]", "12 个格子中有 2 个不同", "第 2 行、第 1 列"])):
        svg = heatmap_svg(expected, got, MESSAGES, lang)
        root = parsed(svg)
        alt = root.get("aria-label")
        assert alt == root.find(f"{SVG}title").text and all(word in alt for word in words), alt
    same = parsed(heatmap_svg(expected, expected, MESSAGES, "en")).get("aria-label")
    assert "the cells shown are equal" in same
    wrong_shape = parsed(heatmap_svg(expected, torch.zeros(2, 4, 3), MESSAGES, "en")).get("aria-label")
    assert "yours is (2, 4, 3) where (2, 3, 4) is expected" in wrong_shape


def test_a_head_layout_says_how_many_features_are_out_of_place():
    layout = HeadLayout(1, (((0, 0), (0, 1)),), (((0, 1), (0, 1)),))
    alt = parsed(head_layout_svg(layout, MESSAGES, "en")).get("aria-label")
    assert "1 tokens, 2 features each" in alt and "1 of 2 features out of place" in alt, alt


def test_nbgraders_graded_cell_gives_each_picture_its_words_not_the_check_id():
    import autograder.integrations.nbgrader_sandbox as sandbox  # its test_cell_outputs is no test of this file

    def with_diagonal(num_tokens):
        return torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu()

    results = run_exercise("causal_mask", {"causal_mask": with_diagonal}, include_hidden=False, lang="en")
    outputs = sandbox.test_cell_outputs(sandbox.GradedCell("causal_mask", tuple(results)), "en")
    plain = [output.data["text/plain"] for output in outputs if output.output_type == "display_data"]
    assert plain and all("Heatmap of the expected matrix and yours" in text for text in plain), plain
    assert not any(result.id in text for result in results for text in plain)
