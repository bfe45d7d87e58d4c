"""The diagrams drawn from a config: the numbers they show are the library's counts, their geometry follows
the config, they stay readable over the sliders' ranges, their SVG is byte-identical from run to run, and
bad input is refused."""

import hashlib
import io
import re
import subprocess
import sys

import matplotlib.colors as mpl_colors
import matplotlib.image as mpimg
import numpy as np
import pytest
from figure_checks import (
    MIN_PX,
    arrow_tip,
    arrows,
    boxes,
    count,
    layout_problems,
    numbers,
    shaft_width,
    shown_px,
    texts,
)
from IPython.core.formatters import DisplayFormatter
from matplotlib.figure import Figure

from geron_lib import PRESETS, EncoderConfig, count_parameters
from geron_lib.config import SHARING
from geron_lib.costs.params import (
    attention_param_items,
    ffn_params,
    layer_norm_params,
    linear_params,
    redundant_attention_params,
    stored_copies,
)
from geron_lib.interop.hf_weights import hf_names
from geron_lib.notebook import diagrams as D
from geron_lib.notebook.plots import new_figure
from geron_lib.pretraining.masking import SCHEDULES, MaskingSchedule, draws_per_sequence
from geron_lib.pretraining.tokenizer import WordTokenizer

CONFIG_DIAGRAMS = (D.encoder_block_diagram, D.embedding_diagram, D.output_projection_diagram,
                   D.sharing_diagram, D.recurrence_diagram, D.head_split_diagram, D.basis_change_diagram,
                   D.block_graph_diagram)
BOOK = ["bert-base", "albert-base-v2", "tiny-bert", "tiny-albert", "roberta-base", "albert-xxlarge-v2"]


