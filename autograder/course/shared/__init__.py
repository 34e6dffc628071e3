"""What the probes of every exercise folder share: the notes' inputs, the stored weights the student kit loads,
the plan that names probes to the grading child, and the records' common types. Probe side: the child holds it."""

__all__: list[str] = []
