"""One notation: every symbol a page's mathematics uses is on the notation page, the one authority.

A symbol is a Latin letter (with or without subscripts: W_Q counts as W), a Greek letter, or a named one
(\\mathrm{Emb}, \\operatorname{LN}, \\mathcal{L}: the name, whichever command typesets it). Words set in
\\text{...} are prose, not symbols.
"""

import re

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


DEFINED = page_symbols("book/notation")


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
