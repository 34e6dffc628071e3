"""The probe half of every check: code that runs the student's objects and returns plain data.

This package is all of the course that the process running student code holds. It imports torch and the
reference-free `autograder.checking.probing`, never the reference (`solutions`), a judge or the functional
reference with knobs (`autograder.course.checks.variants`): the grading child is forked from a process
(autograder.isolation.zygote) that imported this package and nothing above it. tests/test_zygote.py checks that
as an attacker would, and tests/test_import_graph.py that no module here imports upwards.
"""
