"""Temporary builder of book/06_savings_in_training.ipynb (not committed)."""
import json
import sys

import nbformat as nbf

cells = []


def md(text):
    cells.append(nbf.v4.new_markdown_cell(text.strip("\n")))


def code(text, tags=(), figure=None, alt=None):
    c = nbf.v4.new_code_cell(text.strip("\n"))
    if tags:
        c.metadata["tags"] = list(tags)
    if figure:
        c.metadata["mystnb"] = {"figure": {"caption": figure[1], "name": figure[0]}}
        if alt:
            c.metadata["mystnb"]["image"] = {"alt": alt}
    cells.append(c)


md(r"""
(savings-in-training)=
# What the savings cost in training

Chapter [What a training step costs](05_albert_tradeoffs.ipynb) priced ALBERT's two savings in FLOPs, bytes
and seconds. This chapter prices them in what a model learns. Small ALBERT models are pretrained here on one
corpus for one budget, long enough to read context, then fine-tuned; the question is how much held-out loss
and accuracy a narrow token table, a shared block, and ALBERT's bet (a wider shared model in place of a
narrow unshared one) cost at this size.

**What you will learn**

- how far each miniature got: its held-out loss against the unigram baseline, and how much of it comes
  from reading the context (the same tokens with each row shuffled);
- how the book compares trained models: three comparisons declared before the runs, intervals over seeds
  and examples, and a correction for testing several things at once;
- what factorising, sharing and widening cost in loss and in fine-tuned accuracy, against a model that was
  never pretrained;
- which of the paper's Table 3 and 4 directions the miniatures reproduce, and how noisy the paper's own
  columns are.
""")

code(r"""
%matplotlib inline
import numpy as np
from IPython.display import Markdown

from geron_lib.costs.flops import count_flops
from geron_lib.notebook.plots import PALETTE, new_figure
from geron_lib.studies import context_grid as cg
from geron_lib.studies.paper import RECIPE, TABLE_1, TABLE_2, TABLE_3_SCORES, TABLE_4_SCORES
""")

code(r"""
from threadpoolctl import threadpool_limits

_ = threadpool_limits(1, "blas")
""", tags=["remove-cell"])

md(r"""
## The grid

Every model has $L = 4$ layers and is trained on the same tokens for the same steps, under one
learning-rate schedule and a fresh masking every epoch (chapter
[Dynamic masking](04_dynamic_masking.ipynb)); only the cell and the seed (initial weights, masks, batch
order) differ. The text is the reStructuredText sources of Python 3.11's documentation as Debian ships
them, with a WordPiece vocabulary learned from the training paragraphs; the held-out loss is measured on
paragraphs neither the models nor the tokenizer saw. Four cells cross the two savings at $H = 64$: $E = 16$
or $E = H$, not shared or all shared. The fifth is ALBERT's bet, from its Table 2, where ALBERT xxlarge,
shared and wide, beats the unshared BERT large with fewer parameters: all shared at twice the width, with
as many parameters as the unshared $E = H$ cell, within 5 %.
""")

code(r"""
grid = cg.Grid()
stored = cg.load_stored()
base_setup, data = stored["grid"]["base"], stored["data"]
NARROW, WIDE = cg.Cell(64, "none", 64), grid.wide_cell
NAMES = {"none": "not shared", "all": "all shared"}


def label(cell):
    return f"$E = {cell.E}$, {NAMES[cell.sharing]}, $H = {cell.H}$"


parameters = {c: int(cg.per_seed(stored, c, "parameters")[0]) for c in grid.cells()}
seeds = {c: len(cg.per_seed(stored, c, "parameters")) for c in grid.cells()}
rows = ["| cell | $E$ | sharing | $H$ | heads | FFN | parameters | seeds |", "|---|--:|---|--:|--:|--:|--:|--:|"]
for c in grid.cells():
    config = grid.model_config(c)
    rows.append(f"| {'wide' if c == WIDE else 'narrow'} | {c.E} | {NAMES[c.sharing]} | {c.H} "
                f"| {config.num_attention_heads} | {config.intermediate_size} | {parameters[c]:,} | {seeds[c]} |")
Markdown("\n".join(rows))
""", tags=["remove-input"])

