"""The base every itemised cost shares: named items that add up to a total, printed as a table."""

from __future__ import annotations


class Itemised:
    """Items named in ``ADDITIVE`` that add up to ``total``, and their table (one row each, then the total).

    The base of :class:`~geron_lib.costs.params.ParameterCount`, :class:`~geron_lib.costs.flops.FlopCount` and
    :class:`~geron_lib.costs.training_memory.TrainingMemory`; ``_value`` formats one figure of the table.
    """

    ADDITIVE: tuple[str, ...] = ()

    def items(self) -> dict[str, int]:
        """The additive items (they sum to ``total``)."""
        return {name: getattr(self, name) for name in self.ADDITIVE}

    def _value(self, v: int) -> str:
        return f"{v:,}"

    def __str__(self) -> str:
        width = max(map(len, self.items()))
        rows = [f"{k:<{width}}  {self._value(v)}" for k, v in self.items().items()]
        rows.append(f"{'total':<{width}}  {self._value(self.total)}")
        return "\n".join(rows)
