"""One notation: every symbol a page's mathematics uses is on the notation page, the one authority; a
paper's own symbol (the column "In the papers") defines nothing; and the shapes the page states are the
shapes of the library's arrays.

A symbol is a Latin letter (with or without subscripts: W_Q counts as W), a Greek letter, or a named one
(\\mathrm{Emb}, \\operatorname{LN}, \\mathcal{L}: the name, whichever command typesets it). Words set in
\\text{...} are prose, not symbols.
"""

import re

import numpy as np
import pytest
from book_site.pages import text_of, toc_pages

MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)(.+?)(?<!\\)\$", re.S)
NAMED = re.compile(r"\\(?:mathrm|operatorname|mathcal|mathbf)\{([^{}]*)\}")
GREEK = re.compile(r"\\(alpha|beta|gamma|delta|epsilon|varepsilon|zeta|eta|theta|kappa|lambda|mu|nu|xi|pi|"
                   r"rho|sigma|tau|phi|varphi|chi|psi|omega|ell|Gamma|Delta|Theta|Lambda|Pi|Sigma|Phi|Psi|Omega)"
                   r"(?![A-Za-z])")


def symbols(tex: str) -> set[str]:
    """The symbols of one formula."""
    tex = re.sub(r"\\(?:begin|end)\{[^{}]*\}", " ", tex)              # environments: aligned, cases
    tex = re.sub(r"\\(?:text|textbf|textit|mbox)\{(?:[^{}]|\{[^{}]*\})*\}", " ", tex)  # prose inside math
    found = {name.strip() for name in NAMED.findall(tex)}
    tex = NAMED.sub(" ", tex)
    found |= {f"\\{g}" for g in GREEK.findall(tex)}
    tex = re.sub(r"\\[A-Za-z]+", " ", tex)                              # every other command: \frac, \sum
    return found | set(re.findall(r"[A-Za-z]", tex))


def page_symbols(docname: str) -> set[str]:
    return set().union(*(symbols(a or b) for a, b in MATH.findall(text_of(docname))))


def without_papers_column(text: str) -> str:
    """The notation page without the cells of its "In the papers" columns: a paper's symbol is a
    translation, not a symbol of the book."""
    out, papers = [], None
    for line in text.splitlines():
        cells = line.strip().strip("|").split("|") if line.startswith("|") else None
        if cells is None:
            papers = None
        elif papers is None:
            names = [c.strip() for c in cells]
            papers = names.index("In the papers") if "In the papers" in names else -1
        elif papers >= 0:
            line = "|".join(c for k, c in enumerate(cells) if k != papers)
        out.append(line)
    return "\n".join(out)


DEFINED = set().union(*(symbols(a or b)
                        for a, b in MATH.findall(without_papers_column(text_of("book/notation")))))


def test_the_extraction_reads_formulas_as_a_reader_does():
    assert symbols(r"\mathrm{Emb}[\text{ids}]\, W_P + \operatorname{LN}(x)") == {"Emb", "LN", "W", "P", "x"}
    aligned = r"\begin{aligned} E^* &= \frac{VH}{V + H} && \text{(counting } b_P\text{ too)} \end{aligned}"
    assert symbols(aligned) == {"E", "V", "H", "b", "P"}
    loss = r"\mathcal{L} = -\log p_\theta, \quad \ell = 1, \dots, L"
    assert symbols(loss) == {"L", "p", r"\theta", r"\ell"}


@pytest.mark.parametrize("docname", [page for page in toc_pages() if page != "book/notation"])
def test_every_symbol_of_the_page_is_on_the_notation_page(docname):
    used = page_symbols(docname)
    undefined = sorted(used - DEFINED)
    assert not undefined, (f"{docname} uses {sorted(used)}; not on the notation page: {undefined} "
                           "(add them to book/notation.md, or use the symbol it already has)")


# The shapes the notation page states are the shapes of the library's arrays -------------------------------

SHAPE = re.compile(r"\$\(([^$]*)\)\$")