code(r"""
grid_hours = stored["seconds"] / 3600
steps_per_run, epochs = data["steps_per_run"], base_setup["epochs"]
tokens_read_m = data["train_tokens"] * epochs / 1e6
train_tokens, unigram = data["train_tokens"], data["unigram_loss"]
wide_over_narrow = 100 * (parameters[WIDE] / parameters[NARROW] - 1)
n_runs = len(stored["runs"])
command = stored["command"]
""", tags=["remove-cell"])

md(r"""
Each run reads {eval}`f"{tokens_read_m:.1f}"` million training tokens ({eval}`epochs` epochs of
{eval}`f"{train_tokens:,}"`, {eval}`f"{steps_per_run:,}"` steps); the wide cell has
{eval}`f"{wide_over_narrow:+.1f}"` % of the narrow unshared cell's parameters. The {eval}`n_runs`
pretraining runs and their fine-tunings took {eval}`f"{grid_hours:.1f}"` hours of wall time on this
book's two-core machine.

```{dropdown} Provenance
The grid is stored in `geron_lib/studies/data/context_grid.json`, written run by run by
`scripts/context_grid.py` (resumable; two runs side by side, one BLAS thread each). The schedule was
chosen by two pilot runs of the unshared $E = H$ cell at higher peak rates, stored beside it in
`context_grid_pilots.json`. This page reads the stored runs and trains nothing.
```
""")

md(r"""
## Did the models read context?

The yardstick is the *unigram* loss, that of a model that ignores the context and predicts every masked
token from its frequency in the training text: {eval}`f"{unigram:.3f}"` nats here. A model can beat it
without reading context only by little; to show that a model reads the context, every run is also scored
on the same held-out rows with each row's tokens shuffled: the same tokens, the context destroyed.
""")

code(r"""
COLOUR = {cg.Cell(16, "none", 64): PALETTE[1], NARROW: PALETTE[0], cg.Cell(16, "all", 64): PALETTE[6],
          cg.Cell(64, "all", 64): PALETTE[5], WIDE: PALETTE[3]}
fig, ax = new_figure(width=8, height=4)
for c in grid.cells():
    tokens, losses = cg.curves(stored, c)
    ax.plot(tokens / 1e6, losses.mean(axis=0), color=COLOUR[c], label=label(c))
    ax.fill_between(tokens / 1e6, losses.min(axis=0), losses.max(axis=0), color=COLOUR[c], alpha=0.2, lw=0)
ax.axhline(unigram, color="grey", ls=":", lw=1, label="unigram loss")
ax.set(xlabel="training tokens read (millions)", ylabel=r"held-out loss $\mathcal{L}$ (nats)")
ax.legend(fontsize=8)
fig
""", tags=["hide-input"], figure=("fig-grid-curves", "Held-out masked-LM loss during pretraining, every cell of the grid. Line: mean over the seeds; band: lowest to highest seed; dotted: the unigram loss."),
     alt="Learning curves of held-out loss against training tokens read for the five cells: every curve starts at the unigram loss, stays near it for the first million or so tokens, then falls steeply; the E = 16 cells end highest.")

code(r"""
context = {c: cg.reads_context(stored, c) for c in grid.cells()}
rows = ["| cell | final held-out loss | below unigram | shuffled rows | gain from context |",
        "|---|--:|--:|--:|--:|"]
for c in grid.cells():
    losses = cg.per_seed(stored, c, "held_out_loss")
    x = context[c]
    rows.append(f"| {label(c)} | {x['final_loss']:.3f} ({losses.min():.3f} to {losses.max():.3f}) "
                f"| {x['below_unigram']:.2f} | {x['final_loss'] + x['context_gain']:.3f} | {x['context_gain']:.2f} |")
Markdown("\n".join(rows))
""", tags=["remove-input"])

code(r"""
narrow_final = context[NARROW]["final_loss"]
narrow_below = context[NARROW]["below_unigram"]
narrow_gain = context[NARROW]["context_gain"]
narrow_perplexity = np.exp(narrow_final)
unigram_perplexity = np.exp(unigram)
least_gain = min(x["context_gain"] for x in context.values())
_, narrow_curves = cg.curves(stored, NARROW)
last_drop = float((narrow_curves[:, -2] - narrow_curves[:, -1]).mean())
""", tags=["remove-cell"])

