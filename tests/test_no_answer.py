"""No text a student can read hands out the answer: no title, message, misconception name or hint, and no
exercise's instructions in the release notebooks, contains a piece of the reference's code (normalised) or one of
its calls with the arguments that make it right.

The pieces come from the reference itself (solutions/), so a new exercise is covered the day it is written. What
the reference's docstrings state (a function's shapes: `(b, num_tokens, num_heads * head_dim)`) is the task, not
its answer, and is left out.
"""

import ast
import inspect
import re
from pathlib import Path

import nbformat

from attnkit import solutions
from autograder.course import catalog

RELEASE = Path(__file__).resolve().parents[1] / "release" / "attention"
SHORTEST_PIECE = 9  # normalised characters: shorter pieces (`x.T`, `dim=0`) are vocabulary, not answers
PREFIXES = re.compile(r"\b(?:torch|self|nn|F|np)\.")


def normalised(code):
    """Code as a comparable string: no spaces, quotes or backticks, no `torch.`/`self.`/`nn.` prefixes."""
    code = PREFIXES.sub("", code)
    return re.sub(r"[\s`'\"]", "", code)


def _reference_trees():
    for module in {inspect.getmodule(getattr(solutions, name)) for name in solutions.__all__}:
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.FunctionDef):
                yield from node.body


def _is_vocabulary(node):
    """A call of an exercise's own function (`split_heads(x, num_heads)`) states the task, and a call without
    arguments (`torch.no_grad()`, `.parameters()`) names an API: neither is an answer."""
    if not isinstance(node, ast.Call):
        return False
    own = isinstance(node.func, ast.Name) and node.func.id in solutions.__all__
    return own or not (node.args or node.keywords)


def _contract():
    """The reference's docstrings, normalised: the shapes and names they state are the task, told to the student."""
    for module in {inspect.getmodule(getattr(solutions, name)) for name in solutions.__all__}:
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and (docstring := ast.get_docstring(node)):
                yield normalised(docstring)


def answer_pieces():
    """Every call, operation and subscript of the reference's function bodies that is long enough to be an answer,
    and every call with keyword arguments as (callee, keywords): `triu(..., diagonal=1)` gives the answer away
    however its first arguments are written."""
    pieces, calls = set(), set()
    for statement in _reference_trees():
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring
        for node in ast.walk(statement):
            if isinstance(node, (ast.Call, ast.BinOp, ast.Subscript)) and not _is_vocabulary(node):
                piece = normalised(ast.unparse(node))
                if len(piece) >= SHORTEST_PIECE:
                    pieces.add(piece)
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
                    # the method call without its receiver: `.transpose(1, 2)` on whatever tensor
                    call = ast.Call(ast.Name(node.func.attr), node.args, node.keywords)
                    pieces.add(normalised(ast.unparse(call)))
            if isinstance(node, ast.Call) and node.keywords and isinstance(node.func, (ast.Name, ast.Attribute)):
                callee = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
                keywords = frozenset(normalised(ast.unparse(keyword)) for keyword in node.keywords
                                     if keyword.arg is not None)
                calls.add((callee, keywords))
    contract = list(_contract())
    return {piece for piece in pieces if not any(piece in stated for stated in contract)}, calls


def student_texts():
    """(where, text) for every text a student can be shown, in both languages."""
    for key, text in catalog.MESSAGES.items():
        for lang, words in text.items():
            yield f"{key} [{lang}]", words
    for misconception in catalog.MISCONCEPTIONS:
        for field in ("name", "hint"):
            for lang, words in getattr(misconception, field).items():
                yield f"misconception {misconception.id}.{field} [{lang}]", words


def leaks(text, pieces, calls):
    """The pieces of the answer `text` contains."""
    flat = normalised(text)
    found = [piece for piece in pieces if piece in flat]
    as_written = PREFIXES.sub("", re.sub(r"[`'\"]", "", text))
    for callee, keywords in calls:
        # a call as code writes it, `softmax(`, not a word before a bracket ("stable softmax (6 points)")
        if re.search(rf"(?<![\w.]){re.escape(callee)}\(", as_written) and all(keyword in flat for keyword in keywords):
            found.append(f"{callee}(..., {', '.join(sorted(keywords))})")
    return found


def test_the_scanner_finds_the_reference_in_its_own_code():
    """The scan can fail: the reference's source, written as a hint, is caught."""
    pieces, calls = answer_pieces()
    assert len(pieces) > 50 and calls
    source = inspect.getsource(solutions.n03_causal_attention)
    assert leaks(source, pieces, calls)
    assert leaks("use torch.triu(torch.ones(n, n), diagonal=1)", pieces, calls)
    assert leaks("divide by keys.shape[-1] ** 0.5", pieces, calls)
    assert not leaks("a token may see itself and the tokens before it, never a later one", pieces, calls)


def test_no_student_text_contains_the_answer():
    pieces, calls = answer_pieces()
    texts = list(student_texts())
    assert len(texts) > 500  # every title, message, name and hint, in both languages
    found = [f"{where}: {text} -- gives away {leaked}" for where, text in texts
             if (leaked := leaks(text, pieces, calls))]
    assert not found, "\n".join(found)


def exercise_instructions():
    """(notebook, cell id, text) of every exercise's instructions in the release: the markdown cells from an
    exercise's heading down to its check(...) cell, the generated "What is graded" cells included."""
    for path in sorted(RELEASE.glob("*.ipynb")):
        reading = False
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown" and cell.source.startswith("### Exercise"):
                reading = True
            elif cell.cell_type == "code" and cell.source.lstrip().startswith("from autograder import check"):
                reading = False
            if reading and cell.cell_type == "markdown":
                yield path.name, cell.get("id"), cell.source


def test_no_exercise_text_spells_out_its_answer():
    """An exercise says what to build (shapes, axes, names) and leaves the code to the student."""
    pieces, calls = answer_pieces()
    instructions = list(exercise_instructions())
    assert len(instructions) >= 2 * 17  # an exercise's text and its "What is graded" cell, for every exercise
    found = [f"{notebook} {cell_id}: gives away {leaked}" for notebook, cell_id, text in instructions
             if (leaked := leaks(text, pieces, calls))]
    assert not found, "\n".join(found)


def test_the_instruction_scan_can_fail():
    pieces, calls = answer_pieces()
    assert leaks("3. scores for all heads at once: `queries @ keys.transpose(2, 3)`", pieces, calls)
    assert leaks("return `attn_weights @ values`", pieces, calls)
