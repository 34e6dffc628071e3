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


# --- The hint ladder and the messages hold no code, formula, shape to type or expected answer -----------------------
# (issue 34, item 3). Each rule names one way a text can hand out the fix instead of the symptom or the concept. The
# texts are scanned as written, their format fields ({name}, `{line}`) removed: a field is filled at run time with what
# the student's own code did, which is the symptom.

FIELD = re.compile(r"`?\{[^{}]*\}`?")
CODE_RULES = {
    "code span": re.compile(r"`[^`]+`"),
    "keyword argument": re.compile(r"(?<![\w.])[A-Za-z_]\w*=(?!=)\S"),
    "attribute or method": re.compile(r"(?<![\w.\d])\.[A-Za-z_]\w*|\w\.T\b"),
    "call with arguments": re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\((?!\s*\)|s\))[^()（）]*\)"),
    "formula": re.compile(r"√|\*\*|==|!=|\w\s*\*\s*\(?\w|\b\d+\s*/\s*\(|\w\s*@\s*\w|\bsqrt\b"),
    "shape to type": re.compile(r"(?<![\w.])\((?:\s*[\w*+-]+\s*,)+\s*[\w*+-]+\s*\)|\b\w+\s*×\s*\w+"),
    "a formatted count": re.compile(r"\b\d{1,3}(?:,\d{3})+\b"),
}
KIT_CALL = re.compile(r"\bcheck\([^()]*\)")  # the kit's own call that shows a hint: how to ask, not an answer
SHAPE_ELEMENT = re.compile(r"^(?:\d+|[a-z]|[a-z]\w*_\w*)$")  # `b`, `1`, `num_tokens`: a tuple of these is a shape


def _api_calls_of_the_reference():
    """The PyTorch methods the reference calls whose names are code, not English (`masked_fill`, `register_buffer`):
    naming one on the ladder tells the student which call to write. The module's own layers (`out_proj`), which the
    exercise names, and special methods are left out."""
    called, own = set(), set()
    for statement in _reference_trees():
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and "_" in node.func.attr:
                called.add(node.func.attr)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                own.add(node.attr)
    return {name for name in called - own if not name.startswith("__")}


def code_in(text, exercise_calls=frozenset({*solutions.__all__, "check"})):
    """(rule, match) for each piece of code, formula, shape or count in `text`."""
    text = KIT_CALL.sub("", FIELD.sub("", text))
    found = []
    for rule, pattern in CODE_RULES.items():
        for match in pattern.finditer(text):
            if rule == "call with arguments" and match.group(1).split(".")[-1] in exercise_calls:
                continue  # an exercise's own function with the case it runs on states the task: `causal_mask(6)`
            if rule == "shape to type" and "×" not in match.group(0):
                elements = [e.strip() for e in match.group(0).strip("()").split(",")]
                if not all(SHAPE_ELEMENT.match(e) for e in elements) or not any("_" in e or len(e) == 1
                                                                                   for e in elements):
                    continue  # a list of words in brackets, not a shape
            found.append((rule, match.group(0)))
    return found


def ladder_texts():
    """(where, text) for every rung of every misconception, in both languages: the question (rung 1), the name and
    the hint (rung 2) and the change (rung 3)."""
    for misconception in catalog.MISCONCEPTIONS:
        for field in ("question", "name", "hint", "change"):
            for lang, words in getattr(misconception, field).items():
                yield f"misconception {misconception.id}.{field} [{lang}]", words


def shown_before_success():
    """(where, text) for every message a check can show before the student has solved the exercise. An
    exercise's `.explanation` is shown only once all its public checks pass: it explains the answer the student
    has already given. Titles state the task, as the docstrings do: the case a check runs (`d_in=3, d_out=2`) and
    the shapes the exercise asks for; test_no_student_text_contains_the_answer scans them for the answer's code."""
    for key, text in catalog.MESSAGES.items():
        if key.endswith(".title") or key.endswith(".explanation"):
            continue
        for lang, words in text.items():
            yield f"{key} [{lang}]", words


def test_every_misconception_climbs_the_whole_ladder():
    """Every known mistake has all three rungs, in both languages."""
    missing = [f"{misconception.id}.{field} [{lang}]" for misconception in catalog.MISCONCEPTIONS
               for field in ("question", "name", "hint", "change") for lang in ("en", "zh")
               if not getattr(misconception, field).get(lang, "").strip()]
    assert not missing, "\n".join(missing)