md(r"""
They do. The unshared $E = H$ cell ends at {eval}`f"{narrow_final:.3f}"` nats, {eval}`f"{narrow_below:.2f}"`
below the unigram loss (perplexity {eval}`f"{narrow_perplexity:.0f}"` against
{eval}`f"{unigram_perplexity:.0f}"`), and shuffling its rows costs it {eval}`f"{narrow_gain:.2f}"` nats:
most of what it learned is read from the context. Every cell gains at least {eval}`f"{least_gain:.2f}"`
nats from real context. The curves show why a shorter budget would mislead: each stays near the unigram
loss at first, then falls steeply once the model starts to use the context; an earlier version of this grid
stopped before that fall and measured how fast models leave the unigram stage, not what they end up
knowing. Over the last evaluation interval the unshared $E = H$ loss still fell by
{eval}`f"{last_drop:.3f}"` nats: the numbers below are how far each cell got in this budget, not where it
would settle.
""")

md(r"""
(grid-statistics)=
## How the comparisons are judged

Two runs of one cell differ in their seed, and so do two runs of different cells; and each run is scored
on a finite set of held-out tokens or test examples. An interval for a difference must cover both sources
of noise. The book's policy, used for every comparison of trained runs:

1. **Three primary comparisons, declared in code before the grid ran** (`cg.PRIMARY`): the cost of
   factorising ($E = 16$ against $E = H$, not shared), of sharing ($E = H$, all shared against not
   shared), and of the bet (the wide shared cell against the narrow unshared one), each on the held-out
   loss and on the section task's accuracy. Every other comparison on this page is *exploratory*.
2. **Intervals over seeds and examples**: a two-level bootstrap that redraws the seeds of each cell and,
   shared by both cells, the held-out examples, and reports the central 95 % of the redrawn differences.
3. **Seeds are paired only where they are correlated**: the same seed trains every cell, but the same seed
   need not make both cells good or both bad. Pairing narrows an interval only when the two cells'
   per-seed means are positively correlated ($r > 0$); otherwise each cell's seeds are redrawn on their own.
4. **A correction for six tests**: with six primary tests at 5 %, the chance that at least one excludes
   zero with no real difference is up to 26 %. Holm's step-down correction keeps that chance at 5 %. A
   primary comparison is **resolved** when its Holm-adjusted $p$ is at most 0.05; its corrected interval
   is the 99.2 % one (Bonferroni's, $1 - 0.05/6$). An exploratory interval that excludes zero is a lead,
   not a finding.

```{literalinclude} ../geron_lib/studies/intervals.py
:pyobject: difference
```

Why more seeds, and not only more examples: appendix
[From numpy to PyTorch](A2_numpy_to_pytorch.ipynb#chapter-4-s-experiment-continued-in-pytorch) repeats
chapter 4's experiment with 30 seeds and shows how far three seeds can mislead.
""")

code(r"""
found = cg.primary(stored)
MEASURE = {"held_out_loss": ("held-out loss (nats)", 1, 3), "section": ("section accuracy (points)", 100, 1)}


def span(d, scale, digits):
    return f"{scale * d.low:+.{digits}f} to {scale * d.high:+.{digits}f}"


rows = ["| comparison | measure | difference | 95 % interval | corrected interval | seeds' $r$ | paired "
        "| Holm $p$ | resolved |", "|---|---|--:|--:|--:|--:|---|--:|---|"]
for (name, measure), f in found.items():
    unit, scale, digits = MEASURE[measure]
    d = f.difference
    rows.append(f"| {name} | {unit} | {scale * d.mean:+.{digits}f} | {span(d, scale, digits)} "
                f"| {span(f.corrected, scale, digits)} | {'—' if np.isnan(d.r) else f'{d.r:+.2f}'} | {'yes' if d.paired else 'no'} "
                f"| {f.holm_p:.3f} | {'yes' if f.resolved else 'no'} |")
Markdown("\n".join(rows))
""", tags=["remove-input"])

