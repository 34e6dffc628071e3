"""Adversarial submissions for tests/test_adversarial.py, built at test time from the solved source notebooks.

Each case edits one solved notebook (inject code into a cell, replace a solution, delete or retype
a cell, or write raw bytes) and says what grading must give: nbval style, the case id names the
outcome (`syntax_error-partial`, `sleep_forever-zero_for_that_exercise`...). Building from the
source notebooks means the fixtures follow every change to them.
"""

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from attnkit import solutions
from autograder.course.exercises import EXERCISES, NOTEBOOKS
from autograder.isolation.sandbox import landlock_abi

NB01, NB04 = NOTEBOOKS[0], NOTEBOOKS[3]
POINTS = {exercise.id: exercise.points for exercise in EXERCISES}
FULL_01 = {"softmax_naive": 5, "softmax_stable": 6, "context_vectors": 7}


@dataclass(frozen=True)
class Case:
    name: str  # "<what the student did>-<expected outcome>"
    notebook: str
    edit: object  # callable(notebook node, context) -> notebook node, or bytes for a raw file
    scores: dict = field(default_factory=dict)  # exercise id -> expected score (others of the notebook: full)
    message: tuple = ()  # (exercise id, substring of one of its failed checks' messages)
    note: str | tuple = ""  # substring of one of the notebook's notes; a tuple: any one of these substrings
    all_notebooks: bool = False  # hand in the other three notebooks too (solved): they must stay intact
    needs_landlock: int = 0  # minimum Landlock ABI for the expected outcome (0: none needed)
    reason: str = ""  # for a notebook that cannot be run: substring of its reason


# --- notebook edits ---------------------------------------------------------------------------


def _cell(notebook, grade_id):
    for cell in notebook.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return cell
    raise KeyError(f"no cell {grade_id!r} in the source notebook")


def replace(grade_id, code):
    def edit(notebook, _context):
        _cell(notebook, grade_id).source = code
        return notebook
    return edit


def append(grade_id, code):
    def edit(notebook, _context):
        cell = _cell(notebook, grade_id)
        cell.source = cell.source + "\n" + code
        return notebook
    return edit


def new_cell_after(grade_id, code):
    def edit(notebook, context):
        index = notebook.cells.index(_cell(notebook, grade_id))
        notebook.cells.insert(index + 1, nbformat.v4.new_code_cell(code.format(**context)))
        return notebook
    return edit


def delete(grade_id):
    def edit(notebook, _context):
        notebook.cells.remove(_cell(notebook, grade_id))
        return notebook
    return edit


def duplicate(grade_id):
    def edit(notebook, _context):
        cell = _cell(notebook, grade_id)
        notebook.cells.insert(notebook.cells.index(cell) + 1, copy.deepcopy(cell))
        return notebook
    return edit


def retype(grade_id, cell_type):
    def edit(notebook, _context):
        cell = _cell(notebook, grade_id)
        replacement = nbformat.v4.new_markdown_cell(cell.source) if cell_type == "markdown" else cell
        replacement.metadata = cell.metadata
        notebook.cells[notebook.cells.index(cell)] = replacement
        return notebook
    return edit


def replace_with_context(grade_id, template):
    def edit(notebook, context):
        _cell(notebook, grade_id).source = template.format(**context)
        return notebook
    return edit


def wrong_assignment(_notebook, _context):
    """A notebook of some other nbgrader course, saved under this notebook's name."""
    other = nbformat.v4.new_notebook()
    other.cells = [nbformat.v4.new_code_cell("def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + "
                                             "fibonacci(n - 2)")]
    other.cells[0].metadata["nbgrader"] = {"grade_id": "fibonacci", "solution": True, "grade": False,
                                           "locked": False, "schema_version": 3, "task": False}
    return other


def _notes_weights():
    """What the notes print for softmax_naive on the scores of "journey": the hard-coding student's answer."""
    inputs = _notes_inputs()
    return solutions.softmax_naive(solutions.attention_scores_for_query(inputs, inputs[1])).tolist()


