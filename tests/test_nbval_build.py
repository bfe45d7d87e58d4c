"""The plugin that feeds nbval's strict comparison with the build's execution (tests/plugins/nbval_build.py):
it passes equal outputs and fails a changed output, a stale build, a missing build and an unexpected error,
while nbval's markers still apply."""

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

pytest_plugins = ["pytester"]


def notebook(*cells):
    """cells: (source, stdout text or None)"""
    nb = new_notebook()
    for n, (source, text) in enumerate(cells, start=1):
        cell = new_code_cell(source, execution_count=n)
        if text is not None:
            cell.outputs = [new_output("stream", name="stdout", text=text)]
        nb.cells.append(cell)
    return nb


def run(pytester, stored, built, *args):
    (pytester.path / "book").mkdir(exist_ok=True)
    nbformat.write(stored, pytester.path / "book" / "x.ipynb")
    if built is not None:
        (pytester.path / "_build" / "jupyter_execute" / "book").mkdir(parents=True)
        nbformat.write(built, pytester.path / "_build" / "jupyter_execute" / "book" / "x.ipynb")
    return pytester.runpytest("-p", "plugins.nbval_build", "--nbval-build", "book", *args)


def test_equal_outputs_pass(pytester):
    nb = notebook(("print(1)", "1\n"), ("x = 2", None))
    run(pytester, nb, nb).assert_outcomes(passed=2)


def test_a_changed_output_fails_with_the_difference(pytester):
    result = run(pytester, notebook(("print(1)", "1\n")), notebook(("print(1)", "2\n")))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Cell outputs differ*"])


def test_an_ignore_output_marker_is_honoured(pytester):
    source = "# NBVAL_IGNORE_OUTPUT\nprint(1)"
    run(pytester, notebook((source, "1\n")), notebook((source, "2\n"))).assert_outcomes(passed=1)


def test_a_sanitizer_is_applied(pytester):
    (pytester.path / "sanitize.cfg").write_text("[s]\nregex: \\d+ ms\nreplace: T ms\n")
    result = run(pytester, notebook(("t()", "3 ms\n")), notebook(("t()", "4 ms\n")),
                 "--nbval-sanitize-with", "sanitize.cfg")
    result.assert_outcomes(passed=1)


def test_a_stale_build_fails(pytester):
    result = run(pytester, notebook(("print(1)", "1\n")), notebook(("print(2)", "1\n")))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*another version of this cell*"])


def test_a_missing_build_fails(pytester):
    result = run(pytester, notebook(("print(1)", "1\n")), None)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*make book*"])


def test_an_error_in_the_build_fails(pytester):
    built = notebook(("1/0", None))
    built.cells[0].outputs = [new_output("error", ename="ZeroDivisionError", evalue="division by zero",
                                         traceback=["ZeroDivisionError"])]
    result = run(pytester, notebook(("1/0", None)), built)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*caused an exception*"])
