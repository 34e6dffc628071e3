"""The student kit: the public checks as stored test vectors, installable without the reference.

`attnkit student-kit build OUT_DIR` (autograder.integrations.student_kit.build) runs every public case of every exercise
against the reference once and writes a package whose `from autograder import check` compares the
student's output with those stored vectors. Only `runtime/` (and the shared, reference-free modules it
uses) goes into that package; the builder stays here.
"""

__all__: list[str] = []
