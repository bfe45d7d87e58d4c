"""Where a built page gives a graded exercise's answer away: the exercises' expected values, computed as the
assignments compute them (assignments/spec.yml's setup and solution, `assignments.hidden.expected_value`),
and the places a page's text shows one, in any of the forms a page prints a number in.

What counts as showing a value, by its kind:

- a count (an int): the number itself, its digits grouped or not (``4,368,384``, ``4368384``, ``4 368 384``
  with a thin or no-break space), not part of a longer number (``41`` is not in ``41.3`` nor in ``1,041``);
- a real number: the value rounded to the decimals the page shows (``12.50``, ``12.5``), or as a percentage
  followed by ``%`` (``3.2 %`` for 0.0319), with at least ``OWN_PAGE_DIGITS`` significant digits
  (``PERCENT_DIGITS`` for a percentage);
- a list of numbers: its items in order, separated by commas or spaces (``[2, 3, 4, 5, 6, 1, 1]``);
- arrays (or a dict of them): any element shown with at least ``ARRAY_DIGITS`` significant digits.

A number with fewer than ``ANYWHERE_DIGITS`` significant digits (``41``, ``756``, ``12.5``) is looked for on
its own exercise's page only: elsewhere it is as likely to be anything else (a perplexity of 12.5 in chapter
4 says nothing about chapter 5's 12.50). A text answer (the name of a choice) is not looked for: the
exercise itself names every choice.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from html.parser import HTMLParser

import numpy as np

#: Fewest significant digits of a number looked for on every page; fewer: on its exercise's page only
ANYWHERE_DIGITS = 4
#: Fewest significant digits of a real number that count as showing it, and of it as a percentage
OWN_PAGE_DIGITS, PERCENT_DIGITS = 3, 2
#: Fewest significant digits of an array element that count as showing it (on any page)
ARRAY_DIGITS = 6
#: What may group a number's digits by three: a comma, a no-break, thin or narrow no-break space
GROUPING = ",\u00a0\u2009\u202f"


@dataclass(frozen=True)
class Answer:
    """A graded exercise's expected value, and the page of its exercise (a docname, ``book/<chapter>``)."""

    page: str
    label: str
    value: object


@dataclass(frozen=True)
class Finding:
    """A place where a page shows an answer: the page (a file of the site), the answer, what it shows."""

    page: str
    label: str
    context: str

    def __str__(self) -> str:
        return f"{self.page}: {self.label}: ...{self.context}..."


@functools.cache
def graded_answers() -> tuple[Answer, ...]:
    """Every graded exercise of assignments/spec.yml with its expected value (runs the spec's solutions, once
    per process)."""
    from assignments.hidden import expected_value
    from assignments.spec import load_spec

    return tuple(Answer(f"book/{chapter}", q.label, expected_value(q))
                 for chapter, questions in load_spec().items() for q in questions)