code(r"""
def said(name, measure):
    unit, scale, digits = MEASURE[measure]
    return found[name, measure].said(scale, digits, "nats" if measure == "held_out_loss" else "points")


factorising_loss = said("factorisation at E = 16", "held_out_loss")
factorising_section = said("factorisation at E = 16", "section")
sharing_loss = said("sharing at E = H", "held_out_loss")
sharing_section = said("sharing at E = H", "section")
bet_loss = said("the width bet", "held_out_loss")
bet_section = said("the width bet", "section")
n_resolved = sum(f.resolved for f in found.values())
n_primary = len(found)
""", tags=["remove-cell"])

code(r"""
n_section_test = stored["tasks"]["section"]["test_examples"]
one_point = n_section_test / 100
""", tags=["remove-cell"])

md(r"""
## What the savings cost

Of the {eval}`n_primary` primary tests, {eval}`n_resolved` are resolved. Measured against the unshared
$E = H$ cell:

- **Factorising** the token table to $E = 16$: the held-out loss is {eval}`factorising_loss`; section
  accuracy is {eval}`factorising_section`.
- **Sharing** all layers at $E = H$: the held-out loss is {eval}`sharing_loss`; section accuracy is
  {eval}`sharing_section`.
- **The bet**, sharing all layers at twice the width: the held-out loss is {eval}`bet_loss`; section
  accuracy is {eval}`bet_section`.

A loss difference is in nats per masked token; an accuracy difference in percentage points of the
{eval}`n_section_test` test paragraphs, where one point is {eval}`f"{one_point:.0f}"` answers.
""")


code(r"""
by_preset = {r.model: r for r in TABLE_2}
sizes = {s.model: s for s in TABLE_1}
xxl, large = by_preset["ALBERT xxlarge"], by_preset["BERT large"]
xxl_millions, large_millions = sizes["ALBERT xxlarge"].millions, sizes["BERT large"].millions
xxl_avg, large_avg = xxl.average, large.average
paper_slower = large.speedup / xxl.speedup

""", tags=["remove-cell"])

md(r"""
(grid-width-bet)=
## ALBERT's bet at equal parameters

ALBERT's Table 2 sets ALBERT xxlarge (shared, $H = 4096$, {eval}`xxl_millions`M parameters, Avg
{eval}`xxl_avg`) against BERT large (not shared, $H = 1024$, {eval}`large_millions`M, Avg
{eval}`large_avg`): fewer parameters, higher accuracy, and a training step {eval}`f"{paper_slower:.1f}"`
times slower. The miniature's bet has the same shape at equal parameters:
""")

code(r"""def step_flops(cell):
    config = grid.model_config(cell)
    return count_flops(config, base_setup["T"], batch=base_setup["batch_size"], mlm_head=True, training=True).total


bet = {}
for c in (NARROW, WIDE):
    section = 100 * cg.accuracies(stored, c, "section")
    bet[c] = (parameters[c], step_flops(c) / 1e9, 1e3 * np.median(cg.per_seed(stored, c, "seconds_per_step")),
              context[c]["final_loss"], section.mean())
rows = ["| cell | parameters | training GFLOPs per step | ms per step (median of seeds) | held-out loss "
        "| section accuracy (%) |", "|---|--:|--:|--:|--:|--:|"]
for c, (n, gflops, ms, loss, acc) in bet.items():
    rows.append(f"| {label(c)} | {n:,} | {gflops:.2f} | {ms:.0f} | {loss:.3f} | {acc:.1f} |")
Markdown("\n".join(rows))
""", tags=["remove-input"])


code(r"""
flops_ratio = bet[WIDE][1] / bet[NARROW][1]
(wide_low, wide_high), (narrow_low, narrow_high) = (
    (cg.per_seed(stored, c, "held_out_loss").min(), cg.per_seed(stored, c, "held_out_loss").max()) for c in (WIDE, NARROW))
time_ratio = bet[WIDE][2] / bet[NARROW][2]
""", tags=["remove-cell"])