def _plain(tex: str) -> str:
    """A symbol as a key: W_\\text{mlm} -> W_mlm, \\mathrm{Tok}_{(E)} -> Tok_(E), W'_{V,i} -> W'_V,i."""
    tex = re.sub(r"\\(?:mathrm|operatorname|text|mathcal)\{([^{}]*)\}", r"\1", tex)
    return re.sub(r"[{}\s\\]", "", tex)


def stated_shapes() -> dict[str, tuple[str, ...]]:
    """{symbol: its shape as the page writes it, e.g. ('V', 'E')}, from the tables' Shape columns."""
    text = text_of("book/notation")
    header = next(line for line in text.splitlines() if line.startswith("| Symbol") and "Shape" in line)
    column = [c.strip() for c in header.strip().strip("|").split("|")].index("Shape")
    rows = text.split(header, 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    shapes = {}
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        stated = [tuple(_plain(n) for n in s.split(",") if n.strip()) for s in SHAPE.findall(cells[column])]
        if not stated:
            continue
        names = [_plain(n) for item in re.findall(r"\$([^$]+)\$", cells[0]) for n in item.split(", ")]
        assert len(stated) in (1, len(names)), f"{cells[0]}: {len(names)} symbols, {len(stated)} shapes"
        shapes |= dict(zip(names, stated * len(names) if len(stated) == 1 else stated, strict=True))
    return shapes


def library_arrays():
    """{symbol: the library's array}, for a model whose sizes all differ, so that a shape cannot pass by a
    coincidence of two sizes."""
    from geron_lib import Encoder, EncoderConfig
    from geron_lib.model.attention import (
        attention_probs,
        concat_attention,
        random_attention_weights,
        split_heads,
    )
    from geron_lib.model.layers import linear
    from geron_lib.model.mlm import MaskedLM, mlm_head
    from geron_lib.studies.factorised import best_rank_factors

    config = EncoderConfig(vocab_size=50, embedding_size=6, hidden_size=12, num_attention_heads=3,
                           intermediate_size=20, max_position_embeddings=16, type_vocab_size=3,
                           num_hidden_layers=2, model_type="albert", sharing="none")
    sizes = dict(V=50, E=6, H=12, h=3, d_head=4, F=20, T_max=16, V_type=3, T=7, B=2)
    model = MaskedLM(config, seed=0)
    ids = np.random.default_rng(0).integers(0, sizes["V"], (sizes["B"], sizes["T"]))
    X = model.encoder.hidden_states(ids)[0]
    emb, (attention, ffn) = model.encoder.embeddings, model.encoder.layers[0]
    cache = {}
    A = attention_probs(X, attention, sizes["h"], cache=cache)
    values = split_heads(linear(X, attention["W_V"], attention["b_V"]), sizes["h"])
    Tok = Encoder(config.replace(model_type="bert", embedding_size=None), seed=0).embeddings["word"]
    lookup, projection = best_rank_factors(Tok, sizes["E"])
    head = {}
    logits = mlm_head(X[0], model.head, emb["word"], config.hidden_act, config.layer_norm_eps, head)
    arrays = {"Emb": emb["word"], "Pos": emb["position"], "Type": emb["token_type"],
              "W_P": emb["W_P"], "b_P": emb["b_P"], "Tok": Tok, "Tok_(E)": lookup @ projection,
              "X": X, "x_t": X[0, 0], "Q_i": cache["q"][0, 1], "K_i": cache["k"][0, 1], "A_i": A[0, 1],
              "Z_i": (A @ values)[0, 1],
              "W'_V,i": random_attention_weights(sizes["H"], sizes["h"], "sum", seed=0)["W_V"][1],
              "W_Q,iW_K,i^top": attention["W_Q"][:, 4:8] @ attention["W_K"][:, 4:8].T,
              "W_mlm": model.head["W"], "b_mlm": model.head["b"], "b_out": model.head["b_out"],
              "z_t": logits[0], "m_t": head["z"][0],
              "S_i": cache["q"][0, 1] @ cache["k"][0, 1].T / np.sqrt(sizes["d_head"]),
              "Y": concat_attention(X, attention, sizes["h"])}
    arrays |= {k: v for k, v in attention.items() if k[:2] in ("W_", "b_")}
    arrays |= {k: v for k, v in ffn.items() if k[:2] in ("W_", "b_")}
    return arrays, sizes


#: Shaped symbols that are no array of the model, and why
NOT_ARRAYS = {"G": "a change of basis the reader chooses, inserted between two factors"}


def test_every_stated_shape_is_the_librarys():
    stated = stated_shapes()
    arrays, sizes = library_arrays()
    assert {"Emb", "Tok_(E)", "W_P", "b_P", "W_O", "b_O", "W_1", "b_1"} <= set(stated)
    unchecked = sorted(set(stated) - set(arrays) - set(NOT_ARRAYS))
    assert not unchecked, f"shapes on the notation page that this test does not build: {unchecked}"
    wrong = {name: (shape, arrays[name].shape) for name, shape in stated.items() if name in arrays
             and tuple(sizes[n] for n in shape) != arrays[name].shape}
    assert not wrong, f"the notation page's shapes against the library's (symbol: page, library): {wrong}"


def test_a_papers_symbol_is_not_a_symbol_of_the_book():
    # awf's M, BERT's A and Vaswani et al.'s N are on the page only as translations
    text = text_of("book/notation")
    assert "In the papers" in text
    kept = without_papers_column(text)
    assert "d_\\text{model}" in text and "d_\\text{model}" not in kept
    assert {"A", "N", "M"} <= DEFINED  # the book's own A_i, N and M stay defined


def test_one_bias_shape_everywhere():
    # every bias the page lists has the shape (n,) the library stores, none (1, n)
    stated = stated_shapes()
    arrays, _ = library_arrays()
    biases = {name: shape for name, shape in stated.items() if name.startswith("b_")}
    assert len(biases) >= 8 and all(len(shape) == 1 for shape in biases.values())
    assert all(arrays[name].ndim == 1 for name in biases)
    assert "(1, n_\\text{out})" not in text_of("book/notation")


def test_head_products_are_the_slices_of_the_projections():
    # the page's W'_V,i = W_V,i W_O,i: a concat layer is the sum form with these value maps (and b_V moved
    # into b_O, since each row of A_i sums to one)
    from geron_lib.model.attention import concat_attention, random_attention_weights, sum_attention

    H, h = 12, 3
    d = H // h
    w = random_attention_weights(H, h, "concat", seed=1)
    heads = [w["W_V"][:, i * d:(i + 1) * d] @ w["W_O"][i * d:(i + 1) * d] for i in range(h)]
    summed = dict(w, W_V=np.stack(heads))
    summed.pop("W_O")
    summed["b_O"] = w["b_O"] + w["b_V"] @ w["W_O"]
    summed.pop("b_V")
    x = np.random.default_rng(0).standard_normal((2, 5, H))
    np.testing.assert_allclose(sum_attention(x, summed, h), concat_attention(x, w, h), atol=1e-12)


# Indices: one letter, one range, on every page ------------------------------------------------------------

SUBSCRIPT = re.compile(r"_(?:\{((?:[^{}]|\{[^{}]*\})*)\}|(\\[A-Za-z]+|[A-Za-z0-9]))")
BRACED = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"
UNDERBRACE_LABEL = re.compile(rf"(\\underbrace{BRACED})_{BRACED}")


def tables(text: str) -> dict[str, list[dict[str, str]]]:
    """{the heading above a table: its rows, each {column name: cell}}."""
    found, heading, rows = {}, None, None
    for line in [*text.splitlines(), ""]:
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.startswith("|"):
            rows = [] if rows is None else rows
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows is not None:
            found[heading] = [dict(zip(rows[0], row, strict=True)) for row in rows[2:]]
            rows = None
    return found


def indices(tex: str) -> set[str]:
    """The index letters of one formula: the lower-case letters (and \\ell) that stand alone in its
    subscripts, i in W_{Q,i}, t in \\sum_{t' \\le t}; an underbrace's label and words in \\text{...} are no
    index, nor is a paper's own name such as d_k (its column on the notation page says whose it is)."""
    tex = UNDERBRACE_LABEL.sub(r"\1", tex)
    tex = re.sub(r"\\(?:text|textbf|textit|mbox)\{[^{}]*\}", " ", tex)
    for name in PAPERS_NAMES:
        tex = re.sub(rf"(?<![A-Za-z\\]){re.escape(name)}(?![A-Za-z])", " ", tex)
    found = set()
    for match in SUBSCRIPT.finditer(tex):
        sub = match.group(1) if match.group(1) is not None else match.group(2)
        found |= {r"\ell"} if re.search(r"\\ell(?![A-Za-z])", sub) else set()
        found |= set(re.findall(r"(?<![A-Za-z\\])[a-z](?![A-Za-z])", re.sub(r"\\[A-Za-z]+", " ", sub)))
    return found


NOTATION_TABLES = tables(text_of("book/notation"))

#: Names that are a paper's, written with a subscript letter (Vaswani et al.'s d_k and d_v): the column
#: "In the papers" names them, and a page that quotes them quotes the paper
PAPERS_NAMES = {name for rows in NOTATION_TABLES.values() for row in rows
                for tex in re.findall(r"\$([^$]+)\$", row.get("In the papers", ""))
                for name in re.findall(r"(?<![A-Za-z\\^])[A-Za-z]_[a-z](?![A-Za-z])", tex)}


def _first_column(rows: list[dict[str, str]]) -> list[set[str]]:
    """The symbols each row names, subscripts left out: x_t names x, \\sigma_j names \\sigma."""
    named = []
    for row in rows:
        tex = " ".join(re.findall(r"\$([^$]+)\$", row["Symbol"]))
        tex = re.sub(r"_\\(?:text|mathrm)\{[^{}]*\}", " ", tex)
        named.append(symbols(SUBSCRIPT.sub(" ", tex)))
    return named


INDEX_ROWS = _first_column(NOTATION_TABLES["Indices"])
INDEX_LETTERS = set().union(*INDEX_ROWS)
#: The sizes written with one letter (h, T, ...): an index may reach one (A_h, the last head)
SIZES = {letter for row in NOTATION_TABLES["Sizes"]
         for letter in re.findall(r"\$([A-Za-z])\$", row["Symbol"])}


def test_the_index_extraction_reads_subscripts_as_a_reader_does():
    assert indices(r"\mathrm{pad} + \sum_{t' \le t} [\mathrm{id}_{t'} \ne \mathrm{pad}]") == {"t"}
    assert indices(r"W_{Q,i} W_{K,i}^\top + \operatorname{dist}_{\ell+1} + T_\text{max}") == {"i", r"\ell"}
    assert indices(r"M = \underbrace{4\,N\,s}_{\text{weights, gradients, } m,\ v} + M_\text{act}") == set()
    assert indices(r"d_k = d_v = d_\text{model}/h") == set()
    assert indices(r"q_s b_K^\top") == {"s"}
    assert {"d_k", "d_v"} <= PAPERS_NAMES


def test_each_index_letter_is_declared_once():
    assert {"i", "t", r"\ell", "j"} <= INDEX_LETTERS
    for letter in INDEX_LETTERS:
        rows = [row for row in INDEX_ROWS if letter in row]
        assert len(rows) == 1, f"{letter} is declared by {len(rows)} rows of the Indices table"


def test_no_index_letter_names_anything_else_on_the_notation_page():
    # s is bytes per number: a position written s would mean two things
    other = set()
    for heading, rows in NOTATION_TABLES.items():
        if heading != "Indices":
            other |= set().union(*_first_column(rows))
    assert "s" in other and "x" in other and "t" not in other
    clash = sorted(INDEX_LETTERS & other)
    assert not clash, f"index letters that the notation page also gives another meaning: {clash}"


@pytest.mark.parametrize("docname", toc_pages())
def test_every_subscript_index_is_a_declared_index(docname):
    # an index may reach a size (A_h: the last head), never a letter that means something else
    text = text_of(docname)
    if docname == "book/notation":
        text = without_papers_column(text)
    used = set().union(*(indices(a or b) for a, b in MATH.findall(text)))
    undeclared = sorted(used - INDEX_LETTERS - SIZES)
    assert not undeclared, (f"{docname} uses {undeclared} as indices; the notation page's Indices table "
                            f"declares {sorted(INDEX_LETTERS)} (use one of them, or declare a new one there)")
