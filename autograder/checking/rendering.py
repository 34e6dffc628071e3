"""Feedback a student can read: a check's verdict as a message, a compact ✔/✘ table, heatmaps for failed masks.

`check_result` turns a judge's Verdict into the CheckResult every output shows (hidden checks withhold values and
the student's own exception text); `table` and `heatmap_png` are what a notebook cell prints and displays.
"""

import io

from autograder.checking.check_types import FAILED, PASSED, CheckResult
from autograder.checking.compare import largest_difference
from autograder.course import catalog
from autograder.course.exercises import exercise as find_exercise
from autograder.course.misconceptions import MISCONCEPTIONS_BY_ID
from autograder.i18n import pick, render

MARKS = {PASSED: "✔", "failed": "✘", "error": "✘"}
MAX_SHOWN = 6  # values of expected/got printed per public failure


def table(exercise_id, results, lang, *, hidden):
    exercise = find_exercise(exercise_id)
    title = pick(exercise.title, lang)
    score = sum(r.score for r in results)
    max_score = sum(r.max_score for r in results)
    heading = render(catalog.MESSAGES, "heading.hidden" if hidden else "heading.public", lang, {"title": title})
    total = render(catalog.MESSAGES, "heading.score", lang, {"score": score, "max_score": max_score})
    lines = [f"{heading} — {total}"]
    for result in results:
        lines.append(f"  {MARKS.get(result.status, '✘')} {result.message}")
        lines.extend(f"      {detail}" for detail in result.details)
    return "\n".join(lines)


def heatmap_png(expected, got):
    """PNG bytes of expected vs the student's attention weights, side by side (no pyplot global state)."""
    from matplotlib.figure import Figure  # imported only when a picture is needed

    expected, got = _as_matrix(expected), _as_matrix(got)
    figure = Figure(figsize=(7, 3.2))
    for axis_index, (matrix, key) in enumerate(((expected, "label.heatmap_expected"), (got, "label.heatmap_got"))):
        axis = figure.add_subplot(1, 2, axis_index + 1)
        image = axis.imshow(matrix, cmap="viridis", vmin=0.0, vmax=max(1.0, float(matrix.max())))
        # Plot text stays English: matplotlib's default fonts have no CJK glyphs and would warn on stderr.
        axis.set_title(render(catalog.MESSAGES, key, "en"))
        axis.set_xlabel("key")
        axis.set_ylabel("query")
        figure.colorbar(image, ax=axis, fraction=0.046)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=90)
    return buffer.getvalue()


def _as_matrix(tensor):
    """The first 2-D slice of a weight tensor, as floats (bool masks become 0/1)."""
    matrix = tensor.detach().float()
    while matrix.dim() > 2:
        matrix = matrix[0]
    if matrix.dim() == 1:
        matrix = matrix.unsqueeze(0)
    return matrix.nan_to_num(nan=0.0).numpy()


def check_result(check, status, verdict, lang):
    """The CheckResult of `check` with this status and verdict, its message in `lang`."""
    messages = catalog.MESSAGES
    key = verdict.message_key or f"{check.id}.title"
    # A hidden check uses the value-free form of a message when one exists.
    if check.hidden and f"{key}.hidden" in messages:
        key = f"{key}.hidden"
    title = render(messages, f"{check.id}.title", lang)
    fields = dict(verdict.fields)
    if check.hidden and "detail" in fields:
        # The student's own exception text can quote the hidden input (e.g. raise ValueError(repr(x))).
        fields["detail"] = render(messages, "label.detail_withheld", lang)
    message = title if status == PASSED else f"{title}: {render(messages, key, lang, fields)}"
    misconception = verdict.misconception if verdict.misconception in MISCONCEPTIONS_BY_ID else None
    result = CheckResult(
        id=check.id,
        exercise=check.exercise,
        score=float(check.points) if status == PASSED else 0.0,
        max_score=float(check.points),
        status=status,
        misconception=misconception,
        message=message,
        hidden=check.hidden,
    )
    if misconception:
        known = MISCONCEPTIONS_BY_ID[misconception]
        name, hint = pick(known.name, lang), pick(known.hint, lang)
        result.message += f" [{render(messages, 'label.misconception', lang)}: {name}; " \
                          f"{render(messages, 'label.hint', lang)}: {hint}]"
    if not check.hidden and status == FAILED:
        result.details = _public_details(verdict, lang)
        if verdict.heatmap and verdict.expected is not None and verdict.got is not None:
            result.heatmap = (verdict.expected, verdict.got)
    return result


def _public_details(verdict, lang):
    """Input shape, a few expected and actual values and the largest difference: public checks only."""
    messages = catalog.MESSAGES
    lines = []
    if verdict.input_shape is not None:
        lines.append(f"{render(messages, 'label.input_shape', lang)}: {tuple(verdict.input_shape)}")
    expected, got = verdict.expected, verdict.got
    if hasattr(expected, "shape") and hasattr(got, "shape"):
        lines.append(f"{render(messages, 'label.expected', lang)}: {_preview(expected)}")
        lines.append(f"{render(messages, 'label.got', lang)}: {_preview(got)}")
        diff, index = largest_difference(got, expected)
        if index is not None and diff > 0:
            lines.append(render(messages, "label.largest_difference", lang, {"diff": diff, "index": index}))
    return lines


def _preview(tensor):
    flat = tensor.detach().reshape(-1)[:MAX_SHOWN].tolist()
    values = ", ".join(f"{v:.4f}" if isinstance(v, float) else str(v) for v in flat)
    more = ", …" if tensor.numel() > MAX_SHOWN else ""
    return f"shape {tuple(tensor.shape)}: [{values}{more}]"
