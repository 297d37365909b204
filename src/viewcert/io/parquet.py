"""Parquet read with a bound before every decode: a received Parquet file (an OPTIMADE-style database, a streamed
certificate's shard) is opened with every text/binary column kept dictionary-encoded, so a value repeated in every
row (a 5 KB file whose ids are one 16 MB dictionary string decodes to 2.4 GB) is held once; before any column
becomes Python values:

- the footer's uncompressed size of each column chunk read (what decoding its pages allocates) is checked against
  ``max_decoded_bytes``;
- the text/binary bytes the rows would decode to (each dictionary value's length times its uses, summed) against
  ``max_decoded_bytes``, and the longest value against ``max_value_bytes``.

Either is a ``LimitError`` naming the file and the column (the CLI: one line, exit 2), nothing decoded.
"""

from __future__ import annotations

from typing import Any

from viewcert.errors import InputError
from viewcert.limits import active_limits

__all__ = ["check_decoded", "check_footer", "open_bounded"]


def open_bounded(source: Any, *, name: str):
    """A ``pyarrow.parquet.ParquetFile`` of ``source`` (a path or a pyarrow buffer reader) whose text/binary
    columns (nested ones too) are read dictionary-encoded; InputError naming ``name`` when it is not Parquet."""
    import pyarrow as pa  # lazy: start-up (pyarrow only where a Parquet file is read)
    import pyarrow.parquet as pq

    try:
        schema = pq.ParquetFile(source).schema
        leaves = [schema.column(i).path for i in range(len(schema)) if schema.column(i).physical_type == "BYTE_ARRAY"]
        if hasattr(source, "seek"):
            source.seek(0)
        return pq.ParquetFile(source, read_dictionary=leaves or None)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise InputError(f"not a readable Parquet file ({str(exc)[:160]})", source=name) from None


def check_footer(pf, groups, columns: list[str] | None, *, name: str) -> None:
    """The uncompressed size the footer states for each column chunk of ``columns`` (None: all) in the row groups
    ``groups``, against ``max_decoded_bytes``, before any page is read."""
    limits = active_limits()
    meta = pf.metadata
    for g in groups:
        rg = meta.row_group(g)
        for j in range(rg.num_columns):
            col = rg.column(j)
            root = col.path_in_schema.split(".")[0]
            if columns is None or root in columns:
                limits.check_decoded(col.total_uncompressed_size, what=f"uncompressed bytes of row group {g} "
                                     f"(its footer)", source=name, field=root)


def _lengths(arr, pc):
    """(total decoded bytes, longest value) of a text/binary array (plain or dictionary-encoded); (0, 0) else."""
    import pyarrow as pa  # lazy: as open_bounded

    t = arr.type
    if pa.types.is_dictionary(t):
        if not (pa.types.is_string(t.value_type) or pa.types.is_binary(t.value_type)
                or pa.types.is_large_string(t.value_type) or pa.types.is_large_binary(t.value_type)):
            return 0, 0
        lengths = pc.binary_length(arr.dictionary)
        used = pc.take(lengths, arr.indices.filter(pc.is_valid(arr.indices)))
        total = pc.sum(used).as_py() or 0
        return int(total), int(pc.max(used).as_py() or 0)
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        lengths = pc.binary_length(arr)
        return int(pc.sum(lengths).as_py() or 0), int(pc.max(lengths).as_py() or 0)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _lengths(arr.flatten(), pc)
    if pa.types.is_struct(t):
        got = [_lengths(arr.field(i), pc) for i in range(t.num_fields)]
        return sum(g[0] for g in got), max((g[1] for g in got), default=0)
    return 0, 0


def check_decoded(table, *, name: str, where: str = "") -> None:
    """The text/binary bytes ``table`` (a pyarrow Table or RecordBatch, as read by ``open_bounded``) decodes to:
    each column's total and the rows' total against ``max_decoded_bytes``, its longest value against
    ``max_value_bytes``; LimitError naming ``name`` and the column, before anything is decoded."""
    import pyarrow.compute as pc  # lazy: as open_bounded

    limits = active_limits()
    total = 0
    for col_name, col in zip(table.column_names, table.columns, strict=True):
        chunks = col.chunks if hasattr(col, "chunks") else [col]
        for chunk in chunks:
            n, longest = _lengths(chunk, pc)
            limits.check_value_bytes(longest, source=name, field=col_name)
            limits.check_decoded(n, what=f"decoded text/binary bytes of column {col_name!r}{where}", source=name,
                                 field=col_name)
            total += n
    limits.check_decoded(total, what=f"decoded text/binary bytes{where}", source=name)