def _config(H, h=None, *, E=None, L=12, V=30000, **kw):
    """A config at the sliders' sizes: heads of 64 unless h is given, FFN 4H."""
    return EncoderConfig(vocab_size=V, embedding_size=E, hidden_size=H, num_hidden_layers=L,
                         num_attention_heads=h or max(1, H // 64), intermediate_size=4 * H, **kw)


# 1. the encoder block ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", BOOK)
@pytest.mark.parametrize("form", ["concat", "sum"])
def test_block_shows_the_library_counts(name, form):
    config = PRESETS[name].replace(attention=form)
    H, h, F = config.hidden_size, config.num_attention_heads, config.intermediate_size
    fig, alt = D.encoder_block_diagram(config)
    items, c = attention_param_items(H, h, form), count_parameters(config)
    assert count(fig, "W_Q") + count(fig, "W_K") == items["query_key"]
    assert count(fig, "W_V") == items["value"]
    assert count(fig, "W_O" if form == "concat" else "b_O") == items["output"]
    assert count(fig, "W_1") + count(fig, "W_2") == ffn_params(H, F) == c.ffn_per_layer
    assert count(fig, "LN_1") + count(fig, "LN_2") == c.layer_norms_per_layer
    assert numbers(fig, "count-layer") == [c.attention_per_layer, c.ffn_per_layer, c.layer_norms_per_layer,
                                           c.attention_per_layer + c.ffn_per_layer + c.layer_norms_per_layer]
    shown = texts(fig)
    assert numbers(fig, "detail-W_1") == [H, F, F] and numbers(fig, "detail-W_2") == [F, H, H]
    assert shown["label-act"].get_text() == config.hidden_act
    assert ("box-W_O" in {p.get_gid() for p in boxes(fig, "")}) == (form == "concat")  # no W_O in sum
    assert f"H = {H}" in alt and f"F = {F}" in alt and f"{form} attention" in alt


def test_block_of_bert_base_holds_its_published_layer():
    fig, _ = D.encoder_block_diagram(PRESETS["bert-base"])
    assert count(fig, "layer") == 7_087_872  # 12 of these + embeddings 23,837,184 = BERT-base's 109,482,240
    assert count(fig, "W_Q") == 768 * 768 + 768


# 2. the embedding path -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", BOOK)
def test_embedding_path_shows_the_library_counts(name):
    config = PRESETS[name]
    fig, alt = D.embedding_diagram(config)
    c = count_parameters(config)
    assert count(fig, "token_table") == c.token_embeddings
    assert count(fig, "position_table") == c.position_embeddings
    assert count(fig, "type_table") == c.token_type_embeddings
    assert count(fig, "LN") == c.embedding_layer_norm
    assert count(fig, "embeddings") == c.embeddings
    if config.has_embedding_projection:
        assert count(fig, "W_P") == c.embedding_projection == linear_params(config.E, config.hidden_size)
    assert numbers(fig, "detail-token_table") == [config.vocab_size, config.E]
    assert f"E = {config.E}" in alt and f"V = {config.vocab_size}" in alt and f"{c.embeddings:,}" in alt


def test_the_projection_box_is_there_exactly_when_the_config_has_one():
    albert = PRESETS["albert-base-v2"]
    for config, projected in ((albert, True), (albert.replace(embedding_size=None), False),
                              (albert.replace(embedding_size=768), False),
                              (albert.replace(embedding_size=768, embedding_projection=True), True),
                              (PRESETS["bert-base"], False)):
        assert config.has_embedding_projection == projected
        fig, alt = D.embedding_diagram(config)
        assert len(boxes(fig, "W_P")) == projected
        assert ("text-no_projection" in texts(fig)) == (not projected)
        assert ("no projection" in alt) == (not projected)
    fig, _ = D.embedding_diagram(albert.replace(embedding_size=768, embedding_projection=True))
    assert count(fig, "W_P") == 768 * 768 + 768  # transformers' AlbertModel maps E -> H even at E = H


def test_the_arrows_are_as_wide_as_E_then_H_and_roberta_has_one_token_type():
    def width(fig, name):
        return shaft_width(arrows(fig, name)[0])

    albert = PRESETS["albert-base-v2"]
    figs = [D.embedding_diagram(albert.replace(embedding_size=E))[0] for E in (16, 128, 768)]
    for name in ("token_table", "to_LN"):
        assert width(figs[0], name) < width(figs[1], name) < width(figs[2], name)
    assert width(figs[0], "to_W_P") < width(figs[0], "to_hidden") == width(figs[2], "to_hidden")
    fig, _ = D.embedding_diagram(PRESETS["roberta-base"])
    assert numbers(fig, "detail-type_table") == [1, 768]
    fig, _ = D.embedding_diagram(PRESETS["bert-base"].replace(type_vocab_size=0))
    assert not boxes(fig, "type_table") and "type_table" not in {g.split("-", 1)[1] for g in texts(fig)}


# 3. the output projection --------------------------------------------------------------------------------

@pytest.mark.parametrize("H, h", [(768, 12), (256, 1), (4096, 64), (1024, 16), (32, 32), (384, 3)])
def test_output_projection_draws_a_block_per_head_and_both_counts(H, h):
    fig, alt = D.output_projection_diagram(_config(H, h))
    columns, rows = boxes(fig, "W_V_head"), boxes(fig, "W_O_head")
    maps = sorted((p for p in boxes(fig, "W_V") if re.fullmatch(r"box-W_V\d+", p.get_gid())),
                  key=lambda p: int(p.get_gid()[7:]))  # the sum form's W'_V,i, drawn back to front
    assert len(columns) == len(rows) == len(maps) == h
    W_V, W_O = (next(p for p in boxes(fig, name) if p.get_gid() == f"box-{name}") for name in ("W_V", "W_O"))
    assert sum(p.get_width() for p in columns) == pytest.approx(W_V.get_width())  # d_head columns each
    assert sum(p.get_height() for p in rows) == pytest.approx(W_O.get_height())  # d_head rows each
    assert np.allclose([p.get_width() for p in columns], columns[0].get_width())
    assert np.allclose([p.get_height() for p in rows], rows[0].get_height())
    assert np.allclose([p.get_width() for p in maps], maps[0].get_width())  # every W'_V,i is H x H
    for i in range(h):  # one colour per head, in W_V's columns, W_O's rows and the map W'_V,i
        colour = columns[i].get_facecolor()
        assert rows[i].get_facecolor() == colour == maps[i].get_facecolor()
    if h > 1:
        assert columns[0].get_facecolor() != columns[1].get_facecolor()
    concat, summed = attention_param_items(H, h, "concat"), attention_param_items(H, h, "sum")
    assert count(fig, "concat_values") == concat["value"] + concat["output"]
    assert count(fig, "concat") == sum(concat.values())
    assert count(fig, "sum_values") == summed["value"] + summed["output"] == h * H * H + H
    assert count(fig, "sum") == sum(summed.values())
    assert f"H = {H}" in alt and f"d_head = {H // h}" in alt and f"{sum(summed.values()):,}" in alt


@pytest.mark.parametrize("name", BOOK)
def test_head_split_cuts_values_heads_and_w_o_into_one_block_per_head(name):
    config = PRESETS[name]
    H, h, d = config.hidden_size, config.num_attention_heads, config.d_head
    fig, alt = D.head_split_diagram(config)
    for part in ("values", "merged", "W_O"):  # columns of the values, rows of W_O: one strip per head
        assert len(boxes(fig, f"{part}_head")) == h
    assert len(boxes(fig, "split")) == len(boxes(fig, "heads")) == h  # one tile per head, before and after
    assert numbers(fig, "text-split_sizes") == numbers(fig, "text-heads_sizes") == [h, d]
    assert numbers(fig, "text-values_sizes") == numbers(fig, "text-merged_sizes") == [H]
    assert numbers(fig, "text-W_O_sizes") == [H, H] and h * d == H
    strips = [b.get_width() for b in boxes(fig, "values_head")]
    assert strips == pytest.approx([1.2 / h] * h)  # d_head columns each, side by side
    assert f"(B, {h}, T, {d})" in alt and f"(B, T, {H})" in alt


@pytest.mark.parametrize("name", BOOK)
def test_basis_change_puts_g_and_its_inverse_between_both_products_factors(name):
    config = PRESETS[name]
    H, h, d = config.hidden_size, config.num_attention_heads, config.d_head
    fig, alt = D.basis_change_diagram(config)
    for row in ("values", "queries"):
        left, right, product = (boxes(fig, f"{row}_{part}")[0] for part in ("left", "right", "product"))
        G, G_inv = boxes(fig, f"{row}_G")  # G and G^-1, one size, between the two factors
        assert (G.get_width(), G.get_height()) == (G_inv.get_width(), G_inv.get_height())
        assert left.get_x() + left.get_width() < G.get_x() < G_inv.get_x() < right.get_x()
        assert left.get_height() == product.get_height() == right.get_width() == product.get_width()
        assert left.get_width() == right.get_height() < left.get_height()  # H x d_head, d_head x H
        assert numbers(fig, f"text-{row}_left_shape") == [H, d]
        assert numbers(fig, f"text-{row}_right_shape") == [d, H]
        assert numbers(fig, f"text-{row}_product_shape") == [H, H]
    assert count(fig, "per_head") == d * d
    assert count(fig, "per_product") == H * H // h
    assert count(fig, "redundant") == redundant_attention_params(H, h, "concat") == 2 * H * H // h + 2 * H
    assert f"{redundant_attention_params(H, h, 'concat'):,}" in alt


# 4. sharing ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("sharing", SHARING)
@pytest.mark.parametrize("L", [1, 2, 12, 24])
def test_sharing_draws_an_arrow_per_layer_to_the_stored_copies(sharing, L):
    config = PRESETS["albert-base-v2"].replace(num_hidden_layers=L, sharing=sharing)
    fig, alt = D.sharing_diagram(config)
    c, (c_A, c_F) = count_parameters(config), stored_copies(config)
    assert len(boxes(fig, "layer")) == L
    assert len(arrows(fig, "attention")) == len(arrows(fig, "ffn")) == L
    assert len(boxes(fig, "attention")) == c_A and len(boxes(fig, "ffn")) == c_F
    assert numbers(fig, "count-attention") == [c_A, c.attention_per_layer]
    assert numbers(fig, "count-ffn") == [c_F, c.ffn_per_layer]
    assert count(fig, "encoder") == c.encoder == (c_A * c.attention_per_layer + c_F * c.ffn_per_layer
                                                  + (c_A + c_F) * layer_norm_params(768))
    for kind, stores in (("attention", boxes(fig, "attention")), ("ffn", boxes(fig, "ffn"))):
        for i, arrow in enumerate(arrows(fig, kind)):  # every layer's arrow ends on its stored sublayer
            store = stores[0 if len(stores) == 1 else i].get_bbox()
            tip = arrow_tip(arrow)  # attention above the layers, FFN below
            assert store.x0 <= tip[0] <= store.x1
            assert tip[1] == pytest.approx(store.y0 if kind == "attention" else store.y1)
    assert f"L = {L} layer" in alt and f"'{sharing}'" in alt and f"{c.encoder:,}" in alt


# 5. sharing among its relatives -------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["albert-base-v2", "bert-large", "tiny-albert"])
def test_recurrence_shows_what_each_relative_stores_and_how_deep_it_runs(name):
    config = PRESETS[name]
    L = config.num_hidden_layers
    fig, alt = D.recurrence_diagram(config)
    unshared = count_parameters(config.replace(sharing="none")).encoder
    shared = count_parameters(config.replace(sharing="all")).encoder
    assert count(fig, "bert_stored") == unshared
    assert count(fig, "albert_stored") == count(fig, "universal_stored") == count(fig, "equilibrium_stored")
    assert count(fig, "albert_stored") == shared
    assert texts(fig)["label-bert2"].get_text() == f"block {L}"
    assert " ".join(texts(fig)["text-albert_depth"].get_text().split()) == f"runs it exactly L = {L} times"
    for name_ in ("BERT", "ALBERT", "Universal Transformer", "Deep equilibrium model"):
        assert name_ in alt
    assert f"{unshared:,}" in alt and f"{shared:,}" in alt


# 6. masking timelines ------------------------------------------------------------------------------------

@pytest.mark.parametrize("epochs, copies", [(8, 3), (30, 10), (1, 1), (5, 7)])
def test_masking_timeline_shows_which_masking_each_epoch_uses(epochs, copies):
    fig, alt = D.masking_timeline_diagram(epochs, copies)
    tokenizer = WordTokenizer([f"w{i}" for i in range(20)])
    ids = tokenizer.encode_batch(["w1 w2 w3 w4"], 6)
    for schedule in SCHEDULES:
        real = MaskingSchedule(ids, tokenizer, schedule, copies=copies, rng=0)
        shown = [int(texts(fig)[f"label-{schedule}_e{e}"].get_text()) for e in range(epochs)]
        assert shown == [real.mask_index(e) for e in range(epochs)]
        assert len(boxes(fig, f"{schedule}_e")) == epochs
        assert count(fig, f"{schedule}_draws") == draws_per_sequence(epochs, schedule, copies)
        if schedule != "dynamic":  # what preprocessing stores is what the rows cycle through
            assert len({*shown}) == min(epochs, len(real.stored))
    assert f"{epochs} epoch" in alt and f"static x {copies}" in alt


# 7. one block as a computational graph (appendix A4) -----------------------------------------------------

GRAPH_NODES = {"attention_probs_backward": ["query", "key", "scores", "softmax"],
               "concat_attention_backward": ["value", "heads", "W_O"],
               "layer_norm_backward": ["LN_1", "LN_2"],
               "feed_forward_backward": ["W_1", "act", "W_2"],
               "block_backward": ["add_1", "add_2"]}


@pytest.mark.parametrize("name", BOOK)
def test_block_graph_colours_every_forward_node_by_the_backward_that_differentiates_it(name):
    config = PRESETS[name]
    fig, alt = D.block_graph_diagram(config)
    for listing, nodes in GRAPH_NODES.items():
        colour = D.training.BACKWARD[listing]
        for node in nodes:
            (patch,) = boxes(fig, node)
            assert patch.get_edgecolor()[:3] == pytest.approx(mpl_colors.to_rgb(colour)), node
        assert texts(fig)[f"text-legend-{listing}"].get_text() == listing and listing in alt
    shown = {gid: t.get_text() for gid, t in texts(fig).items()}
    assert shown["label-act"] == config.hidden_act
    assert shown["detail-W_1"] == f"(B, T, {config.intermediate_size})"
    assert shown["detail-softmax"] == f"$A_i$: (B, {config.num_attention_heads}, T, T)"
    assert f"H = {config.hidden_size}" in alt and f"d_head = {config.d_head}" in alt
    arrows_drawn = [p for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith("flow-")]
    assert len(arrows_drawn) >= 16  # every forward edge and both residual lines


def test_block_graph_refuses_the_sum_form_it_does_not_draw():
    with pytest.raises(ValueError, match="concat form"):
        D.block_graph_diagram(PRESETS["albert-base-v2"].replace(attention="sum"))


# readability, for the configs of the book and the sliders' ranges -------------------------------------------

def _layout_cases():
    for name in BOOK + ["bert-large", "albert-large-v2", "albert-xlarge-v2", "tiny-roberta"]:
        for fn in CONFIG_DIAGRAMS:
            yield fn, PRESETS[name]
    for H, h, form in [(256, 1, "sum"), (256, 64, "concat"), (4096, 1, "concat"), (4096, 64, "sum"),
                       (2048, 32, "sum"), (32, 32, "concat")]:
        yield D.encoder_block_diagram, _config(H, h, attention=form)
        yield D.output_projection_diagram, _config(H, h)
        yield D.head_split_diagram, _config(H, h)
    for V in (1000, 250000):
        for H in (256, 4096):
            for E in (16, H):
                yield D.embedding_diagram, _config(H, E=E, V=V)
    for L in (1, 2, 3, 24):
        for sharing in SHARING:
            yield D.sharing_diagram, _config(4096, L=L, sharing=sharing)
        yield D.recurrence_diagram, _config(4096, L=L)


# 6. a weight's layout in transformers and in the library (appendix A1) -----------------------------------

@pytest.mark.parametrize("name", BOOK)
def test_weight_layout_draws_the_ffn_weight_both_ways_and_names_every_weight_of_layer_0(name):
    config = PRESETS[name]
    fig, alt = D.weight_layout_diagram(config)
    H, F = config.hidden_size, config.intermediate_size
    shown = {gid: t.get_text() for gid, t in texts(fig).items()}
    assert f"({F}, {H})" in shown["text-theirs_caption"] and f"({H}, {F})" in shown["text-ours_caption"]
    theirs, ours = (fig.axes[0].patches[i] for i in (0, 1))
    assert (theirs.get_gid(), ours.get_gid()) == ("box-theirs", "box-ours")
    # drawn to scale: rows down, columns across, so one is the other turned
    assert theirs.get_height() / theirs.get_width() == pytest.approx(F / H, rel=1e-6)
    assert ours.get_width() / ours.get_height() == pytest.approx(F / H, rel=1e-6)
    weights = {k: v for k, v in hf_names(config).items() if k.startswith("layers.0.") and ".W_" in k}
    prefix = shown["text-map_prefix"].replace("\n", "")
    for key, state_name in weights.items():
        letter = key.rsplit(".", 1)[-1]
        assert shown[f"text-map_{letter}"].endswith(state_name.removeprefix(prefix)), key
        assert state_name.startswith(prefix)
    assert len([g for g in shown if g.startswith("text-map_W_")]) == len(weights) == 6
    # readable in the book's column, and the same SVG every time
    assert layout_problems(fig) == []
    smallest = min(t.get_fontsize() for t in texts(fig).values() if t.get_text().strip())
    assert shown_px(smallest, fig.get_figwidth()) >= MIN_PX
    assert D.svg(fig) == D.svg(D.weight_layout_diagram(config)[0])
    assert all(part in alt for part in (f"({F}, {H})", f"({H}, {F})", *weights.values().__iter__().__next__()
                                        .removeprefix(prefix).split()))


def test_weight_layout_refuses_a_config_transformers_has_no_model_of():
    with pytest.raises(ValueError, match="pad_token_id"):
        D.weight_layout_diagram(PRESETS["tiny-roberta"])


@pytest.mark.parametrize("fn, config", list(_layout_cases()))
def test_diagrams_stay_readable(fn, config):
    fig, _ = fn(config)
    assert tuple(fig.get_size_inches()) == D.SIZES[fn.__name__.removesuffix("_diagram")]
    assert layout_problems(fig) == []


@pytest.mark.parametrize("epochs, copies", [(1, 1), (8, 3), (29, 10), (30, 10), (30, 30)])
def test_masking_timelines_stay_readable(epochs, copies):
    fig, _ = D.masking_timeline_diagram(epochs, copies)
    assert layout_problems(fig) == []


@pytest.mark.parametrize("fn, config", [(fn, PRESETS[name]) for fn in CONFIG_DIAGRAMS
                                        for name in ("albert-base-v2", "bert-large")]
                         + [(lambda _: D.masking_timeline_diagram(30, 10), None)])
def test_every_text_shows_at_least_11_px_in_the_books_column(fn, config):
    """The page scales a diagram's SVG down to the column (figure_checks.COLUMN_PX, measured): the smallest
    text, at its size in points and the figure's width in inches, must still show at MIN_PX or more."""
    fig, _ = fn(config)
    sizes = {t.get_fontsize() for t in texts(fig).values() if t.get_text().strip()}
    smallest = shown_px(min(sizes), fig.get_figwidth())
    assert smallest >= MIN_PX, f"{min(sizes)} pt, {fig.get_figwidth()} inches wide: {smallest:.2f} px"


def test_shown_px_scales_a_wide_figure_down_to_the_column_and_never_up():
    assert shown_px(12, 672 / 96) == pytest.approx(16)  # as wide as the column: natural size, 4/3 px a point
    assert shown_px(12, 2 * 672 / 96) == pytest.approx(8)  # twice as wide: half size
    assert shown_px(12, 3.0) == pytest.approx(16)  # narrower: never scaled up


def test_layout_checks_catch_problems():
    fig, _ = D.encoder_block_diagram(PRESETS["bert-base"])
    texts(fig)["count-W_Q"].set_text("590,592 parameters in the query projection")  # wider than its box
    texts(fig)["label-act"].set_fontsize(6)
    texts(fig)["count-layer"].set_position((2.85, 0.9))  # onto the first add & LN box
    problems = layout_problems(fig)
    assert any(p.startswith("count-W_Q") and "spills out of box-W_Q" in p for p in problems)
    assert any(p.startswith("count-W_Q") and "lies on box-W_K" in p for p in problems)
    assert "count-W_Q leaves the figure" in problems
    assert any(p.startswith("count-layer") and "lies on box-LN_1" in p for p in problems)
    assert "label-act: 6.0 pt" in problems


# SVG, drawing into axes, bad input -----------------------------------------------------------------------

def _all_diagrams(config=PRESETS["albert-base-v2"]):
    return [fn(config)[0] for fn in CONFIG_DIAGRAMS] + [D.masking_timeline_diagram(8, 3)[0]]


SVG_IN_A_NEW_PROCESS = """
import hashlib
from geron_lib import PRESETS
from geron_lib.notebook import diagrams as D
config = PRESETS["albert-base-v2"]
figs = [fn(config)[0] for fn in (D.encoder_block_diagram, D.embedding_diagram, D.output_projection_diagram,
                                 D.sharing_diagram, D.recurrence_diagram, D.head_split_diagram,
                                 D.basis_change_diagram, D.block_graph_diagram)]
figs.append(D.masking_timeline_diagram(8, 3)[0])
print(" ".join(hashlib.sha256(D.svg(f).encode()).hexdigest() for f in figs))
"""


@pytest.mark.slow
def test_svg_is_byte_identical_from_render_to_render_and_process_to_process():
    first = [D.svg(f) for f in _all_diagrams()]
    assert first == [D.svg(f) for f in _all_diagrams()]
    assert all(s.startswith("<?xml") and "dc:date" not in s for s in first)
    run = subprocess.run([sys.executable, "-c", SVG_IN_A_NEW_PROCESS], capture_output=True, text=True,
                         check=True)
    assert run.stdout.split() == [hashlib.sha256(s.encode()).hexdigest() for s in first]
    other = D.svg(D.embedding_diagram(PRESETS["albert-base-v2"].replace(embedding_size=256))[0])
    assert other != first[1]  # a different config, a different picture
    assert 'id="box-W_P"' in first[1] and 'id="count-embeddings"' in first[1]


def test_show_gives_the_notebook_the_svg_alone_the_same_every_run():
    """A cell ending with show(fig) outputs image/svg+xml (no PNG), the same bytes every run (strict nbval
    compares SVG outputs), with the diagram's ids."""
    formatter = DisplayFormatter()
    fig, _ = D.head_split_diagram(PRESETS["bert-base"])
    data, metadata = formatter.format(D.show(fig))
    assert set(data) == {"image/svg+xml", "text/plain"} and not metadata
    picture = data["image/svg+xml"]
    assert picture.startswith("<svg") and 'width="648pt"' in picture and 'id="text-W_O_rule"' in picture
    again, _ = formatter.format(D.show(D.head_split_diagram(PRESETS["bert-base"])[0]))
    assert again == data
    other, _ = formatter.format(D.show(D.head_split_diagram(PRESETS["bert-large"])[0]))
    assert other["image/svg+xml"] != picture


def test_draws_into_given_axes_and_replaces_what_it_drew():
    fig, (chart, panel) = new_figure(2, 1, width=9, height=7)
    fig.set_layout_engine(None)
    chart.set_position((0.1, 0.6, 0.85, 0.35))
    panel.set_position((0, 0, 1, D.SIZES["embedding"][1] / 7))
    chart.plot([0, 1], [0, 1])
    out, alt = D.embedding_diagram(PRESETS["albert-base-v2"], ax=panel)
    assert out is fig and len(chart.lines) == 1 and len(boxes(fig, "W_P")) == 1
    D.embedding_diagram(PRESETS["bert-base"], ax=panel)  # no projection: the first drawing's box is gone
    assert not boxes(fig, "W_P") and len(boxes(fig, "token_table")) == 1
    assert layout_problems(fig) == []


def _panel(name):
    fig, ax = new_figure(width=D.SIZES[name][0], height=D.SIZES[name][1])
    fig.set_layout_engine(None)
    ax.set_position((0, 0, 1, 1))
    return fig, ax


def _pixels(fig) -> np.ndarray:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=50)
    return mpimg.imread(io.BytesIO(buffer.getvalue()))


ALBERT = PRESETS["albert-base-v2"]
REDRAWS = {  # a slider's moves: boxes, heads, layers and epochs appear and disappear
    D.embedding_diagram: [ALBERT, PRESETS["bert-base"], _config(4096, E=16, V=250000),
                          PRESETS["roberta-base"], ALBERT.replace(type_vocab_size=0), ALBERT],
    D.output_projection_diagram: [ALBERT.replace(num_attention_heads=h) for h in (12, 1, 64, 16, 3)],
    D.sharing_diagram: [ALBERT.replace(num_hidden_layers=L, sharing=s)
                        for L, s in ((12, "all"), (24, "none"), (2, "ffn"), (24, "attention"), (1, "none"))],
    D.encoder_block_diagram: [ALBERT, ALBERT.replace(attention="sum"), PRESETS["tiny-bert"], ALBERT],
}


@pytest.mark.parametrize("fn", list(REDRAWS))
def test_redrawing_into_the_same_axes_gives_the_fresh_picture(fn):
    """Artists are reused from one drawing to the next: nothing of the earlier picture may survive."""
    fig, ax = _panel(fn.__name__.removesuffix("_diagram"))
    for config in REDRAWS[fn]:
        _, alt = fn(config, ax=ax)
        fresh, fresh_alt = fn(config)
        assert alt == fresh_alt
        assert sorted(texts(fig)) == sorted(texts(fresh))
        assert all(t.get_text() == texts(fresh)[gid].get_text() for gid, t in texts(fig).items())
        assert np.array_equal(_pixels(fig), _pixels(fresh))


def test_redrawing_a_timeline_gives_the_fresh_picture():
    fig, ax = _panel("masking_timeline")
    for epochs, copies in ((8, 3), (30, 10), (1, 1), (12, 4)):
        D.masking_timeline_diagram(epochs, copies, ax=ax)
        assert np.array_equal(_pixels(fig), _pixels(D.masking_timeline_diagram(epochs, copies)[0]))


def test_bad_input_is_refused_before_drawing():
    bert = PRESETS["bert-base"]
    for fn in CONFIG_DIAGRAMS:
        with pytest.raises(TypeError, match="config must be an EncoderConfig, got str"):
            fn("bert-base")
        with pytest.raises(TypeError, match="ax must be an Axes, got Figure"):
            fn(bert, ax=Figure())
    small, ax = new_figure(width=6, height=2)
    small.set_layout_engine(None)
    ax.set_position((0, 0, 1, 1))
    with pytest.raises(ValueError, match=r"ax is 6.00 x 2.00 inches, but this diagram needs at least 9.0 x"):
        D.embedding_diagram(bert, ax=ax)
    constrained, ax = new_figure(width=10, height=6)
    with pytest.raises(ValueError, match="without a layout engine"):
        D.sharing_diagram(bert, ax=ax)
    assert not ax.patches and not ax.texts  # refused before drawing anything
    constrained.set_layout_engine("none")  # a placeholder engine moves nothing: accepted
    ax.set_position((0, 0, 1, 1))
    assert D.sharing_diagram(bert, ax=ax)[0] is constrained and boxes(constrained, "layer")
    for kwargs, error, match in [(dict(epochs=0), ValueError, "epochs must be at least 1"),
                                 (dict(epochs=31), ValueError, "epochs must be at most 30"),
                                 (dict(epochs=8.0), TypeError, "epochs must be an integer"),
                                 (dict(copies=0), ValueError, "copies must be at least 1"),
                                 (dict(copies=True), TypeError, "copies must be an integer")]:
        with pytest.raises(error, match=match):
            D.masking_timeline_diagram(**kwargs)
    for fn in (D.svg, D.show):
        with pytest.raises(TypeError, match="fig must be a Figure"):
            fn("figure.svg")
