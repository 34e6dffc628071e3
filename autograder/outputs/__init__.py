"""Stage 4, outputs: the student records, feedback pages, Gradescope results, grades.csv and the class report."""

__all__: list[str] = []
