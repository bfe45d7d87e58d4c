# Build and test the book and its library. GNU make.
#   make          same as `make test`
#   make test     lint, the book build (as `make book`), tests/ (unit tests, the Hugging Face interop
#                 tests, then the HTML and browser tests of the built book) and strict nbval on every
#                 notebook in book/; installs the optional Hugging Face extra (torch CPU wheel +
#                 transformers) first, so that the interop tests run
#   make book     execute all notebooks and build the HTML book under _build/html (RELEASE=1: a release,
#                 refused while _config.yml names a placeholder repository)
#   make outputs  re-execute notebooks in place (NB=book/x.ipynb for one)
#   make pdf      the built book printed to one PDF, _build/pdf/book.pdf (Debian's chromium; after make book)
#   make lab      JupyterLab on the book (local): Run All in a chapter shows its numbers in the prose
#   make assignments  per chapter, a student notebook of its exercises (no solutions) and an otter
#                 autograder, under _build/assignments (assignments/spec.yml; README, "For teachers")
#   make lint     ruff, and lint-imports (the library's layers: pyproject.toml [tool.importlinter])
#   make clean    remove build output

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HF_STAMP := $(VENV)/.installed-hf

# Deterministic hashing in tests and notebook kernels (kernels inherit the environment).
export PYTHONHASHSEED := 0
# Let the venv's Jupyter data dir (its python3 kernelspec) win over user/system ones.
export JUPYTER_PREFER_ENV_PATH := 1
# Use platformdirs locations now and silence jupyter_core's migration warning.
export JUPYTER_PLATFORM_DIRS := 1

.DEFAULT_GOAL := test
.PHONY: test book lint clean distclean install install-hf outputs lab assignments pdf

install: $(STAMP)

install-hf: $(HF_STAMP)

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -r requirements.txt
	$(BIN)/python -m pip check
	# Register a python3 kernelspec pointing at this venv's interpreter, so that
	# jupyter-book and nbval can never pick up another Python's kernel.
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)"
	touch $@

# The optional `hf` extra (pyproject.toml): only the tests need it; the book and Binder do not.
$(HF_STAMP): $(STAMP) pyproject.toml
	$(BIN)/python -m pip install -e '.[hf]'
	$(BIN)/python -m pip check
	touch $@

# Lint, the book build, tests and strict nbval always all run; the target fails if any fails.
# The book is built first because tests/book_site/ checks the built HTML in headless chromium.
test: $(STAMP) $(HF_STAMP)
	@status=0; \
	$(MAKE) --no-print-directory lint || status=1; \
	$(MAKE) --no-print-directory book || status=1; \
	$(BIN)/python -m pytest tests || status=1; \
	$(BIN)/python -m pytest --nbval --nbval-current-env \
	    --nbval-sanitize-with nbval_sanitize.cfg book/ || status=1; \
	exit $$status

# RELEASE=1: refuse to build, or to call the build a release, while _config.yml names a placeholder repository.
book: $(STAMP)
	$(if $(RELEASE),$(BIN)/python scripts/check_release.py config)
	$(BIN)/jupyter-book build . -nW --keep-going
	$(if $(RELEASE),$(BIN)/python scripts/check_release.py pages)
	@echo "Open $(CURDIR)/_build/html/index.html"

# Re-execute notebooks in place so their stored outputs (what strict nbval compares) are current.
#   make outputs                     every notebook in book/
#   make outputs NB=book/x.ipynb     one notebook
outputs: $(STAMP)
	$(BIN)/jupyter execute --inplace $(or $(NB),book/*.ipynb)

pdf: $(STAMP)
	$(BIN)/python scripts/make_pdf.py

lab: $(STAMP)
	$(BIN)/jupyter lab

assignments: $(STAMP)
	$(BIN)/python scripts/assignments.py make

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis .ruff_cache
