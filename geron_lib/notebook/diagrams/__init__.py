"""Pictures drawn from an ``EncoderConfig``: every size and parameter count they show comes from the config
and the library's counts, so a picture changes when a slider changes the config. One module per chapter
draws its pictures on the engine of :mod:`.canvas`:

- :mod:`.encoder_block`: one encoder layer (the quickstart),
- :mod:`.embeddings`: ALBERT's embedding path (chapter 1, appendix A1),
- :mod:`.sharing`: cross-layer sharing and its relatives (chapters 2 and 5),
- :mod:`.attention`: the output projection, splitting heads and a head's change of basis (chapter 3),
- :mod:`.masking`: masking timelines (chapter 4),
- :mod:`.interop`: a weight's layout in transformers and in the library (appendix A1),
- :mod:`.training`: one block as a computational graph (appendix A4).

Every diagram function returns ``(fig, alt)``: the matplotlib Figure and a description of the picture in
words (for the cell's alt text). Given ``ax``, it draws into those axes instead (a panel of an explorer)
and returns their figure; the axes must sit in a figure without a layout engine
(:func:`geron_lib.notebook.plots.fixed_layout`) and be at least the diagram's size in inches
(:data:`SIZES`), since the diagrams are laid out in inches at fixed font sizes.

Artists carry ids (``gid``) that say what they are (:mod:`.canvas` lists them); tests read the pictures
through them, and :func:`svg` writes them as element ids. A notebook cell shows a diagram with
:func:`show` (SVG), not by ending with the figure (the inline backend's PNG). Everything here is imported
from this package: ``from geron_lib.notebook.diagrams import embedding_diagram, show``.
"""

from .attention import basis_change_diagram, head_split_diagram, output_projection_diagram
from .canvas import CYCLE, GREY, LABEL, ROLE, SIZES, SMALL, TITLE, show, svg
from .embeddings import embedding_diagram
from .encoder_block import encoder_block_diagram
from .interop import weight_layout_diagram
from .masking import MAX_DRAWN_EPOCHS, SCHEDULE_LABELS, masking_timeline_diagram
from .sharing import RECURRENCE_KINDS, recurrence_diagram, sharing_diagram
from .training import block_graph_diagram

__all__ = [
    "CYCLE", "GREY", "LABEL", "MAX_DRAWN_EPOCHS", "RECURRENCE_KINDS", "ROLE", "SCHEDULE_LABELS", "SIZES",
    "SMALL",
    "TITLE", "basis_change_diagram", "block_graph_diagram", "embedding_diagram", "encoder_block_diagram",
    "head_split_diagram",
    "masking_timeline_diagram", "output_projection_diagram", "recurrence_diagram", "sharing_diagram", "show",
    "svg", "weight_layout_diagram",
]