def _notes_inputs():
    import torch

    return torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                         [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])


SDPA_FORWARD = '''
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1))

    def forward(self, x, attention_mask=None):
        b, num_tokens, _ = x.shape
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(x), self.num_heads)
        v = split_heads(self.W_value(x), self.num_heads)
        added = torch.zeros(b, 1, num_tokens, num_tokens, dtype=q.dtype)
        if attention_mask is not None:
            padded = (attention_mask == 0).view(b, 1, 1, num_tokens)
            added = added.masked_fill(padded, torch.finfo(q.dtype).min)
        added = added.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        p = self.dropout.p if self.training else 0.0
        context = F.scaled_dot_product_attention(q, k, v, attn_mask=added, dropout_p=p)
        return self.out_proj(merge_heads(context))
'''

# Zeroes its own weights, then returns what the reference gives on zero weights (zeros): judged on the weights it
# started with, it is wrong, and the state check names the parameter it changed.
ZEROING_FORWARD = SDPA_FORWARD.split("    def forward")[0] + '''    def forward(self, x, attention_mask=None):
        with torch.no_grad():
            for parameter in self.parameters():
                parameter.zero_()
        return torch.zeros(*x.shape[:-1], self.d_out, dtype=x.dtype)
'''

WRONG_SOFTMAX = "def softmax_naive(x):\n    return x / x.sum()  # no exp: wrong\n"
# A patching student must score exactly what the same code scores without the patches.
BASELINE = "wrong_softmax-baseline_for_the_patching_cases"
RULE_BASELINE = "torch_softmax_in_from_scratch_exercise-rule_check_fails"
TORCH_SOFTMAX = "import torch\n\ndef softmax_naive(x):\n    return torch.softmax(x, dim=0)  # not from scratch\n"
HIDDEN_FAIL = "hidden_checks_fail"  # public checks may pass; the hidden ones on other inputs must not

# Writes one frame of the child's protocol on every descriptor the cell can reach (the channel is one of them).
FORGE_FRAMES = (
    "import os\npayload = {event!r}.encode()\n"
    "for fd in range(3, 64):\n    try:\n        os.write(fd, b'J' + len(payload).to_bytes(8, 'big') + payload)\n"
    "    except OSError:\n        pass\n"
)
# Left armed for whatever runs next: the grader's code, if the child did not take its process back.
HOOKS_AND_TIMERS = (
    "import gc, signal, sys, threading\n"
    "def bite(*args):\n    raise RuntimeError('bitten')\n"
    "gc.callbacks.append(bite)\nsys.setrecursionlimit(60)\nsys.setswitchinterval(1e-6)\n"
    "for signum in (signal.SIGVTALRM, signal.SIGPROF, signal.SIGUSR1, signal.SIGTERM):\n"
    "    signal.signal(signum, bite)\n"
    "signal.setitimer(signal.ITIMER_VIRTUAL, 0.001, 0.001)\nsignal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)\n"
    "threading.setprofile(bite)\nthreading.settrace(bite)\n"
    "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGALRM])\n"
    "sys.settrace(lambda *args: bite)\nsys.setprofile(bite)\n"
)
BITING_EXCEPTION = (
    "class Meta(type):\n    @property\n    def __name__(cls):\n        raise RuntimeError('bitten')\n"
    "class Biting(Exception, metaclass=Meta):\n    def __str__(self):\n        raise SystemExit('bitten')\n"
    "    @property\n    def __traceback__(self):\n        raise RuntimeError('bitten')\n\n"
    "def softmax_stable(x, dim=-1):\n    raise Biting()\n"
)
# A thread that keeps writing frames on every descriptor while the grader reports: whatever it breaks is the
# student's step (the cell that started it is skipped on the re-run), never a grader error.
CHANNEL_WRITER_THREAD = (
    "import os, threading, time\n"
    "def forge():\n    payload = b'{{\"event\": \"grader_error\", \"traceback\": \"forged\"}}'\n"
    "    while True:\n        for fd in range(3, 64):\n            try:\n"
    "                os.write(fd, b'J' + len(payload).to_bytes(8, 'big') + payload)\n"
    "            except OSError:\n                pass\n        time.sleep(0.001)\n"
    "threading.Thread(target=forge, daemon=True).start()\n"
)
# An audit hook that raises on what the grader's own code does when it restores itself (setting attributes of its
# classes): it cannot be removed, so every exercise after it stops the child; never a grader error.
RAISING_AUDIT_HOOK = (
    "import sys\ndef bite(event, args):\n    if event == 'object.__setattr__':\n"
    "        raise RuntimeError('bitten by the audit hook')\nsys.addaudithook(bite)\n"
)
# A correct softmax returned as a subclass whose every method raises when the grader's encoder calls it.
BITING_TENSOR = (
    "import sys\nimport torch\n\nclass Biting(torch.Tensor):\n"
    "    @classmethod\n    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
    "        if sys._getframe(1).f_code.co_name in ('plain', 'plain_data', 'plain_tensor', 'encode', '_tagged'):\n"
    "            raise RuntimeError('bitten by the encoder')\n"
    "        return super().__torch_function__(func, types, args, kwargs or {})\n\n"
    "def softmax_stable(x, dim=-1):\n    shifted = x - x.max(dim=dim, keepdim=True).values\n"
    "    return (shifted.exp() / shifted.exp().sum(dim=dim, keepdim=True)).as_subclass(Biting)\n"
)


