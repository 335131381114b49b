"""numpy arrays as Arrow arrays, sharing their memory, for the columnar readers.

Not pa.array: given a numpy array, its first call imports numpy.ma (about 20 ms of CPU on this
machine, a tenth of the fleet export of a 200,000-instance capture from its stored columns).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa

Bools = npt.NDArray[np.bool_]
_TYPES: Final = {
    np.dtype(np.int32): pa.int32(),
    np.dtype(np.int64): pa.int64(),
    np.dtype(np.float64): pa.float64(),
}


def _validity(missing: Bools | None) -> tuple[pa.Buffer | None, int]:
    if missing is None or not (nulls := int(np.count_nonzero(missing))):
        return None, 0
    return pa.py_buffer(np.packbits(~missing, bitorder="little")), nulls


def arrow_numbers(values: npt.NDArray[np.generic], missing: Bools | None = None) -> pa.Array:
    """int32, int64 or float64 values as an Arrow array, NULL where `missing`."""
    values = np.ascontiguousarray(values)
    validity, nulls = _validity(missing)
    return pa.Array.from_buffers(
        _TYPES[values.dtype], len(values), [validity, pa.py_buffer(values)], nulls
    )


def arrow_bools(values: Bools) -> pa.Array:
    """Booleans as an Arrow boolean array (bits), none NULL."""
    bits = np.packbits(np.ascontiguousarray(values, bool), bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)], 0)