def test_no_rung_and_no_message_holds_code_a_formula_a_shape_or_a_count():
    api = _api_calls_of_the_reference()
    found = [f"{where}: {rule} {match!r} in {text!r}" for where, text in [*ladder_texts(), *shown_before_success()]
             for rule, match in code_in(text)]
    found += [f"{where}: names the call {name!r}: {text!r}" for where, text in ladder_texts()
              for name in api if re.search(rf"\b{name}\b", text)]
    assert not found, "\n".join(found)


def test_no_check_prints_what_an_exercise_asks_the_student_to_predict():
    """Book exercise 3.3 asks for a prediction of GPT-2's attention parameter count before the check runs: the
    reference's count, in any spelling, is in no message a check shows before the exercise passes."""
    from attnkit.solutions.n04_multi_head_attention import MultiHeadAttention, count_parameters

    count = count_parameters(MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12))
    spellings = {f"{count}", f"{count:,}", f"{count:_}"}
    found = [f"{where}: {text}" for where, text in shown_before_success() if any(s in text for s in spellings)]
    assert not found, "\n".join(found)
    wrong_counts = [text for key, text in catalog.MESSAGES.items() if key.startswith("parameter_counts.wrong.")]
    assert wrong_counts
    for words in (words for text in wrong_counts for words in text.values()):
        shown = words.format(got=count + 1, expected=count)  # a message that asked for the expected count shows it
        assert not any(spelling in shown for spelling in spellings), shown


def test_the_code_scanner_can_fail():
    """Each rule fires on the kind of text it is for, and stays quiet on plain words and the task's own calls."""
    assert ("code span", "`.T`") in code_in("use `.T` here")
    assert [rule for rule, _ in code_in("softmax over dim=-1")] == ["keyword argument"]
    assert [rule for rule, _ in code_in("call .contiguous() first")] == ["attribute or method"]
    assert [rule for rule, _ in code_in("is not v2.weight.T")] == ["attribute or method"]
    assert ("call with arguments", "to(dtype=x)") in code_in("move it with to(dtype=x)")
    assert [rule for rule, _ in code_in("divide by √d")] == ["formula"]
    assert [rule for rule, _ in code_in("features h*head_dim to the next")] == ["formula"]
    assert [rule for rule, _ in code_in("broadcast as (b, 1, 1, num_tokens) first")] == ["shape to type"]
    assert [rule for rule, _ in code_in("a num_tokens × num_tokens block")] == ["shape to type"]
    assert [rule for rule, _ in code_in("expected 2,360,064")] == ["a formatted count"]
    assert not code_in("causal_mask(6) blocks the future (queries, keys and values) e.g. a slice; see `{line}`")
    assert not code_in("merge_heads(split_heads(x, num_heads)) keeps (W_query, W_key, out_proj); 2 head(s)")
    assert not code_in("output shape {got_shape}, expected {expected_shape}")
    assert "register_buffer" in _api_calls_of_the_reference()


# --- No stub's docstring answers what its exercise asks (issue 41, item 6) ------------------------------------------
# A stub's docstring states the task, as the reference's docstring does; the pieces of code above cannot see a
# docstring's prose ("each head is one feature wide" told exercise 3.2's answer in words). The rule here: a number the
# solution writes (a constant between BEGIN and END SOLUTION) is part of the answer, so a docstring that states it, as
# digits or as a word, must find it stated in the exercise's own text already (the task gives it) or it tells the
# answer. Idioms that count nothing ("one after another") are left out.