def cases():
    """Every adversarial case; cases whose expected outcome needs Landlock carry its ABI."""
    return [
        Case("honest-full", NB01, append("solution_softmax_naive", ""), all_notebooks=True),
        Case("syntax_error-partial", NB01, replace("solution_softmax_stable", "def softmax_stable(x, dim=-1):\n"
             "    return x.exp() / x.exp().sum(dim=dim, keepdim=True\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "not defined"), note="SyntaxError"),
        Case("exception_in_cell-full", NB01, new_cell_after("test_softmax_naive", "raise ValueError('boom')"),
             note="ValueError: boom"),
        Case("exception_in_function-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "def softmax_stable(x, dim=-1):\n    raise ValueError('boom')\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "ValueError")),
        Case("infinite_loop-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "def softmax_stable(x, dim=-1):\n    while True:\n        pass\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "took too long")),
        Case("sleep_forever-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "import time\n\ndef softmax_stable(x, dim=-1):\n    time.sleep(10**6)\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "took too long")),
        Case("sleep_forever_in_cell-full", NB01, new_cell_after("given_inputs", "import time\ntime.sleep(10**6)"),
             note="interrupted"),
        Case("uninterruptible_loop_in_cell-killed_then_full", NB01, new_cell_after(
             "given_inputs", "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass"),
             note="did not stop"),
        # One allocation far past the memory limit fails at once, whatever the machine's speed.
        Case("memory_bomb-full", NB01, new_cell_after("given_inputs", "hog = bytearray(2**40)"), note="MemoryError"),
        # Growing allocations zero-fill memory on the way: a slow or busy machine can reach the cell's time limit
        # before the memory limit. Either limit is a right outcome; the note must name the one that stopped it.
        Case("growing_memory_bomb-full", NB01, new_cell_after(
             "given_inputs", "hog = [bytearray(10**8) for _ in range(10**4)]"),
             note=("MemoryError", "ran past the 2 s limit")),
        Case("memory_bomb_in_function-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "import torch\n\ndef softmax_stable(x, dim=-1):\n"
             "    return torch.ones(10**6, 10**6)\n"), scores={"softmax_stable": 0}),
        Case("os_exit-partial", NB01, append("solution_softmax_stable", "import os\nos._exit(0)"),
             scores={"softmax_stable": 0}, note="exit status 0"),
        Case("segfault_in_exercise_3-partial", NB01, replace(
             "solution_context_vectors", "import ctypes\n\ndef context_vectors(inputs):\n"
             "    ctypes.string_at(0)\n"),
             scores={"context_vectors": 0}, message=("context_vectors", "no result"), note="segmentation fault",
             all_notebooks=True),
        Case("sys_exit-full", NB01, new_cell_after("given_inputs", "import sys\nsys.exit(3)"), note="SystemExit"),
        Case("keyboard_interrupt_in_cell-full", NB01, new_cell_after("given_inputs", "raise KeyboardInterrupt"),
             note="KeyboardInterrupt"),
        Case("system_exit_in_function-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "def softmax_stable(x, dim=-1):\n    raise SystemExit(1)\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "SystemExit")),
        Case("keyboard_interrupt_in_function-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "def softmax_stable(x, dim=-1):\n    raise KeyboardInterrupt\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "KeyboardInterrupt")),
        Case("output_flood-full", NB01, new_cell_after(
             "given_inputs", "import os, sys\nfor _ in range(20000):\n    print('x' * 10000)\n"
             "sys.stderr.write('y' * 10**7)\nos.write(1, b'z' * 10**7)\nos.write(2, b'z' * 10**7)")),
        Case("stderr_warnings-full", NB01, replace(
             "solution_softmax_naive", "import sys, warnings\nimport torch\n\ndef softmax_naive(x):\n"
             "    warnings.warn('exp may overflow')\n    print('debug', file=sys.stderr)\n"
             "    return torch.exp(x) / torch.exp(x).sum(dim=0)\nwarnings.warn('defined softmax_naive')\n")),
        Case(BASELINE, NB01, replace("solution_softmax_naive", WRONG_SOFTMAX), scores={"softmax_naive": "below_full"}),
        Case(RULE_BASELINE, NB01, replace("solution_softmax_naive", TORCH_SOFTMAX),
             scores={"softmax_naive": "below_full"}),
        Case("hide_torch_softmax_from_the_rule_check-no_effect", NB01, replace(
             "solution_softmax_naive", TORCH_SOFTMAX + "import sys\n"
             "recorders = sys.modules['autograder.checking.torch_recorders']\n\n"
             "def quiet(self, func, types, args=(), kwargs=None):\n    return func(*args, **(kwargs or {}))\n\n"
             "recorders.FunctionCalls.__torch_function__.__code__ = quiet.__code__\n"
             "recorders.FunctionCalls.__exit__ = lambda self, *exc: None\n"
             "for check in sys.modules['autograder.course.catalog'].CHECKS:\n"
             "    object.__setattr__(check, 'hidden', False)\n"),
             scores={"softmax_naive": ("same_as", RULE_BASELINE)}),
        Case("monkeypatch_torch-no_effect", NB01, replace(
             "solution_softmax_naive", WRONG_SOFTMAX + "import torch, torch.testing\n"
             "torch.allclose = lambda *args, **kwargs: True\ntorch.equal = lambda *args, **kwargs: True\n"
             "torch.testing.assert_close = lambda *args, **kwargs: None\n"
             "torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)\n"),
             scores={"softmax_naive": ("same_as", BASELINE)}),
        Case("replace_autograder_modules-no_effect", NB01, replace(
             "solution_softmax_naive", WRONG_SOFTMAX + "import sys, types, builtins\n"
             "sys.modules['autograder.checking.probing'].plain = lambda value: value\n"
             "sys.modules['autograder.running.runner'].judge_exercise = lambda *args, **kwargs: []\n"
             "sys.modules['autograder.checking.torch_recorders'].FunctionCalls.__torch_function__ = "
             "lambda self, func, types, args=(), kwargs=None: func(*args, **(kwargs or {}))\n"
             "sys.modules['autograder.running.runner'] = types.ModuleType('autograder.running.runner')\n"
             "sys.modules['autograder.course.catalog'] = types.ModuleType('autograder.course.catalog')\n"
             "builtins.sum = lambda *args, **kwargs: 0\n"),
             scores={"softmax_naive": ("same_as", BASELINE)}),
        Case("read_solutions_from_disk-zero_for_that_exercise", NB01, replace_with_context(
             "solution_softmax_stable", "import glob\nfor path in glob.glob('{repo}/solutions/*.py') + "
             "['{repo}/solutions/n01_attention_without_weights.py']:\n    exec(open(path).read())\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "not defined"), note="PermissionError",
             needs_landlock=1),
        Case("import_solutions-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "from attnkit.solutions.n01_attention_without_weights import softmax_stable\n"),
             scores={"softmax_stable": 0}, note="cannot be imported while grading"),
        # The grading child is forked from a process that never imported the reference or the checks: nothing to dig
        # out of its heap, its classes, its modules or the frames above a probe (tests/test_zygote.py takes stock).
        Case("scavenge_the_heap_for_the_reference-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "import gc, types\ngc.unfreeze()\nfor found in gc.get_objects():\n"
             "    if isinstance(found, types.FunctionType) and found.__name__ == 'softmax_stable' "
             "and (found.__module__ or '') != '__main__':\n        softmax_stable = found\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "not defined")),
        Case("reference_class_through_subclasses-zero_for_that_exercise", NB04, replace(
             "solution_multi_head_attention", "import torch\npending = [torch.nn.Module]\nwhile pending:\n"
             "    cls = pending.pop()\n    pending.extend(cls.__subclasses__())\n"
             "    if cls.__name__ == 'MultiHeadAttention' and cls.__module__ != '__main__':\n"
             "        MultiHeadAttention = cls\n"),
             scores={"multi_head_attention": 0, "padding_mask": 0}, message=("multi_head_attention", "not defined")),
        Case("import_the_hidden_checks-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "import importlib\nvariants = importlib.import_module("
             "'autograder.course.variants')\n"
             "softmax_stable = lambda x, dim=-1: variants.attention\n"),
             scores={"softmax_stable": 0}, note="cannot be imported while grading"),
        Case("walk_the_probe_frames-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "import sys, torch\n\ndef softmax_stable(x, dim=-1):\n"
             "    frame = sys._getframe(1)\n    while frame is not None:\n"
             "        for value in list(frame.f_locals.values()):\n"
             "            judge = getattr(value, 'judge', None)\n"
             "            if callable(judge):\n                return judge\n"
             "            if isinstance(value, torch.Tensor) and value.shape == x.shape and value is not x:\n"
             "                return value\n"
             "        frame = frame.f_back\n    return torch.zeros_like(x)\n"),
             scores={"softmax_stable": 0}),
        Case("read_source_notebook-zero_for_that_exercise", NB01, replace_with_context(
             "solution_softmax_stable", "import json\nnotebook = json.load(open("
             "'{repo}/source/attention/01_attention_without_weights.ipynb'))\n"
             "exec(''.join(notebook['cells'][19]['source']))\n"),
             scores={"softmax_stable": 0}, note="PermissionError", needs_landlock=1),
        Case("copy_another_student-zero_for_that_exercise", NB01, replace_with_context(
             "solution_softmax_stable", "import json, os\nother = sorted(os.listdir('{submitted}'))[0]\n"
             "notebook = json.load(open(os.path.join('{submitted}', other, 'attention', "
             "'01_attention_without_weights.ipynb')))\nexec(''.join(notebook['cells'][19]['source']))\n"),
             scores={"softmax_stable": 0}, note="PermissionError", needs_landlock=1),
        Case("tamper_with_grades-no_effect", NB01, new_cell_after(
             "given_inputs", "for path in ['{out}/grades.csv', '{out}/students/a_honest.json', "
             "'{out}/feedback/a_honest.html']:\n    try:\n        open(path, 'w').write('hacked')\n"
             "    except OSError as error:\n        print(error)\nopen('{out}/students/a_honest.json', 'w')"),
             note="PermissionError", needs_landlock=1),
        # In its own PID namespace the child's parent, the grader, has no pid there (getppid() is 0): it then kills
        # every process it can name, which are none but itself (ProcessLookupError). Without the namespace, Landlock
        # (ABI >= 6) refuses the signal to the grader (PermissionError).
        Case("kill_the_grader-no_effect", NB01, new_cell_after(
             "given_inputs", "import os, signal\nos.kill(os.getppid() or -1, signal.SIGKILL)"),
             note=("ProcessLookupError", "PermissionError"), needs_landlock=6),
        Case("spawn_processes-no_effect", NB01, new_cell_after(
             "given_inputs", "import os, subprocess\ntry:\n    os.fork()\nexcept OSError as error:\n"
             "    print(error)\nsubprocess.run(['sleep', '1000'])"), note="PermissionError"),
        Case("garbage_on_the_channel-full", NB01, new_cell_after(
             "given_inputs", "import os\nfor fd in range(3, 64):\n    try:\n"
             "        os.write(fd, b'T' + (8).to_bytes(8, 'big') + b'garbage!')\n    except OSError:\n        pass")),
        # The child never decides whose fault it is: events written on the channel by student code, hooks, timers
        # and handlers left for the grader's code, exceptions and tensors that bite whoever reads them.
        Case("forge_a_grader_error_event-full", NB01, new_cell_after("given_inputs", FORGE_FRAMES.format(
             event='{{"event": "grader_error", "traceback": "attnkit bug: run this student with the sandbox off"}}')),
             note="does not accept"),
        Case("forge_a_second_hello-full", NB01, new_cell_after("given_inputs", FORGE_FRAMES.format(
             event='{{"event": "hello", "notes": ["FORGED isolation note"], "workspace": {{}}}}')),
             note="does not accept"),
        Case("forge_an_exercise_result-full", NB01, new_cell_after("given_inputs", FORGE_FRAMES.format(
             event='{{"event": "exercise", "exercise": "softmax_naive", "records": {{}}}}')),
             note="does not accept"),
        Case("hooks_and_timers_left_for_the_grader-full", NB01, new_cell_after("given_inputs", HOOKS_AND_TIMERS)),
        # Whether a forged frame lands inside a real one is a race the student's thread runs against the child's own
        # writes: on a quiet machine it can win on every attempt. Either way the student's code is charged, never
        # the grader (the class-wide tests), and it never earns more than the exercise is worth.
        Case("thread_writing_on_the_channel-at_most_full", NB01, new_cell_after("given_inputs", CHANNEL_WRITER_THREAD),
             scores=dict.fromkeys(FULL_01, "at_most_full")),
        Case("audit_hook_that_bites_the_grader-no_grader_error", NB01, new_cell_after(
             "given_inputs", RAISING_AUDIT_HOOK), scores=dict.fromkeys(FULL_01, "at_most_full")),
        Case("profile_hook_in_the_function-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "import sys\n\ndef softmax_stable(x, dim=-1):\n"
             "    def bite(*args):\n        raise RuntimeError('bitten')\n    sys.setprofile(bite)\n"
             "    return (x - x.max(dim=dim, keepdim=True).values).exp() / "
             "(x - x.max(dim=dim, keepdim=True).values).exp().sum(dim=dim, keepdim=True)\n"),
             scores={"softmax_stable": "below_full"}),
        Case("exception_that_bites_its_reader-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", BITING_EXCEPTION), scores={"softmax_stable": 0},
             message=("softmax_stable", "Biting")),
        Case("huge_exception_message-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "def softmax_stable(x, dim=-1):\n    raise ValueError('x' * 10**8)\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "ValueError")),
        Case("tensor_subclass_that_bites_the_encoder-full", NB01, replace(
             "solution_softmax_stable", BITING_TENSOR)),
        # The notes' check runs on all-negative scores too (public first), so hard-coding the notes' weights fails a
        # public check now, as well as the hidden ones on other inputs.
        Case("hardcoded_notes_output-below_full", NB01, replace(
             "solution_softmax_naive", f"import torch\n\ndef softmax_naive(x):\n"
             f"    return torch.tensor({_notes_weights()!r})\n"),
             scores={"softmax_naive": "below_full"}),
        Case("sdpa_in_from_scratch_exercise-rule_check_fails", NB04, replace(
             "solution_multi_head_attention", SDPA_FORWARD),
             scores={"multi_head_attention": "below_full"},
             message=("multi_head_attention", "scaled_dot_product_attention")),
        Case("forward_zeroes_its_own_weights-zero_for_that_exercise", NB04, replace(
             "solution_multi_head_attention", ZEROING_FORWARD),
             scores={"multi_head_attention": "below_full", "padding_mask": "below_full"},
             message=("multi_head_attention", "parameter")),
        Case("deleted_graded_cell-full", NB01, delete("test_softmax_stable"), note="deleted"),
        Case("duplicated_graded_cell-full", NB01, duplicate("test_softmax_naive")),
        Case("retyped_graded_cell-full", NB01, retype("test_context_vectors", "markdown")),
        # nbgrader turns a graded notebook's cells back into the type they were handed out as: so does attnkit.
        Case("retyped_solution_cell-restored_full", NB01, retype("solution_softmax_naive", "markdown"),
             note="turned into a markdown cell"),
        Case("edited_given_cell-restored_full", NB01, replace("given_inputs", "inputs = None"),
             note="graded with the given code"),
        Case("missing_function-zero_for_that_exercise", NB01, delete("solution_context_vectors"),
             scores={"context_vectors": 0}, message=("context_vectors", "`context_vectors` is not defined")),
        Case("wrong_signature-zero_for_that_exercise", NB01, replace(
             "solution_softmax_stable", "import torch\n\ndef softmax_stable(values):\n"
             "    shifted = values - values.max()\n    return shifted.exp() / shifted.exp().sum()\n"),
             scores={"softmax_stable": 0}, message=("softmax_stable", "signature")),
        Case("numpy_instead_of_tensor-zero_for_that_exercise", NB01, replace(
             "solution_softmax_naive", "import numpy as np\n\ndef softmax_naive(x):\n"
             "    e = np.exp(x.numpy())\n    return e / e.sum()\n"),
             scores={"softmax_naive": 0}, message=("softmax_naive", "ndarray")),
        Case("ipython_syntax-full", NB01, new_cell_after(
             "given_inputs", "%time checked = inputs.sum()\n!ls /\nlisting = !ls\n%matplotlib inline\n"
             "display(inputs)\nget_ipython().run_line_magic('load_ext', 'autoreload')\ninputs?")),
        Case("corrupt_ipynb-zero_with_reason", NB01, b'{"cells": [', scores=dict.fromkeys(FULL_01, 0),
             all_notebooks=True, reason="not a notebook"),
        Case("empty_ipynb-zero_with_reason", NB01, b"", scores=dict.fromkeys(FULL_01, 0), all_notebooks=True,
             reason="empty"),
        Case("wrong_assignment-zero_with_reason", NB01, wrong_assignment,
             scores=dict.fromkeys(FULL_01, 0), note="none of the graded cells"),
    ]


def write_submission(case, submitted_dir, source_dir, context):
    """Hand in the case's notebook (and the solved others when the case asks) as student `case.name`."""
    folder = Path(submitted_dir) / case.name / "attention"
    folder.mkdir(parents=True)
    names = NOTEBOOKS if case.all_notebooks else (case.notebook,)
    for name in names:
        target = folder / f"{name}.ipynb"
        source = Path(source_dir) / f"{name}.ipynb"
        if name != case.notebook:
            target.write_bytes(source.read_bytes())
        elif isinstance(case.edit, bytes):
            target.write_bytes(case.edit)
        else:
            notebook = case.edit(nbformat.read(source, as_version=4), context)
            target.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return folder


def expected_scores(case):
    """Exercise id -> expected score for the edited notebook; special values are checked by the test."""
    expected = {exercise.id: exercise.points for exercise in EXERCISES if exercise.notebook == case.notebook}
    expected.update(case.scores)
    return expected


def usable(case):
    return landlock_abi() >= case.needs_landlock