md(r"""
At equal parameters the wide shared model computes {eval}`f"{flops_ratio:.1f}"` times the FLOPs of a
step and took {eval}`f"{time_ratio:.1f}"` times as long per step on this machine (the stored runs'
medians, two runs side by side). The bet buys capacity per parameter with compute, as the paper's Table 2
says: what it cost or bought here in loss and accuracy is the third line of the list above. The wide
cell's final losses spread from {eval}`f"{wide_low:.3f}"` to {eval}`f"{wide_high:.3f}"` over its seeds,
against {eval}`f"{narrow_low:.3f}"` to {eval}`f"{narrow_high:.3f}"` for the narrow cell; one learning rate
and one budget serve every cell, and the grid cannot say whether a rate chosen for the wide model would
change the verdict.
""")

md(r"""
## What pretraining bought, and a manipulation check

Each pretrained model is fine-tuned on two sentence-level tasks built from other held-out paragraphs, with
one budget and one learning rate for every cell (chosen once, not tuned per cell): **section**, which part
of Python's documentation a paragraph comes from (library reference, what's new, C API, HOWTOs, language
reference, tutorial, or another), and **order**, ALBERT's sentence-order prediction (two consecutive
sentences, in order or swapped). To see what pretraining contributed, the unshared $E = H$ model is also
fine-tuned from its random initialisation, with the same budget.
""")

code(r"""
majority = {task: 100 * t["majority_accuracy"] for task, t in stored["tasks"].items()}
rows = ["| cell | section accuracy (%) | order accuracy (%) |", "|---|--:|--:|"]


def seed_range(values):
    return f"{values.mean():.1f} ({values.min():.1f} to {values.max():.1f})"


for c in grid.cells():
    rows.append(f"| {label(c)} | {seed_range(100 * cg.accuracies(stored, c, 'section'))} "
                f"| {seed_range(100 * cg.accuracies(stored, c, 'order'))} |")
rows.append(f"| {label(NARROW)}, not pretrained | "
            f"{seed_range(100 * cg.accuracies(stored, NARROW, 'section', pretrained=False))} "
            f"| {seed_range(100 * cg.accuracies(stored, NARROW, 'order', pretrained=False))} |")
rows.append(f"| always the majority class | {majority['section']:.1f} | {majority['order']:.1f} |")
Markdown("\n".join(rows))
""", tags=["remove-input"])

code(r"""
pretraining_gain = cg.intervals.difference(cg.per_example(stored, NARROW, "section"),
                                           cg.per_example(stored, NARROW, "section", pretrained=False))
gain_points = 100 * pretraining_gain.mean
gain_span = span(pretraining_gain, 100, 1)
order_all = np.concatenate([cg.accuracies(stored, c, "order") for c in grid.cells()])
order_low, order_high = 100 * order_all.min(), 100 * order_all.max()
majority_order, majority_section = majority["order"], majority["section"]
order_random = 100 * cg.accuracies(stored, NARROW, "order", pretrained=False).mean()
never_pretrained = cg.per_example(stored, NARROW, "order", pretrained=False)
order_above = [c for c in grid.cells()
               if cg.intervals.difference(cg.per_example(stored, c, "order"), never_pretrained).low > 0]
order_summary = ("every cell stayed at chance, as a model pretrained without a sentence-order loss should"
                 if not order_above else f"{len(order_above)} of the {len(grid.cells())} cells rose a little "
                 "above chance, so the order task is not a clean manipulation check")
order_verdict = (
    "no cell is above the model that was never pretrained (exploratory intervals over seeds and examples), "
    "as a manipulation check should find" if not order_above else
    f"{len(order_above)} of the {len(grid.cells())} cells ({'; '.join(label(c) for c in order_above)}) "
    f"{'is' if len(order_above) == 1 else 'are'} above the model that was never pretrained (exploratory intervals that exclude zero): pretraining on "
    "whole paragraphs taught them a little of how sentences follow one another, so the check is not clean"
)
""", tags=["remove-cell"])

md(r"""
On section, pretraining the unshared $E = H$ model added {eval}`f"{gain_points:+.1f}"` points over the
same model fine-tuned from random weights (exploratory 95 % interval {eval}`gain_span`), against a majority
class of {eval}`f"{majority_section:.1f}"` %. The order task is meant as a *manipulation check*: the
miniatures are pretrained on the masked LM alone, without ALBERT's sentence-order loss, so their order
accuracy should stay near the majority's {eval}`f"{majority_order:.1f}"` % and near the
{eval}`f"{order_random:.1f}"` % of the model fine-tuned from random weights. Every run's order accuracy
lies between {eval}`f"{order_low:.1f}"` and {eval}`f"{order_high:.1f}"` %, and {eval}`order_verdict`.
It is not a test of the savings.
""")

