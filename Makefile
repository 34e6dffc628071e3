# attnkit: `make demo` shows a real nbgrader round trip, `make test` runs every test.
# Neither writes inside the repository (temporary course directories live under mkdtemp).

PYTHON3 ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
# Written after a successful install: later runs skip pip entirely.
STAMP   := $(VENV)/.attnkit-installed
# nbgrader shells out to `alembic`, which lives next to the venv's python.
RUN     := PATH="$(CURDIR)/$(VENV)/bin:$$PATH"

.PHONY: help .venv test test-fast demo docs release check-release lint grid mutation similarity-bench hub hub-clean kit-wheel

help:
	@echo "make demo           a bundled class (solved, untouched, mistakes, attacks) through nbgrader and attnkit, timed"
	@echo "                    per phase (6 to 20 minutes on 2 cores, as loaded; docs/instructor/index.md#the-demo)"
	@echo "make test           run the test suite (nbgrader runs included, the documentation site built), one worker a core"
	@echo "make test-fast      the tests not marked slow (unit tests, the checks on the solved and handed-out notebooks)"
	@echo "make docs           build the documentation site (docs/) into a temporary directory, warnings as errors"
	@echo "make release        write source/attention/'s points and catalogue cells, regenerate release/attention/"
	@echo "make check-release  fail if source/attention/ or release/attention/ is out of date"
	@echo "make kit-wheel      the student kit's wheel in dist/ (python -m build; see docs/student-kit.md)"
	@echo "make lint           ruff check, the layers contract (lint-imports) and mypy on every package"
	@echo "make grid           the variant grid: every single-knob mistake of every module exercise, graded"
	@echo "make mutation       mutation score: cosmic-ray's mutants of solutions/ graded by the checks (~1 min)"
	@echo "make similarity-bench  attnkit similarity on 3,000 synthetic students: time and precision"
	@echo "make hub            (root) the course on a local JupyterHub: users attnkit-hub-*, prints URL and logins"
	@echo "make hub-clean      (root) remove the hub's users and /tmp/attnkit-hub"

.venv: $(STAMP)

$(STAMP): pyproject.toml setup.py constraints.txt
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	@echo "installing attnkit and its dependencies into $(VENV) (pyproject.toml, setup.py or constraints.txt changed, or no venv yet)"
	$(PY) -m pip install --quiet -c constraints.txt -e '.[course,dev]'
	touch $(STAMP)

# One pytest worker per core; each module runs whole in one worker and the modules with slow tests start first
# (tests/conftest.py), so a module's fixtures are made once and the long ones do not end the run alone.
PYTEST  := $(RUN) $(PY) -m pytest -q -p no:cacheprovider -n auto --dist loadfile --no-loadscope-reorder

test: $(STAMP)
	$(PYTEST)

# The tests not marked slow: every module's unit tests and the checks on the solved and handed-out notebooks,
# without nbgrader runs, venv builds, browsers, the hub or the cluster.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

# The site goes to DOCS_OUT, else a new temporary directory: never into the checkout. tests/test_docs.py builds it the
# same way in `make test`.
docs: $(STAMP)
	@out="$${DOCS_OUT:-$$(mktemp -d "$${TMPDIR:-/tmp}/attnkit-docs.XXXXXX")}"; \
	$(PY) -m sphinx -W --keep-going -n -q -b html -d "$$out/.doctrees" docs "$$out" && \
	echo "the documentation site: $$out/index.html"

demo: $(STAMP)
	$(RUN) $(PY) -m devtools.demo

release: $(STAMP)
	$(RUN) $(PY) -m autograder.integrations.nbgrader_course release

check-release: $(STAMP)
	$(RUN) $(PY) -m autograder.integrations.nbgrader_course check-release

kit-wheel: $(STAMP)
	$(PY) -m autograder.integrations.student_kit.build dist

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m mypy

grid: $(STAMP)
	$(PY) -m devtools.variant_grid

mutation: $(STAMP)
	$(PY) -m devtools.mutation

similarity-bench: $(STAMP)
	$(RUN) $(PY) -m devtools.similarity_bench

hub: $(STAMP)
	$(RUN) $(PY) -m devtools.hub up

hub-clean: $(STAMP)
	$(PY) -m devtools.hub down
