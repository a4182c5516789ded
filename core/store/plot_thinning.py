"""At most one marker per screen cell and origin: what keeps the plot fast at 10^5 points.

Markers closer than a few pixels cover each other, so drawing one of them looks the
same; the points themselves stay in the frame, where hover, click and rubber-band
selection find every one of them. The grid is fixed in plot coordinates between full
passes, so a new batch only adds markers for cells nobody occupied yet."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import isin

MAX_GROUPS = 1 << 12  # origins fit in an int16 code
DENSE_CELLS = 1 << 22  # cells x groups counted at once (an index array of 16 MB at most)


@dataclass(frozen=True)
class Grid:
    x0: float
    y0: float
    width: float  # of one cell, plot units
    height: float
    columns: int
    rows: int

    def cells(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cell index of each point inside the grid, inside-the-grid mask)."""
        cx = np.floor((x - self.x0) / self.width)
        cy = np.floor((y - self.y0) / self.height)
        inside = (cx >= 0) & (cx < self.columns) & (cy >= 0) & (cy < self.rows)
        return cx[inside].astype(np.int64) * self.rows + cy[inside].astype(np.int64), inside

    def keys(self, x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cell-and-group key, inside-the-grid mask) of each point."""
        cells, inside = self.cells(x, y)
        return cells * MAX_GROUPS + groups[inside].astype(np.int64), inside


class Thinning:
    """Chooses which points get a marker. `limit` caps the markers of one full pass (the
    cells grow until it holds); `cell_px` is the smallest cell, in screen pixels."""

    def __init__(self, limit: int = 4000, cell_px: float = 3.0):
        self.limit = limit
        self.cell_px = cell_px
        self.grid: Grid | None = None
        self._keys = np.empty(0, np.int64)  # sorted keys of the occupied cells

    def full(
        self, x, y, groups, candidates, area: tuple[float, float, float, float], pixel: tuple[float, float]
    ) -> np.ndarray:
        """Indices (among `candidates`) to draw over `area` = (x0, x1, y0, y1), given the
        size of one screen pixel in plot units. Cells are counted in a dense array (no sort:
        a pass over 10^5 points takes milliseconds), growing until `limit` holds."""
        x0, x1, y0, y1 = area
        px, py, kind = x[candidates], y[candidates], groups[candidates].astype(np.int64)
        kinds = int(kind.max()) + 1 if len(kind) else 1
        scale = 1.0
        while True:
            w, h = pixel[0] * self.cell_px * scale, pixel[1] * self.cell_px * scale
            grid = Grid(x0, y0, w, h, max(1, int(np.ceil((x1 - x0) / w))), max(1, int(np.ceil((y1 - y0) / h))))
            size = grid.columns * grid.rows * kinds
            if size > DENSE_CELLS:  # too fine to count densely: coarser first
                scale *= 1.01 * float(np.sqrt(size / DENSE_CELLS))
                continue
            cells, inside = grid.cells(px, py)
            chosen = np.full(size, -1, np.int32)
            chosen[cells * kinds + kind[inside]] = np.arange(len(cells), dtype=np.int32)  # one per cell and group
            occupied = np.flatnonzero(chosen >= 0)
            if len(occupied) <= self.limit:
                break
            scale *= max(1.2, float(np.sqrt(len(occupied) / self.limit)))
        self.grid = grid
        self._keys = (occupied // kinds) * MAX_GROUPS + occupied % kinds  # sorted, as Grid.keys makes them
        return candidates[inside][chosen[occupied]]

    def extend(self, x, y, groups, new: np.ndarray) -> np.ndarray:
        """Indices among `new` points that land in cells still empty (one per cell)."""
        if self.grid is None or len(new) == 0:
            return new[:0]
        keys, inside = self.grid.keys(x[new], y[new], groups[new])
        unique, first = np.unique(keys, return_index=True)
        fresh = ~isin(unique, self._keys)
        self._keys = np.union1d(self._keys, unique[fresh])
        return new[inside][first[fresh]]

    def reset(self) -> None:
        self.grid, self._keys = None, np.empty(0, np.int64)