code(r"""
paper3 = {(r.config.E, r.config.sharing): r.average for r in TABLE_3_SCORES}
paper4 = {(r.config.E, r.config.sharing): r.average for r in TABLE_4_SCORES}
paper_3_none128, paper_4_none128 = paper3[(128, "none")], paper4[(128, "none")]
paper_none = ", ".join(f"{paper3[(E, 'none')]:.1f}" for E in (64, 128, 256, 768))
paper_all = ", ".join(f"{paper3[(E, 'all')]:.1f}" for E in (64, 128, 256, 768))
paper_all_best = max((64, 128, 256, 768), key=lambda E: paper3[(E, "all")])
paper_sharing_cost = paper4[(768, "none")] - paper4[(768, "all")]
paper_factorising_cost = paper3[(768, "none")] - paper3[(64, "none")]
shared_narrow = cg.intervals.difference(cg.per_example(stored, cg.Cell(16, "all", 64), "held_out_loss"),
                                        cg.per_example(stored, cg.Cell(64, "all", 64), "held_out_loss"))
shared_narrow_mean, shared_narrow_span = shared_narrow.mean, span(shared_narrow, 1, 3)
shared_narrow_text = ("above" if shared_narrow.low > 0 else "below" if shared_narrow.high < 0
                      else "not resolved against")
""", tags=["remove-cell"])

md(r"""
## Beside the paper

The paper's Tables 3 and 4 report single runs of ALBERT base, fine-tuned on five benchmarks; their Avg
column carries noise of its own that the paper does not give. The same model, not shared at $E = 128$,
is printed with Avg {eval}`paper_3_none128` in Table 3 and {eval}`paper_4_none128` in Table 4 (its MNLI
column differs). So differences of a few tenths between the paper's rows are within its own printing.
""")

md(r"""
- **Table 3, not shared**: the paper's Avg rises with $E$ ({eval}`paper_none` at $E$ = 64, 128, 256,
  768), and in the miniature the narrow table costs loss (the primary comparison above).
- **Table 3, all shared**: the paper's best $E$ is {eval}`paper_all_best` ({eval}`paper_all`), narrower
  than $H$. The miniature does not reproduce a narrow best: all shared, $E = 16$ ends
  {eval}`f"{shared_narrow_mean:+.3f}"` nats from $E = H$ (exploratory interval {eval}`shared_narrow_span`),
  {eval}`shared_narrow_text` it. The grid has no cell between 16 and 64, so it cannot say where a shared
  model's best $E$ lies.
- **Table 4**: sharing all layers cost the paper {eval}`f"{paper_sharing_cost:.1f}"` Avg points at
  $E = 768$; the miniature's cost at $E = H$ is the primary comparison above.
""")

md(r"""
### ALBERT's recipe beside the miniature's
""")

code(r"""
mini = {
    "optimizer": (f"AdamW, peak learning rate {base_setup['lr']}", False),
    "batch": (f"{base_setup['batch_size']} sequences of {base_setup['T']} tokens", False),
    "steps": (f"{steps_per_run:,}", False),
    "masking": ("BERT's token masking, 15 %, a new draw every epoch", False),
    "vocabulary": (f"WordPiece, {base_setup['vocab_size']:,} tokens", False),
    "dropout": ("none (the library has no dropout); the paper's base models of Tables 3 and 4 used 0.1", False),
    "data": (f"Python 3.11's documentation, {train_tokens:,} tokens", False),
    "sentence task": ("masked LM only; sentence order only fine-tuned", False),
}
rows = ["| item | ALBERT (paper, section) | miniature | follows |", "|---|---|---|---|"]
for item, paper_text, section in RECIPE:
    ours, follows = mini[item]
    rows.append(f"| {item} | {paper_text} ({section}) | {ours} | {'yes' if follows else 'no'} |")
Markdown("\n".join(rows))
""", tags=["remove-input"])

code(r"""
paper_positions = 125_000 * 4096 * 512 / 1e9  # section 4.1: steps, batch, length
""", tags=["remove-cell"])