class _Text(HTMLParser):
    """A page's text as a reader can see it: every text node outside scripts and styles (folded dropdowns
    and hidden inputs included: one click shows them), and every alt and title attribute."""

    def __init__(self):
        super().__init__()
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        self.parts += [value for key, value in attrs if key in ("alt", "title") and value]

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def page_text(html: str) -> str:
    """The text of a page (HTML or SVG) that a reader can see, entities decoded, in one string."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return " ".join(parser.parts)


def significant_digits(shown: str) -> int:
    return len(re.sub(r"\D", "", shown).lstrip("0"))


def _rounded(value: float, fewest: int) -> list[str]:
    """``value`` at every number of decimals that keeps at least ``fewest`` significant digits, up to 12."""
    shown = {f"{value:.{d}f}" for d in range(13)}
    return sorted(s for s in shown if significant_digits(s) >= fewest and float(s) != 0)


# A number as a page prints it: digits, grouped by three or not, with decimals or not, and a following % if
# any; never a piece of a longer number (the look-arounds: no digit or decimal point and digit beside it)
_NUMBER = re.compile(rf"(?<!\d)(?<!\d\.)-?(?:\d{{1,3}}(?:[{GROUPING}]\d{{3}})+|\d+)(?:\.\d+)?(?![.,]?\d)"
                     r"(?P<percent>\s*%)?")


def _numbers(text: str):
    """(the number without its grouping, is it a percentage, where) for every number in ``text``."""
    for m in _NUMBER.finditer(text):
        number = m[0].removesuffix(m["percent"] or "")
        yield re.sub(f"[{GROUPING}]", "", number), bool(m["percent"]), m


def _forms(value, own_page: bool) -> tuple[set[str], set[str]]:
    """The texts that show ``value`` on a page, as (plain numbers, percentages), grouping removed."""
    anywhere = 1 if own_page else ANYWHERE_DIGITS
    if isinstance(value, bool | str):
        return set(), set()
    if isinstance(value, int | np.integer):
        shown = str(int(value))
        return ({shown} if significant_digits(shown) >= anywhere else set()), set()
    if isinstance(value, float | np.floating):
        fewest = max(OWN_PAGE_DIGITS, anywhere)
        return (set(_rounded(float(value), fewest)),
                set(_rounded(100 * float(value), max(PERCENT_DIGITS, anywhere))))
    if isinstance(value, dict):
        value = list(value.values())
    arrays = [np.asarray(v) for v in value] if isinstance(value, list) else [np.asarray(value)]
    if all(a.ndim == 0 for a in arrays):  # a list of numbers: looked for as a sequence, see _sequence
        return set(), set()
    elements = np.concatenate([a.ravel() for a in arrays]).astype(float)
    return {s for e in elements for s in _rounded(float(e), ARRAY_DIGITS)}, set()


def _sequence(value) -> re.Pattern | None:
    """The pattern of a list of numbers printed in order, or None for any other value."""
    if not isinstance(value, list | tuple) or not value or not all(
            isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool) for v in value):
        return None
    items = [re.escape(str(v)) for v in value]
    return re.compile(r"(?<![\d.])" + r"[\s,;]+".join(items) + r"(?![.,]?\d)")


def findings(page: str, text: str, answer: Answer, own_page: bool) -> list[Finding]:
    """Every place where ``text``, the text of ``page``, shows ``answer``'s value (``own_page``: the page is
    its exercise's own, where shorter numbers count too)."""

    def at(m: re.Match) -> Finding:
        return Finding(page, answer.label, " ".join(text[max(0, m.start() - 60):m.end() + 60].split()))

    plain, percent = _forms(answer.value, own_page)
    found = [at(m) for number, is_percent, m in _numbers(text)
             if {number, number.removeprefix("-")} & (percent if is_percent else plain)]
    if (sequence := _sequence(answer.value)) is not None:
        found += [at(m) for m in sequence.finditer(text)]
    return found


def site_findings(site, answers: tuple[Answer, ...]) -> list[Finding]:
    """Every place where a page of the built site in folder ``site`` (its HTML pages and SVG images, not the
    theme's _static) shows one of ``answers``."""
    found = []
    for path in sorted(p for p in site.rglob("*") if p.suffix in (".html", ".svg")):
        name = path.relative_to(site).as_posix()
        if name.startswith("_static/"):
            continue
        text = page_text(path.read_text(encoding="utf-8"))
        found += [f for a in answers for f in findings(name, text, a, own_page=name == f"{a.page}.html")]
    return found


#: Opens every <details> and every toggle still closed (solutions, hidden cells), then returns all that the
#: page shows in one string: its rendered text, every alt, title and aria-label, and the text of every SVG
#: picture
SHOWN = """async () => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('button.toggle-button.toggle-button-hidden').forEach(b => b.click());
  await new Promise(done => setTimeout(done, 300));
  const parts = [document.body.innerText];
  for (const e of document.querySelectorAll('[alt], [title], [aria-label]'))
    for (const name of ['alt', 'title', 'aria-label']) parts.push(e.getAttribute(name) || '');
  for (const svg of document.querySelectorAll('svg')) parts.push(svg.textContent);
  for (const img of document.querySelectorAll('img')) {
    const url = new URL(img.src, location.href);
    if (url.origin === location.origin && url.pathname.endsWith('.svg')) {
      const svg = new DOMParser().parseFromString(await (await fetch(url)).text(), 'image/svg+xml');
      parts.push(svg.documentElement.textContent);
    }
  }
  return parts.join('\\n');
}"""


def shown_labels(page, docname: str, answers: tuple[Answer, ...]) -> set[str]:
    """The labels of the graded exercises whose value ``page`` (a Playwright page showing the book's page
    ``docname``) shows once everything on it is opened (``SHOWN``)."""
    text = page.evaluate(SHOWN)
    return {f.label for a in answers for f in findings(docname, text, a, own_page=a.page == docname)}
