"""A page shows one print as one block when the kernel sent it in pieces (_ext/whole_prints.py): the pieces
are joined exactly, as nbval joins them, and the executed notebook is left as it was."""

import copy
import html
import re
import sys

import nbformat
from book_site.pages import ROOT
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbval.plugin import coalesce_streams as nbval_joined
from sphinx.application import Sphinx

sys.path.insert(0, str(ROOT / "_ext"))  # the Sphinx extensions, imported as Sphinx does (_config.yml)
import whole_prints  # noqa: E402

#: one print cut by a flush between its pieces, an image, then a print with blank lines after it
PIECES = [new_output("stream", name="stdout", text="ids            "),
          new_output("stream", name="stdout", text=" [0, 100, 2]\n"),
          new_output("display_data", data={"text/plain": "<Figure>"}),
          new_output("stream", name="stdout", text="dots\n"),
          new_output("stream", name="stdout", text="\n\n")]
#: one block of output text
BLOCK = re.compile(r'<div class="output stream[^"]*"><div class="highlight"><pre><span></span>(.*?)</pre>',
                   re.S)


def test_consecutive_prints_are_joined_exactly_and_the_outputs_left_as_they_were():
    outputs = copy.deepcopy(PIECES)
    joined = whole_prints.joined_streams(outputs)
    assert [(o["output_type"], o.get("text")) for o in joined] == [
        ("stream", "ids             [0, 100, 2]\n"), ("display_data", None), ("stream", "dots\n\n\n")]
    assert outputs == PIECES
    # as strict nbval compares a cell's streams, when nothing comes between them
    assert joined[0]["text"] == nbval_joined(copy.deepcopy(PIECES[:2]))[0]["text"]


def test_another_stream_or_output_keeps_its_place():
    outputs = [new_output("stream", name="stdout", text="a"), new_output("stream", name="stderr", text="w\n"),
               new_output("stream", name="stdout", text="b\n")]
    assert whole_prints.joined_streams(outputs) == outputs


def test_a_page_built_with_the_extension_shows_the_cut_print_as_one_block(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(f"import sys\nsys.path.insert(0, {str(ROOT / '_ext')!r})\n"
                                 "extensions = ['myst_nb', 'whole_prints']\n"
                                 "nb_execution_mode = 'off'\nnb_merge_streams = True\n", encoding="utf-8")
    cell = new_code_cell("print('ids           ', ids)", execution_count=1, outputs=copy.deepcopy(PIECES))
    nbformat.write(new_notebook(cells=[new_markdown_cell("# Page"), cell], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"}}), src / "index.ipynb")
    app = Sphinx(str(src), str(src), str(tmp_path / "html"), str(tmp_path / "doctrees"), "html",
                 status=None, warningiserror=True)
    app.build()
    page = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    # (the highlighter drops a block's trailing blank lines)
    assert [html.unescape(b) for b in BLOCK.findall(page)] == ["ids             [0, 100, 2]\n", "dots\n"]
    # the notebook the build writes beside the page (the one the student edition and strict nbval read)
    written = nbformat.read(tmp_path / "jupyter_execute" / "index.ipynb", as_version=4)
    assert written.cells[1].outputs == PIECES