md(r"""
The miniature follows the paper in its architecture and in little of its recipe: four layers at $H = 64$
against twelve at 768, {eval}`f"{tokens_read_m:.1f}"` million tokens read against about
{eval}`f"{paper_positions:.0f}"` billion token positions, one project's documentation against books and
Wikipedia. It can test the *directions* the paper reports, under conditions the paper never ran; it cannot
confirm their sizes.
""")

md(r"""
## The paper's Figure 1 on trained weights

Figure 1 of the paper plots, for each layer of a trained BERT large and ALBERT large, the L2 distance
between a layer's input and output embeddings, and reports that "the transitions from layer to layer are
much smoother for ALBERT than for BERT". Here is the same distance for the trained miniatures, on the
held-out text, with *jump* = the mean change of that distance from one layer to the next (a smaller jump
is smoother):

$$
\operatorname{dist}_\ell = \operatorname{mean}_t \lVert X_\ell[t] - X_{\ell-1}[t] \rVert_2, \qquad
\operatorname{jump} = \operatorname{mean}_\ell \lvert \operatorname{dist}_{\ell+1} - \operatorname{dist}_\ell \rvert .
$$
""")

code(r"""
layers = np.arange(1, base_setup["num_hidden_layers"] + 1)
fig, ax = new_figure(width=7, height=3.6)
for c in (NARROW, cg.Cell(64, "all", 64), WIDE):
    dist = np.array([r["movement_distance"] for r in stored["runs"] if cg.Cell(r["E"], r["sharing"], r["H"]) == c])
    ax.plot(layers, dist.mean(axis=0), marker="o", ms=4, color=COLOUR[c], label=label(c))
    ax.fill_between(layers, dist.min(axis=0), dist.max(axis=0), color=COLOUR[c], alpha=0.15, lw=0)
ax.set(xlabel=r"layer $\ell$", ylabel="L2 distance, input to output", ylim=(0, None), xticks=layers)
ax.legend(fontsize=8)
fig
""", tags=["hide-input"], figure=("fig-grid-movement", "How far each layer moves its input (the paper's Figure 1, left), for the unshared and the all-shared E = H cells and the wide shared cell. Line: mean over the seeds; band: lowest to highest seed."),
     alt="Line chart of the L2 distance each of the four layers moves its input, for three cells.")

code(r"""
jump_none, jump_all = cg.layer_jumps(stored, NARROW), cg.layer_jumps(stored, cg.Cell(64, "all", 64))
jump_gap = cg.intervals.difference(jump_all, jump_none)
jump_none_mean, jump_all_mean = float(jump_none.mean()), float(jump_all.mean())
jump_span = span(jump_gap, 1, 2)
jump_direction = ("smoother, as the paper reports" if jump_gap.high < 0
                  else "less smooth, against the paper" if jump_gap.low > 0
                  else "neither smoother nor less smooth, within the spread of the seeds")
""", tags=["remove-cell"])

md(r"""
At $E = H$ the jump is {eval}`f"{jump_all_mean:.2f}"` shared against {eval}`f"{jump_none_mean:.2f}"`
unshared (exploratory interval of the difference {eval}`jump_span`): the shared stack is
{eval}`jump_direction`. Four layers cannot show the paper's stronger claim, that the movement oscillates
rather than converges over 24, and the paper's distances are of hidden states 1,024 wide, not 64.
""")

md(r"""
(tradeoffs-rank)=
## Why factorise: the trained token table

The paper's reason to factorise is that "WordPiece embeddings are meant to learn context-independent
representations, whereas hidden-layer embeddings are meant to learn context-dependent representations", so
$H \gg E$ should lose little. If the table needed fewer directions than the hidden states, a trained
$E = H$ table would show it: its effective rank $r_\text{eff}$ (the notation page defines it) would be
below that of the hidden states computed from it. We take both of the unshared $E = H$ cell, less their
mean row, counting every row of the table alike.
""")

