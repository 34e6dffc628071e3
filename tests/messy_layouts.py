"""The messy ways students hand in notebook 01, as folder builders shared by the tests that grade them.

`layouts(repo_root, alice)`: links (to the solution, a classmate, source/), zips (escaping, nested, found by
content), a sparse 4 GB file, two edited copies, a folder one down, the student's top folder, `.ipynb.txt`, an
edited `-Copy1` beside the untouched release, Colab's and an LMS's names (tests/test_submission_files.py);
`RENAMED`: the names downloads and Jupyter give a copy (the same test module); `more_layouts(repo_root)`: what
tests/test_intake.py finds by content or by place (a notebook saved without nbgrader's metadata, work saved outside an
untouched attention/ folder); `cluttered(folder, repo_root)`: the four solved notebooks beside a virtualenv, figures, a
checkpoint, data and the student's own package (tests/test_cluttered_folders.py). tests/test_one_grade.py grades all
of them with both graders.
"""

import json
import os
import zipfile

import nbformat

from autograder.course.exercises import NOTEBOOKS

NB01, NB04 = NOTEBOOKS[0], NOTEBOOKS[3]
# student: the notebook 01 files they hand in in attention/ (solved; "unrelated" hands in a notebook of their own)
RENAMED = {
    "download": [f"{NB01} (1).ipynb"],
    "capitals": ["01_Attention_Without_Weights.ipynb"],
    "jupyter_copy": [f"{NB01}-Copy1.ipynb"],
    "two_copies": [f"{NB01} (1).ipynb", f"{NB01} (2).ipynb"],  # the same work twice: graded once
    "unrelated": ["my_notes.ipynb"],
}
HEADS = '''import torch


def split_heads(x, num_heads):
    b, num_tokens, d_out = x.shape
    return x.view(b, num_tokens, num_heads, d_out // num_heads).transpose(1, 2)


def merge_heads(x):
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).contiguous().view(b, num_tokens, num_heads * head_dim)
'''
PNG = bytes.fromhex("89504e470d0a1a0a") + b"\0" * 200


def unrelated():
    """A notebook of the student's own: none of the assignment's cells (one found by content is graded)."""
    cell = {"cell_type": "code", "metadata": {}, "source": "import torch\nprint(torch.ones(3))", "outputs": [],
            "execution_count": None}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def renamed(repo_root):
    """{student: build(folder)} for RENAMED."""
    solved = (repo_root / "source" / "attention" / f"{NB01}.ipynb").read_bytes()

    def build(names, student):
        return lambda folder: [write(folder, f"attention/{name}", unrelated() if student == "unrelated" else solved)
                               for name in names]

    return {student: build(names, student) for student, names in RENAMED.items()}


def other_work(solved):
    document = json.loads(solved)
    document["cells"].append({"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [],
                              "execution_count": None})
    return json.dumps(document).encode()


def zip_of(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)


def write(folder, relative, data):
    (folder / relative).parent.mkdir(parents=True, exist_ok=True)
    (folder / relative).write_bytes(data)


