"""Interleaved designs (`design.order: interleaved`): the campaign runs in rounds.

Each round is one kept trial of every cell. Within a round the cells run in an order
that is counterbalanced across rounds by a Williams design (Williams 1949, "Experimental
designs balanced for the estimation of residual effects of treatments", Australian
Journal of Scientific Research A 2(2)): over its rows every cell takes every position
equally often and follows every other cell equally often, so a drift within a round
(warming nodes, a slowly filling disk, the machine's other load) and the carry-over of
one cell into the next hit every cell alike. For two cells its rows are AB, BA (ABBA
over two rounds). k even needs k rows, k odd 2k (the rows and their mirrors).

Factors of a different kind change at different cost. Cells are grouped as the blocked
design groups them: by lab (a rebuild), then by schema (a recreate), then cells that
share both. A round orders the labs by a Williams row over the labs, within a lab the
schema blocks by a row over the blocks, within a block the cells by a row over the
cells: a round builds every lab once and loads every schema once, which is the fewest
resets an interleaved round can have, and the order at every level is counterbalanced.

Which cell is which Williams letter, and the order the rows are taken in, are shuffled
with design.seed (the usual randomisation of a Williams design); round r uses row
r mod rows, so after a multiple of `rows` rounds the balance is exact.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


def williams(k: int) -> list[list[int]]:
    """The rows of a Williams design for k treatments (0..k-1): k rows for even k (and
    k = 1), 2k for odd k (each row and its mirror)."""
    if k < 1:
        raise ValueError(f"a Williams design needs k >= 1, not {k}")
    first = [0]
    lo, hi = 1, k - 1
    while len(first) < k:  # 0, 1, k-1, 2, k-2, ...
        first.append(lo)
        lo += 1
        if len(first) < k:
            first.append(hi)
            hi -= 1
    rows = [[(x + i) % k for x in first] for i in range(k)]
    if k % 2 == 1 and k > 1:
        rows += [list(reversed(r)) for r in rows]
    return rows


@dataclass(frozen=True)
class Counterbalance:
    """The order of k items in round r: a Williams row, its letters and row order shuffled
    once by the seed."""

    letters: tuple[int, ...]  # letters[j]: the item that Williams letter j stands for
    rows: tuple[tuple[int, ...], ...]  # in the order rounds take them

    @classmethod
    def of(cls, k: int, rng: random.Random) -> Counterbalance:
        letters = list(range(k))
        rng.shuffle(letters)
        rows = williams(k)
        rng.shuffle(rows)
        return cls(tuple(letters), tuple(tuple(r) for r in rows))

    def order(self, round_no: int) -> list[int]:
        """Item indices in run order for round `round_no` (from 1)."""
        row = self.rows[(round_no - 1) % len(self.rows)]
        return [self.letters[j] for j in row]


def arrange(groups: Sequence[Sequence[Sequence[T]]], rounds: int, seed: int
            ) -> list[list[T]]:
    """Each round's items in run order: `groups` is labs -> schema blocks -> cells, and
    every level is ordered by its own Williams rows (see the module docstring)."""
    rng = random.Random(seed)
    lab_cb = Counterbalance.of(len(groups), rng)
    block_cb = [Counterbalance.of(len(lab), rng) for lab in groups]
    cell_cb = [[Counterbalance.of(len(block), rng) for block in lab] for lab in groups]
    out: list[list[T]] = []
    for r in range(1, rounds + 1):
        run: list[T] = []
        for li in lab_cb.order(r):
            for bi in block_cb[li].order(r):
                block = groups[li][bi]
                run.extend(block[ci] for ci in cell_cb[li][bi].order(r))
        out.append(run)
    return out


def balance(orders: Sequence[Sequence[int]]) -> tuple[dict[tuple[int, int], int],
                                                      dict[tuple[int, int], int]]:
    """(item, position) -> count and (item, the item right before it) -> count over the
    rounds: what a Williams design makes even (for tests and `experiment plan`)."""
    pos: dict[tuple[int, int], int] = {}
    after: dict[tuple[int, int], int] = {}
    for o in orders:
        for i, x in enumerate(o):
            pos[(x, i)] = pos.get((x, i), 0) + 1
            if i:
                after[(x, o[i - 1])] = after.get((x, o[i - 1]), 0) + 1
    return pos, after
