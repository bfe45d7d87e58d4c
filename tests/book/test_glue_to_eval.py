"""scripts/glue_to_eval.py: glue calls become assignments and glue roles {eval} roles, whatever needs a
person is reported with nothing written, and every chapter is either converted or listed as not yet."""

import importlib.util
import sys

import nbformat
import pytest
from book_live.test_live import NOT_YET_CONVERTED
from book_site.pages import ROOT, notebook_pages, source

_spec = importlib.util.spec_from_file_location("glue_to_eval", ROOT / "scripts" / "glue_to_eval.py")
glue_to_eval = importlib.util.module_from_spec(_spec)
sys.modules["glue_to_eval"] = glue_to_eval  # its dataclass looks its module up
_spec.loader.exec_module(glue_to_eval)

md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell


def _notebook(*cells):
    return nbformat.v4.new_notebook(cells=list(cells))


def test_glue_calls_become_assignments_and_roles_become_eval():
    nb = _notebook(
        code("%matplotlib inline\nimport numpy as np\nfrom myst_nb import glue\n\ndirect = 30000 * 768"),
        code('glue("direct", direct, display=False)\nglue("share", 100 * 0.83,\n     display=False)\n'
             'glue("E_star", float(np.float64(747.3)), display=False)'),
        md("{glue:text}`direct:,` parameters, {glue:text}`share:.1f`%, $E^* =$ {glue:text}`E_star` and "
           "{glue:md}`direct`."),
    )
    result = glue_to_eval.convert(nb)
    assert result.problems == []
    cells = result.nb.cells
    assert cells[0].source == "%matplotlib inline\nimport numpy as np\n\ndirect = 30000 * 768"
    assert cells[1].source == "share = 100 * 0.83\nE_star = float(np.float64(747.3))"  # glue(x, x) goes
    assert cells[2].source == ('{eval}`f"{direct:,}"` parameters, {eval}`f"{share:.1f}"`%, $E^* =$ '
                               "{eval}`E_star` and {eval}`direct`.")
    assert result.nb.metadata["mystnb"] == {"execution_mode": "inline"}
    assert "glue" in nb.cells[1].source, "the notebook passed in is left alone"


def test_a_cell_of_nothing_but_same_name_glue_calls_disappears():
    nb = _notebook(code("x = 1"), code('glue("x", x, display=False)'), md("{glue:text}`x`"))
    assert [c.source for c in glue_to_eval.convert(nb).nb.cells] == ["x = 1", "{eval}`x`"]


def test_a_multi_line_value_keeps_its_parentheses():
    nb = _notebook(code('glue("total", sum([1,\n                 2]), display=False)'),
                   md("{glue:text}`total`"))
    assert glue_to_eval.convert(nb).nb.cells[0].source == "total = sum([1,\n                 2])"
    nb = _notebook(code('glue("total", 1 +\n     2, display=False)'), md("{glue:text}`total`"))
    converted = glue_to_eval.convert(nb).nb.cells[0].source
    assert converted == "total = (\n1 +\n     2\n)"
    assert compile(converted, "cell", "exec")


@pytest.mark.parametrize("cell, text, problem", [
    (code('for k in "ab":\n    glue(f"n_{k}", 1, display=False)'), "{glue:text}`n_a`", "inside a block"),
    (code('key = "n"\nglue(key, 1, display=False)'), "{glue:text}`n`", "literal key"),
    (code('glue("n", 1)'), "{glue:text}`n`", "only display=False"),
    (code('n = 2\nglue("n", 1, display=False)'), "{glue:text}`n`", "also a variable"),
    (code('glue("max", 1, display=False)'), "{glue:text}`max`", "not a free Python name"),
    (code('glue("n", 1, display=False)'), "{glue:text}`other.ipynb::n`", "cross-page"),
    (code('glue("n", 1, display=False)'), "{glue:md}`n:,`", "format on a non-text role"),
])
def test_what_needs_a_person_is_reported(cell, text, problem):
    result = glue_to_eval.convert(_notebook(cell, md(text)))
    assert any(problem in p for p in result.problems), result.problems


def test_prose_above_the_code_that_defines_its_number_is_reported():
    """Both renderers evaluate in reading order: a value glued below the prose that quotes it must move up."""
    nb = _notebook(md("The answer is {glue:text}`answer`."), code('glue("answer", 42, display=False)'))
    problems = glue_to_eval.convert(nb).problems
    assert problems == ["cell 0: {eval}`answer` reads 'answer', defined in cell 1: move the code that "
                        "defines it above this cell"]


def test_the_command_writes_all_or_nothing(tmp_path, capsys):
    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    nbformat.write(_notebook(code('glue("n", 1, display=False)'), md("{glue:text}`n`")), good)
    nbformat.write(_notebook(md("{glue:text}`n`"), code('glue("n", 1, display=False)')), bad)
    before = bad.read_bytes(), good.read_bytes()
    assert glue_to_eval.main(["--check", str(good), str(bad)]) == 1
    assert (bad.read_bytes(), good.read_bytes()) == before
    assert glue_to_eval.main([str(good), str(bad)]) == 1
    assert bad.read_bytes() == before[0]
    assert nbformat.read(good, as_version=4).cells[1].source == "{eval}`n`"
    assert "bad.ipynb: not converted" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        glue_to_eval.main([str(tmp_path / "missing.ipynb")])


@pytest.mark.parametrize("docname", notebook_pages())
def test_every_chapter_is_converted_or_listed_as_not_yet(docname):
    nb = nbformat.read(source(docname), as_version=4)
    result = glue_to_eval.convert(nb)
    if docname in NOT_YET_CONVERTED:
        assert result.nb != nb, f"{docname} has nothing left to convert: take it off NOT_YET_CONVERTED"
    else:
        assert result.problems == [] and result.nb == nb, (
            f"{docname} still uses glue: run scripts/glue_to_eval.py on it, or list it in NOT_YET_CONVERTED")
