# Build and test the book and its library. GNU make.
#   make          the targets, one line each (`make help`); runs nothing else
#   make check    the fast tier, on every change: ruff, lint-imports and every test that needs no built book,
#                 browser, JupyterLab, torch/transformers, jax or kernels (pyproject.toml markers), on all cores
#   make test     everything, before you stop (CI runs it): lint, the book build (as `make book`, but on
#                 another BLAS kernel and thread count than the stored outputs were computed with) with the
#                 tests that need no built book beside it, then the book's tiers on all cores (the slowest
#                 listed, the longest started first), and strict nbval on every notebook in book/, fed the
#                 build's execution (tests/plugins/nbval_build.py): each chapter is executed once. The
#                 install includes every extra (binder/requirements.txt: -e .[assignments,book,hf,jax]), so
#                 the interop tests run
#   make book     execute all notebooks and build the HTML book under _build/html (RELEASE=1: a release,
#                 refused while _config.yml names a placeholder repository). Incremental: a page is
#                 re-executed when its source, geron_lib or the BLAS settings (_build/blas-env) change
#   make outputs  re-execute notebooks in place (NB=book/x.ipynb for one)
#   make student-book  the student edition: the book without its solutions, _build/student/html, made from
#                 make book's executed notebooks (which it runs first; scripts/student_book.py)
#   make pdf      the built book printed to one PDF, _build/pdf/book.pdf (Debian's chromium; after make book)
#   make screenshots  every page of the built book, whole, in the light and the dark theme, to look at:
#                 _build/screenshots (after make book)
#   make lab      JupyterLab on the book (local): Run All in a chapter shows its numbers in the prose
#   make assignments  per chapter, a student notebook of its exercises (no solutions) and an otter
#                 autograder, under _build/assignments, by the geron-assignments command that the install
#                 puts in .venv/bin (assignments/spec.yml; README, "For teachers");
#                 after make book: the exercises show the numbers the build recorded (_build/eval_values.json)
#   make lint     ruff, and lint-imports (the library's layers: pyproject.toml [tool.importlinter])
#   make clean    remove build output
# Each target's `## ` comment is its line in `make help`.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

# Write bytecode caches (an environment may turn them off): without them every run compiles the library and
# pytest rewrites every test module again, several seconds of each worker's start.
export PYTHONDONTWRITEBYTECODE :=
# Deterministic hashing in tests and notebook kernels (kernels inherit the environment).
export PYTHONHASHSEED := 0
# Let the venv's Jupyter data dir (its python3 kernelspec) win over user/system ones.
export JUPYTER_PREFER_ENV_PATH := 1
# Use the platformdirs locations, which silences jupyter_core's migration warning.
export JUPYTER_PLATFORM_DIRS := 1

.DEFAULT_GOAL := help
.PHONY: help check test book lint clean distclean install outputs lab assignments pdf screenshots student-book

help: ## these targets, one line each
	@echo "make TARGET, where TARGET is one of:"
	@awk -F ':.*## ' '/^[a-z-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(firstword $(MAKEFILE_LIST))

install: $(STAMP) ## create .venv from requirements.txt, geron_lib and assignments editable (again on change)

# PIP_RETRIES=0: binder/requirements.txt names PyTorch's CPU index; where that index cannot be reached, pip
# would retry it five times for every package (about 9 s each) before it takes the package elsewhere.
# --no-compile, then compileall on all cores: pip compiles the environment's 17,500 modules one after another
# (an 82 s install here, against 30 s without and 22 s for compileall). Compiled at install, as pip would: the
# sandboxed grading kernels may write no bytecode cache, so each would compile what it imports. Not compiled:
# the packages' own test suites and the model families of transformers the book does not load (5,500 modules;
# a process that imports one compiles it). As pip does, a module that does not compile here is left (torch
# ships one in Python 3.12's syntax).
$(STAMP): requirements.txt binder/requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	PIP_RETRIES=0 $(BIN)/python -m pip install --no-compile -r requirements.txt
	$(BIN)/python -m compileall -qq -j 0 -x '/tests?/|/transformers/models/(?!albert/|bert/|roberta/|auto/)' \
	    $(VENV)/lib || true
	$(BIN)/python -m pip check
	# Register a python3 kernelspec pointing at this venv's interpreter, so that
	# jupyter-book and nbval can never pick up another Python's kernel.
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)"
	touch $@

# The tiers (pyproject.toml [tool.pytest.ini_options] markers, applied in tests/conftest.py)
SLOW_TIERS := book or browser or live or hf or jax or slow
# pytest-xdist: one worker per core
WORKERS := -n auto

check: $(STAMP) ## on every change: lint and the fast tier (no book, browser, torch, jax, kernels)
	$(MAKE) --no-print-directory lint
	$(BIN)/python -m pytest -m "not ($(SLOW_TIERS))" $(WORKERS) -q