SOURCE = Path(__file__).resolve().parents[1] / "source" / "attention"
NUMBER_WORDS = {0: "zero", 1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
IDIOMS = re.compile(r"\bone (?:after|by) (?:another|one)\b|\bone another\b", re.I)


def states_number(text, number):
    """Whether `text` states `number` in digits (not inside 04-1 or 0.5) or as an English word."""
    text = IDIOMS.sub(" ", text)
    if re.search(rf"(?<![\w.-]){re.escape(str(number))}(?![\w.]|-\w)", text):
        return True
    word = NUMBER_WORDS.get(number) if isinstance(number, int) else None
    return word is not None and re.search(rf"\b{word}\b", text, re.I) is not None


def solution_numbers(source, node):
    """The int and float constants `node` (a def or class in `source`) holds inside its BEGIN/END SOLUTION lines."""
    solution_lines, inside = set(), False
    for number, line in enumerate(source.splitlines(), 1):
        if "BEGIN SOLUTION" in line or "END SOLUTION" in line:
            inside = "BEGIN" in line
        elif inside:
            solution_lines.add(number)
    return {constant.value for constant in ast.walk(node) if isinstance(constant, ast.Constant)
            and type(constant.value) in (int, float) and constant.lineno in solution_lines}


def stub_docstrings():
    """(notebook, name, docstring of the release's stub, the solution's numbers, the exercise's own text before the
    stub) for every def and class of every solution cell; the generated "What is graded" cells are not the text."""
    for path in sorted(SOURCE.glob("*.ipynb")):
        released = {cell.get("id"): cell for cell in nbformat.read(RELEASE / path.name, as_version=4).cells}
        prose = []
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                if cell.source.startswith("### Exercise"):
                    prose = []
                if not cell.get("id", "").startswith("requirements-"):
                    prose.append(cell.source)
            elif "BEGIN SOLUTION" in cell.source:
                stubs = {node.name: ast.get_docstring(node) or "" for node in ast.walk(
                    ast.parse(released[cell.get("id")].source)) if isinstance(node, ast.FunctionDef | ast.ClassDef)}
                for node in ast.walk(ast.parse(cell.source)):
                    if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in stubs:
                        yield (path.name, node.name, stubs[node.name], solution_numbers(cell.source, node),
                               "\n".join(prose))


def answered_numbers(docstring, numbers, instructions):
    return sorted(number for number in numbers
                  if states_number(docstring, number) and not states_number(instructions, number))


def test_no_stub_docstring_states_a_number_of_the_answer_the_exercise_does_not():
    stubs = list(stub_docstrings())
    documented = {name for _notebook, name, docstring, *_ in stubs if docstring}
    assert len(documented) >= 15 and "two_dimensional_wrapper" in documented  # every exercise's function or class
    found = [f"{notebook} {name}: {docstring!r} states {numbers}" for notebook, name, docstring, solution, text in stubs
             if (numbers := answered_numbers(docstring, solution, text))]
    assert not found, "\n".join(found)


def test_the_docstring_scan_can_fail():
    """The 04-1b docstring that answered "where does its 4 come from" is caught; the task's own numbers are not."""
    (_notebook, _name, _docstring, numbers, text), = [stub for stub in stub_docstrings()
                                                      if stub[1] == "two_dimensional_wrapper"]
    assert 1 in numbers and "where its 4 comes from" in text
    told = "Exercise 3.2: num_heads stays 2, each head is one feature wide, so the context vectors have 2 features."
    assert answered_numbers(told, numbers, text) == [1]
    assert answered_numbers(told.replace("one feature", "1 feature"), numbers, text) == [1]
    assert not answered_numbers("Exercise 3.2: keeps num_heads at 2; 2 features per token.", numbers, text)
    assert not states_number("heads run one after another, as in exercise 04-1, at p = 0.5", 1)


# --- Rung 1 is the symptom and a question (issue 41, item 4) ----------------------------------------------------------
# A message is shown from the first failing run on, beside the symptom: the change to make belongs to rung 3 (a
# misconception's `change`, on request). An order to change the code, after the symptom's colon or semicolon, is the
# fix told at rung 1. Restating the task ("keep the given signature", "keep the input's dtype") is not a fix.
FIX_ORDER = re.compile(r"(?:[:;]|\bthen)\s+(?:please\s+)?(?:create|register|apply|make|use|copy|move|swap|transpose"
                       r"|replace|divide|multiply|fill)\b[^.;?]*", re.I)


def fixes_in(text):
    return [match.group(0).strip(" :;") for match in FIX_ORDER.finditer(FIELD.sub("", text))]


def test_no_message_tells_the_fix_beside_the_symptom():
    found = [f"{key}: {fix!r}" for key, text in catalog.MESSAGES.items()
             if not key.endswith((".title", ".explanation")) for fix in fixes_in(text["en"])]
    assert not found, "\n".join(found)


def test_the_fix_scan_can_fail():
    """The rung-1 fixes issue 41 found are caught; a question and a restated task are not."""
    assert fixes_in("dropout multiplied the -inf scores by 0; apply it to the weights after the softmax")
    assert fixes_in("nn.Linear's weight is already laid out outputs first; copy it as it is")
    assert fixes_in("after a transpose the numbers are out of order; make the tensor contiguous first")
    assert fixes_in("`{name}` is a parameter: the optimizer would train it; register it as a buffer")
    assert not fixes_in("dropout multiplied the -inf scores by 0. Which tensor does your dropout act on?")
    assert not fixes_in("missing argument ({detail}); keep the given signature")
