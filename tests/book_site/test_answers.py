"""answers.py's search on small pages written here: it finds an answer in every form a page prints it in,
in folded dropdowns and alt text too, and nowhere it is only part of another number."""

import numpy as np

from .answers import Answer, findings, page_text

PAGE = "book/01_factorised_embeddings"


def _found(html: str, value, own_page: bool = True) -> list[str]:
    return [f.context for f in findings("page.html", page_text(html), Answer(PAGE, "ex", value), own_page)]


def test_a_count_is_found_grouped_or_not_and_in_a_folded_solution():
    solution = ('<details class="solution dropdown"><summary>Solution</summary><p>'
                '<span class="output text_plain">4,368,384</span> parameters</p></details>')
    assert len(_found(solution, 4368384)) == 1
    for shown in ("4368384", "4\u202f368\u202f384", "4\u00a0368\u00a0384", "(4,368,384)", "-4368384"):
        assert len(_found(f"<p>V E + E H + H = {shown}.</p>", 4368384)) == 1, shown


def test_a_count_inside_another_number_is_not_found():
    for shown in ("41.3", "0.41", "1,041", "410", "3041", "41,000", "41.0"):
        assert _found(f"<p>it took {shown} ms</p>", 41) == [], shown
    assert len(_found("<p>keeps 41 products</p>", 41)) == 1


def test_a_short_number_counts_on_its_own_page_only():
    assert len(_found("<p>exact / rule 12.5</p>", 12.499298281297671, own_page=True)) == 1
    assert _found("<p>perplexity 12.5</p>", 12.499298281297671, own_page=False) == []
    assert len(_found("<p>exact / rule 12.50</p>", 12.499298281297671, own_page=False)) == 1
    assert _found("<p>keeps 41 products</p>", 41, own_page=False) == []
    assert len(_found("<p>2,050 parameters</p>", 2050, own_page=False)) == 1


def test_a_real_number_is_found_rounded_and_as_a_percentage():
    p = 0.27249052503906246
    for shown in ("0.272", "0.2725", "0.27249", "27.2 %", "27.25%", "27\u202f%"):
        assert len(_found(f"<td>{shown}</td>", p)) == 1, shown
    for shown in ("0.27", "0.2724", "0.273", "27.3 %", "27.2"):  # too few digits, wrongly rounded, no %
        assert _found(f"<td>{shown}</td>", p) == [], shown
    share = 0.03191476673935023  # an {eval} followed by a percent sign, as a solution shows it
    assert len(_found('<p>and <span class="output text_plain">3.2</span> % at batch 256</p>', share)) == 1


def test_alt_text_and_titles_are_searched_but_scripts_are_not():
    assert len(_found('<img alt="the curve ends at 8.342" src="x.png">', 8.342281163249492)) == 1
    assert len(_found('<abbr title="8.342 distinct masks">D</abbr>', 8.342281163249492)) == 1
    assert _found("<script>var x = 8.342;</script><style>p{width:8.342px}</style>", 8.342281163249492) == []


def test_a_list_is_found_as_its_items_in_order():
    positions = [2, 3, 4, 5, 6, 1, 1]
    for shown in ("[2, 3, 4, 5, 6, 1, 1]", "[2 3 4 5 6 1 1]", "2,3,4,5,6,1,1"):
        assert len(_found(f"<pre>RoBERTa {shown}</pre>", positions)) == 1, shown
    assert _found("<pre>[2, 3, 4, 5, 6, 7, 8]</pre><pre>[1, 1]</pre>", positions) == []
    assert _found("<pre>[12, 3, 4, 5, 6, 1, 1]</pre>", positions) == []


def test_an_array_is_found_by_its_precise_elements_only():
    w = {"W_V": np.array([[-0.14176279, 0.23411581]]), "b_O": np.array([0.5])}
    assert len(_found("<pre>[[-0.14176279  0.23411581]]</pre>", w)) == 2
    assert len(_found("<pre>-0.141763</pre>", w)) == 1
    assert _found("<pre>-0.1418 0.2341 0.5</pre>", w) == []  # a few digits: too likely anything else


def test_a_text_answer_is_not_searched():
    assert _found("<p>factorising cost more</p>", "factorising") == []
