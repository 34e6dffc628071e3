"""The judges of the course's public checks, and of the hidden checks that vary their values and shapes.

A judge decides from the probe's data, the case and the reference's `Expectations` (autograder.checking.expectations)
and imports no reference, variant or hidden check: the student kit ships this package as it is and runs the same
judges on the expectations it stored. A check's reference side (its `expect`) and its cases stay in
autograder.course.checks. One module per group of probes (autograder.course.probes), named alike.
"""