code(r"""
rank_table = cg.per_seed(stored, NARROW, "effective_rank_centred")
rank_hidden = cg.per_seed(stored, NARROW, "effective_rank_hidden_centred")
rank_initial = cg.per_seed(stored, NARROW, "effective_rank_initial")
rank_gap = cg.intervals.difference(rank_table[:, None], rank_hidden[:, None])
r_table, r_hidden, r_init = rank_table.mean(), rank_hidden.mean(), rank_initial.mean()
width_share = r_table / NARROW.E
rank_span = span(rank_gap, 1, 1)
rank_verdict = ("more directions than the hidden states: the opposite of what the paper's argument expects"
                if rank_gap.low > 0 else
                "fewer directions than the hidden states, as the paper's argument expects" if rank_gap.high < 0
                else "about as many directions as the hidden states: no evidence either way")
""", tags=["remove-cell"])

md(r"""
At initialisation the table's effective rank is {eval}`f"{r_init:.1f}"` of 64. Trained, it is
{eval}`f"{r_table:.1f}"`, and the last layer's hidden states on the held-out text
{eval}`f"{r_hidden:.1f}"` (exploratory interval of the difference {eval}`rank_span`): the table spans
{eval}`rank_verdict`. Every row of the table gets a gradient at every step through the tied decoder, rare
tokens included, which may be why the trained table keeps {eval}`f"{width_share:.0%}"` of its width in
effective rank; a factorised table must hold every row, so this
row-by-row count is the one a small $E$ has to meet. One small $H$, one corpus: this says nothing of how
small $E$ can be at $H = 768$.
""")

md(r"""
## Summary

- Trained until they read context, the miniatures show what each saving costs at $H = 64$: the list under
  [What the savings cost](#what-the-savings-cost), each with an interval over seeds and examples,
  corrected for the six primary tests.
- ALBERT's bet trades parameters for compute: at equal parameters the wide shared model costs
  {eval}`f"{flops_ratio:.1f}"` times the FLOPs per step.
- Pretraining added {eval}`f"{gain_points:+.1f}"` points of section accuracy over random weights; on sentence
  order, {eval}`order_summary`.
- The paper's own columns are single runs: the same model prints {eval}`paper_3_none128` and
  {eval}`paper_4_none128`.
""")

md(r"""
## Exercises

````{exercise} ★ Predict first: which saving costs more
:label: ex-tradeoffs-costlier
The paper's Tables 3 and 4 price ALBERT's savings at $H = 768$: narrowing $E$ from 768 to 64 (not shared)
costs {eval}`f"{paper_factorising_cost:.1f}"` Avg point; sharing all layers at $E = 768$ costs
{eval}`f"{paper_sharing_cost:.1f}"`. *Before you look at the table above*,
predict which cost the miniatures more held-out loss: narrowing $E$ from 64 to 16 (not shared, the
`"factorising"` saving) or sharing all layers at $E = 64$ (`"sharing"`). Then compute both from the stored
grid and check your prediction:

```python
from geron_lib.notebook.exercises.tradeoffs import check_costlier_saving
from geron_lib.studies import context_grid as cg

stored = cg.load_stored()
final = {c: cg.per_seed(stored, c, "held_out_loss").mean() for c in cg.Grid().cells()}
factorising = final[cg.Cell(16, "none", 64)] - final[cg.Cell(64, "none", 64)]
sharing = final[cg.Cell(64, "all", 64)] - final[cg.Cell(64, "none", 64)]
check_costlier_saving("sharing")  # or "factorising": your prediction
```
````

```{solution} ex-tradeoffs-costlier
:class: dropdown
Look at each difference beside its corrected interval in the table of primary comparisons: a difference
is a finding only when it is resolved. The miniatures are four layers deep and one corpus small; a model
that has not filled its stored layers need not miss what sharing removes, while a narrow token table
limits it from the first step.
```

````{exercise} ★★ Declare, then test
:label: ex-grid-declare
Pick one comparison of the grid that is not primary, for example all shared against not shared at
$E = 16$. Write down, before computing it, which way you expect it to go and why. Then compute its
difference and 95 % interval with `cg.intervals.difference(cg.per_example(stored, a, "held_out_loss"),
cg.per_example(stored, b, "held_out_loss"))`, and say whether it is a finding or a lead under this
chapter's policy, and why.
````
""")

nb = nbf.v4.new_notebook()
nb.cells = cells
nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
               "language_info": {"name": "python"}}
nbf.write(nb, sys.argv[1])