# The test build executes the chapters on another BLAS kernel and thread count than `make outputs` stored
# them with, so that strict nbval fails here on any stored output whose digits depend on the CPU
# (Haswell's kernels, or SandyBridge's on a Haswell; the chapters set one thread unless told otherwise).
TEST_CORETYPE = $(shell $(BIN)/python -c "import numpy; from threadpoolctl import threadpool_info as t; \
    a = {i.get('architecture') for i in t() if i.get('internal_api') == 'openblas'}; \
    print('SandyBridge' if 'Haswell' in a else 'Haswell')")
TEST_BLAS = $(if $(filter x86_64,$(shell uname -m)),OPENBLAS_CORETYPE=$(TEST_CORETYPE)) OPENBLAS_NUM_THREADS=2

# Lint, the book build, tests and strict nbval always all run; the target fails if any fails.
# The book build executes the chapters one after another, on one core: the tests that need no built book run
# beside it on the other (their report, _build/test-unbuilt.log, printed when they end); then the book tiers,
# which read the built HTML and the build's executed notebooks, on all cores (a chapter's, a page's or a
# grading batch's tests on one worker).
BOOK_TIERS := book or browser or live
test: $(STAMP) ## before you stop, as CI: lint, the book build, every tier, strict nbval
	@status=0; \
	$(MAKE) --no-print-directory lint || status=1; \
	mkdir -p _build; \
	$(BIN)/python -m pytest -m "not ($(BOOK_TIERS))" --durations=10 > _build/test-unbuilt.log 2>&1 & \
	unbuilt=$$!; \
	$(TEST_BLAS) $(MAKE) --no-print-directory book || status=1; \
	$(BIN)/python -m pytest -m "$(BOOK_TIERS)" $(WORKERS) --dist loadgroup --no-loadscope-reorder \
	    --durations=20 || status=1; \
	wait $$unbuilt || status=1; \
	cat _build/test-unbuilt.log; \
	$(BIN)/python -m pytest -p plugins.nbval_build --nbval-build \
	    --nbval-sanitize-with nbval_sanitize.cfg book/ || status=1; \
	exit $$status

# RELEASE=1: refuse to build, or to call the build a release, while _config.yml names a placeholder repository.
# The BLAS settings the chapters are executed with, kept in a file that every notebook page depends on
# (_ext/library_dependencies.py): rewritten only when they change, so a change re-executes the book.
BLAS_ENV := OPENBLAS_CORETYPE=$(OPENBLAS_CORETYPE) OPENBLAS_NUM_THREADS=$(OPENBLAS_NUM_THREADS)

book: $(STAMP) ## execute the notebooks and build the HTML book, _build/html (RELEASE=1: a release)
	$(if $(RELEASE),$(BIN)/python scripts/check_release.py config)
	@mkdir -p _build; echo "$(BLAS_ENV)" | cmp -s - _build/blas-env || echo "$(BLAS_ENV)" > _build/blas-env
	$(BIN)/jupyter-book build . -nW --keep-going
	$(if $(RELEASE),$(BIN)/python scripts/check_release.py pages)
	@echo "Open $(CURDIR)/_build/html/index.html"

# Re-execute notebooks in place so their stored outputs (what strict nbval compares) are current.
#   make outputs                     every notebook in book/
#   make outputs NB=book/x.ipynb     one notebook
outputs: $(STAMP) ## re-execute notebooks in place, storing their outputs (NB=book/x.ipynb: one)
	$(BIN)/jupyter execute --inplace $(or $(NB),book/*.ipynb)

# The student edition executes nothing: it reads the notebooks `make book` executed and the {eval} values it
# recorded (_ext/student_edition.py), so it is built right after it, and takes a small part of its time.
student-book: book ## the book without its solutions, for a class: _build/student/html (runs make book first)
	$(BIN)/python scripts/student_book.py

pdf: $(STAMP) ## the built book printed to one PDF, _build/pdf/book.pdf (after make book)
	$(BIN)/python scripts/make_pdf.py

screenshots: $(STAMP) ## every page whole, light and dark theme, to look at: _build/screenshots (after make book)
	$(BIN)/python scripts/screenshots.py

lab: $(STAMP) ## JupyterLab on the book, to run the chapters live
	$(BIN)/jupyter lab

assignments: $(STAMP) ## student notebooks and autograders, _build/assignments (after make book)
	$(BIN)/geron-assignments make

lint: $(STAMP) ## ruff, and lint-imports (the library's layers)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

clean: ## remove build output (_build)
	rm -rf _build

distclean: clean ## clean, and remove .venv and the tools' caches
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis .ruff_cache