def layouts(repo_root, alice):
    """{student: build(folder)}: attacks (expected 0) and honest layouts (expected full marks for NB01).

    `alice` is the honest classmate's folder, the target of the links (absolute, so they resolve anywhere).
    """
    solution = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    solved, released = solution.read_bytes(), (repo_root / "release" / "attention" / f"{NB01}.ipynb").read_bytes()

    def link(relative, target, is_dir=False):
        def build(folder):
            (folder / relative).parent.mkdir(parents=True, exist_ok=True)
            (folder / relative).symlink_to(target, target_is_directory=is_dir)
        return build

    def sparse(folder):
        write(folder, f"attention/{NB01}.ipynb", b"")
        os.truncate(folder / "attention" / f"{NB01}.ipynb", 4 * 2**30)

    return {
        "alice": lambda folder: write(folder, f"attention/{NB01}.ipynb", solved),
        "link_to_solution": link(f"attention/{NB01}.ipynb", solution),
        "attention_linked_to_source": link("attention", repo_root / "source" / "attention", is_dir=True),
        "link_to_classmate": link(f"attention/{NB01}.ipynb", alice / "attention" / f"{NB01}.ipynb"),
        "zip_escaping": lambda folder: zip_of(folder / "work.zip", [(f"../{NB01}.ipynb", solved)]),
        "sparse_4gb": sparse,
        "two_edited": lambda folder: (write(folder, f"attention/{NB01}.ipynb", solved),
                                      write(folder, f"attention/{NB01}-Copy1.ipynb", other_work(solved))),
        "nested": lambda folder: write(folder, f"attention/attention/{NB01}.ipynb", solved),
        "top_level": lambda folder: write(folder, f"{NB01}.ipynb", solved),
        "as_text": lambda folder: write(folder, f"attention/{NB01}.ipynb.txt", solved),
        "zipped": lambda folder: zip_of(folder / "attention.zip", [(f"attention/{NB01}.ipynb", solved)]),
        "copy_beside_release": lambda folder: (write(folder, f"attention/{NB01}.ipynb", released),
                                               write(folder, f"attention/{NB01}-Copy1.ipynb", solved)),
        "colab": lambda folder: write(folder, f"Copy of {NB01}.ipynb", solved),
        "lms_download": lambda folder: write(folder, f"attention/nguyen_LATE_48213_{NB01}.ipynb", solved),
        "finder_zip": lambda folder: zip_of(folder / "Archive.zip", [("hw/notebook1.ipynb", solved),
                                                                     ("__MACOSX/hw/._notebook1.ipynb", b"\0\5")]),
    }


def more_layouts(repo_root):
    """{student: build(folder)}: notebook 01 found by content without nbgrader's metadata, and by place."""
    solution = repo_root / "source" / "attention" / f"{NB01}.ipynb"
    solved, released = solution.read_bytes(), (repo_root / "release" / "attention" / f"{NB01}.ipynb").read_bytes()
    document = json.loads(solved)
    for cell in document["cells"]:
        cell["metadata"] = {}
    return {
        "no_metadata": lambda folder: write(folder, "attention/lab.ipynb", json.dumps(document).encode()),
        "outside_untouched": lambda folder: (write(folder, f"attention/{NB01}.ipynb", released),
                                             write(folder, f"{NB01}.ipynb", solved)),
        "edited_wins": lambda folder: (write(folder, f"attention/{NB01}.ipynb", solved),
                                       write(folder, f"{NB01}.ipynb", other_work(solved))),
    }


def _nb04_importing_the_package(repo_root):
    notebook = nbformat.read(repo_root / "source" / "attention" / f"{NB04}.ipynb", as_version=4)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in ("solution_split_heads", "solution_merge_heads"):
            cell.source = f"from mha_utils.heads import {grade_id.removeprefix('solution_')}"
    return notebook


def cluttered(folder, repo_root):
    """The four solved notebooks in attention/ beside a virtualenv of 1,600 files, 720 figures, a 40 MB checkpoint,
    data, and the student's own package `mha_utils`, which notebook 04 imports split_heads and merge_heads from."""
    attention = folder / "attention"
    attention.mkdir(parents=True)
    for notebook in NOTEBOOKS[:3]:
        (attention / f"{notebook}.ipynb").write_bytes((repo_root / "source" / "attention" / f"{notebook}.ipynb")
                                                      .read_bytes())
    nbformat.write(_nb04_importing_the_package(repo_root), attention / f"{NB04}.ipynb")
    venv = attention / ".venv"
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for number in range(1_599):
        package = venv / "lib" / "python3.11" / "site-packages" / f"pkg{number // 100}"
        package.mkdir(exist_ok=True)
        (package / f"module{number}.py").write_text("X = 1\n")
    (attention / "figures").mkdir()
    for number in range(720):
        (attention / "figures" / f"attention_{number:03}.png").write_bytes(PNG)
    with (attention / "model.pt").open("wb") as checkpoint:
        checkpoint.truncate(40 * 2**20)  # a trained model: larger than a file may be
    (attention / "data").mkdir()
    (attention / "data" / "tokens.csv").write_text("token,id\nyour,0\njourney,1\n")
    (attention / "mha_utils").mkdir()
    (attention / "mha_utils" / "__init__.py").write_text("")
    (attention / "mha_utils" / "heads.py").write_text(HEADS)
