"""A zip archive's members found and read in memory that does not grow with their number: a compact index of the
central directory, and one member read by seeking to its local header.

Why our own code: Python's ``zipfile`` cannot open one member without first reading the whole central directory
into one ``ZipInfo`` object per member (about 0.7 KB each: 0.25 GB for GNoME's 381,000 CIFs, in the coordinator and
again in every worker, ``benchmarks/bench_gnome_zip.py``). Here the central directory is streamed once (1 MiB at a
time, zip64 included) into two numpy arrays, sorted: a 64-bit BLAKE2b hash of each member's key (its name, or what
``key`` makes of it) and the offset of its central-directory entry, 16 bytes per member. A lookup hashes the key,
finds the candidates by binary search and reads each candidate's entry back from the file, so two keys sharing a
hash are told apart by their names. ``tests/io/test_zipindex.py`` checks every member against ``zipfile``.

What is read: stored (method 0) and deflated (method 8) members, neither encrypted. Everything else is an
``InputError`` naming the zip (``source``) and the member (``field``): another method, encryption, a local header
whose name, method or sizes disagree with its central entry, a data descriptor that disagrees with it, a CRC-32
that does not match, data reaching into the central directory, two members overlapping (the "overlapping entries"
zip bomb), two members with the same key, a truncated or malformed central directory. A member's stated size and
compression ratio are checked against ``viewcert.limits`` before it is inflated, and inflation is bounded
(``zlib`` ``max_length``): a member never yields more than its stated size. Member names are ids only (UTF-8 when
the entry says so, else cp437, as ``zipfile``), never paths: ``../`` or a NUL in a name is just text here, nothing
is written to disk. The archive's size and modification time are recorded; a file changed since it was indexed is
refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import struct
import zlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from viewcert.errors import InputError
from viewcert.limits import active_limits

CHUNK = 1 << 20  # bytes read at a time from the central directory and from a member's data
MAX_COMMENT = 0xFFFF
_EOCD = struct.Struct("<4s4H2LH")  # end of central directory: signature, disks, counts, size, offset, comment
_LOC64 = struct.Struct("<4sLQL")  # zip64 end-of-central-directory locator
_EOCD64 = struct.Struct("<4sQ2H2L4Q")  # zip64 end of central directory record
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")  # a central-directory entry's fixed part (46 bytes)
_LOCAL = struct.Struct("<4s2B4HL2L2H")  # a local file header's fixed part (30 bytes)
SIG_EOCD, SIG_LOC64, SIG_EOCD64 = b"PK\x05\x06", b"PK\x06\x07", b"PK\x06\x06"
SIG_CENTRAL, SIG_LOCAL, SIG_DESCRIPTOR = b"PK\x01\x02", b"PK\x03\x04", b"PK\x07\x08"
STORED, DEFLATED = 0, 8
FLAG_ENCRYPTED, FLAG_DESCRIPTOR, FLAG_UTF8, FLAG_STRONG, FLAG_MASKED = 0x1, 0x8, 0x800, 0x40, 0x2000
FULL32, FULL16 = 0xFFFFFFFF, 0xFFFF


@dataclass(frozen=True)
class Member:
    """One member as its central-directory entry states it: ``name``, general-purpose ``flags``, compression
    ``method``, ``crc`` (CRC-32 of its bytes), ``compressed`` and ``size`` (bytes), ``local`` (offset of its local
    header in the file, bytes) and ``entry`` (offset of the central entry itself)."""

    name: str
    raw_name: bytes
    flags: int
    method: int
    crc: int
    compressed: int
    size: int
    local: int
    entry: int


@dataclass(frozen=True)
class ZipIndex:
    """The compact index of a zip archive (module docstring). ``path``; ``st_size`` and ``mtime_ns`` of the file
    indexed; ``cd_start``/``cd_end``: the central directory's byte range; ``concat``: bytes prepended to the
    archive (added to every recorded offset, as ``zipfile``); ``hashes``/``entries``: each member's key hash
    (uint64, sorted) and central-entry offset (int64); ``n_members`` (all entries, the key None ones included);
    ``total`` (stated bytes of every member), ``largest`` and ``steepest`` (entry offsets of the member with the
    largest size and of the one above 1 MiB with the largest ratio, -1 when none): what a limit check needs."""

    path: str
    st_size: int
    mtime_ns: int
    cd_start: int
    cd_end: int
    concat: int
    hashes: np.ndarray
    entries: np.ndarray
    n_members: int
    total: int
    largest: int
    steepest: int


def key_hash(key: str) -> int:
    """The 64-bit BLAKE2b hash of a key (UTF-8, lone surrogates kept) as an unsigned integer."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def _bad(message: str, source: str, member: str | None = None) -> InputError:
    return InputError(message, source=source, field=member)


# --- the file ----------------------------------------------------------------------------------------------------

def _open(path: str) -> tuple[int, os.stat_result]:
    """(descriptor, stat) of the regular file at ``path``, opened without blocking (a FIFO is refused, never
    waited on); InputError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _bad(f"cannot read the zip archive: {exc.strerror or exc}", path) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _bad("the zip archive is not a regular file; only regular files are read", path)
    return fd, st


def _pread(fd: int, n: int, offset: int, source: str, what: str, member: str | None = None) -> bytes:
    """Exactly ``n`` bytes at ``offset``; InputError naming ``what`` when the file ends first."""
    if offset < 0:
        raise _bad(f"{what} lies before the start of the file", source, member)
    out = os.pread(fd, n, offset)
    while len(out) < n:
        more = os.pread(fd, n - len(out), offset + len(out))
        if not more:
            raise _bad(f"{what} is truncated (the file ends at byte {offset + len(out)})", source, member)
        out += more
    return out


# --- end of central directory ------------------------------------------------------------------------------------

def _directory(fd: int, size: int, source: str) -> tuple[int, int, int]:
    """(start, end, concat) of the central directory, from the end record (zip64's when the archive has one),
    found as ``zipfile`` finds it: at the end, or before a comment of up to 64 KiB."""
    tail_len = min(size, _EOCD.size + MAX_COMMENT)
    tail = _pread(fd, tail_len, size - tail_len, source, "end of the archive")
    at = tail.rfind(SIG_EOCD, 0, max(0, tail_len - _EOCD.size + len(SIG_EOCD)))  # a whole record after it
    if at < 0:
        raise _bad("not a readable zip archive (no end-of-central-directory record)", source)
    eocd = size - tail_len + at
    _, disk, disk_cd, _, _, cd_size, cd_offset, _ = _EOCD.unpack_from(tail, at)
    if disk != 0 or disk_cd != 0:
        raise _bad("not a readable zip archive (spans several disks)", source)
    concat = eocd - cd_size - cd_offset
    if eocd >= _LOC64.size:
        loc = _pread(fd, _LOC64.size, eocd - _LOC64.size, source, "zip64 locator")
        if loc[:4] == SIG_LOC64:
            cd_size, cd_offset = _zip64_record(fd, eocd - _LOC64.size - _EOCD64.size, source)
            concat = eocd - cd_size - cd_offset - _EOCD64.size - _LOC64.size
    if concat < 0:
        raise _bad("not a readable zip archive (the central directory it states lies outside the file)", source)
    start = cd_offset + concat
    return start, start + cd_size, concat


def _zip64_record(fd: int, offset: int, source: str) -> tuple[int, int]:
    """(size, offset) of the central directory from the zip64 end record at ``offset``."""
    rec = _pread(fd, _EOCD64.size, offset, source, "zip64 end-of-central-directory record")
    sig, _, _, _, disk, disk_cd, _, _, cd_size, cd_offset = _EOCD64.unpack(rec)
    if sig != SIG_EOCD64:
        raise _bad("not a readable zip archive (the zip64 end record is missing)", source)
    if disk != 0 or disk_cd != 0:
        raise _bad("not a readable zip archive (spans several disks)", source)
    return cd_size, cd_offset


# --- central-directory entries -----------------------------------------------------------------------------------

def _zip64_extra(extra: bytes, wanted: tuple[bool, ...], source: str, member: str) -> list[int]:
    """The zip64 extra field's 8-byte values for the fields ``wanted`` (size, compressed, local offset) in that
    order, as ``zipfile`` reads them; InputError when the field is missing or short."""
    at = 0
    while at + 4 <= len(extra):
        tag, n = struct.unpack_from("<2H", extra, at)
        if tag == 1:
            body = extra[at + 4:at + 4 + n]
            if len(body) < 8 * sum(wanted):
                break
            return [struct.unpack_from("<Q", body, 8 * k)[0] for k in range(sum(wanted))]
        at += 4 + n
    raise _bad("the zip64 extra field a size or offset needs is missing or short", source, member)


def parse_entry(raw: bytes, at: int, offset: int, source: str) -> tuple[Member, int]:
    """(member, length in bytes) of the central-directory entry starting at ``raw[at]`` (file offset
    ``offset``); ``raw`` must hold it whole (``entry_length``)."""
    f = _CENTRAL.unpack_from(raw, at)
    if f[0] != SIG_CENTRAL:
        raise _bad(f"bad central-directory entry at byte {offset} (no signature)", source)
    flags, method, crc, csize, usize, n_name, n_extra, n_comment, disk, local = (
        f[5], f[6], f[9], f[10], f[11], f[12], f[13], f[14], f[15], f[18])
    raw_name = bytes(raw[at + 46:at + 46 + n_name])
    try:
        name = raw_name.decode("utf-8" if flags & FLAG_UTF8 else "cp437")
    except UnicodeDecodeError:
        raise _bad(f"the name of the entry at byte {offset} is not UTF-8", source) from None
    wanted = (usize == FULL32, csize == FULL32, local == FULL32)
    if any(wanted):
        extra = bytes(raw[at + 46 + n_name:at + 46 + n_name + n_extra])
        values = iter(_zip64_extra(extra, wanted, source, name))
        usize, csize, local = (next(values) if w else v for w, v in zip(wanted, (usize, csize, local), strict=True))
    if disk not in (0, FULL16):
        raise _bad("the member starts on another disk", source, name)
    member = Member(name, raw_name, flags, method, crc, csize, usize, local, offset)
    return member, 46 + n_name + n_extra + n_comment


def entry_length(raw: bytes, at: int) -> int:
    """The length in bytes of the entry starting at ``raw[at]`` (its fixed part must be in ``raw``)."""
    n_name, n_extra, n_comment = struct.unpack_from("<3H", raw, at + 28)
    return 46 + n_name + n_extra + n_comment


def iter_entries(fd: int, start: int, end: int, source: str) -> Iterator[Member]:
    """Every central-directory entry in ``[start, end)``, read ``CHUNK`` bytes at a time (one chunk held)."""
    buf, base, at = b"", start, 0  # base: file offset of buf[0]; at: the next entry's index in buf

    def ensure(n: int) -> None:
        nonlocal buf, base, at
        if at + n > len(buf):
            if base + at + n > end:
                raise _bad(f"the central directory is truncated (an entry at byte {base + at} runs past its end "
                           f"at byte {end})", source)
            keep = buf[at:]
            base, at = base + at, 0
            buf = keep + _pread(fd, min(max(CHUNK, n) - len(keep), end - base - len(keep)), base + len(keep),
                                source, "central directory")
    while base + at < end:
        ensure(_CENTRAL.size)
        ensure(entry_length(buf, at))
        member, length = parse_entry(buf, at, base + at, source)
        yield member
        at += length


# --- building the index ------------------------------------------------------------------------------------------

def build_index(path: str, key: Callable[[str], str | None] | None = None, *, name: str | None = None) -> ZipIndex:
    """The index of the zip archive at ``path`` (named ``name`` in errors): every member whose ``key(name)`` is not
    None (default: the name itself) under that key. InputError when the archive is malformed (module docstring),
    when two members share a key or when two members' data overlap."""
    source = name or str(path)
    fd, st = _open(str(path))
    try:
        start, end, concat = _directory(fd, st.st_size, source)
        hashes, entries = array("Q"), array("q")
        stats = _Stats(concat)
        for m in iter_entries(fd, start, end, source):
            stats.add(m)
            k = m.name if key is None else key(m.name)
            if k is not None:
                hashes.append(key_hash(k))
                entries.append(m.entry)
        if not stats.in_order or stats.last_end > start:  # rare: check every pair, from a second pass
            _no_overlap(fd, start, end, concat, source)
        h = _np(hashes, np.uint64)
        order = np.argsort(h)
        h = h[order]
        del hashes
        e = _np(entries, np.int64)[order]
        del entries, order
        _no_repeats(fd, h, e, key, source)
    finally:
        os.close(fd)
    return ZipIndex(str(path), st.st_size, st.st_mtime_ns, start, end, concat, h, e, stats.n, stats.total,
                    stats.largest, stats.steepest)


def _np(values: array, dtype) -> np.ndarray:
    """A numpy view of an ``array.array`` (an empty one too)."""
    return np.frombuffer(values, dtype) if len(values) else np.empty(0, dtype)


def _span(m: Member, concat: int) -> tuple[int, int]:
    """The least byte range [start, end) of a member's local header and data (its local extra field unknown)."""
    return m.local + concat, m.local + concat + _LOCAL.size + len(m.raw_name) + m.compressed


class _Stats:
    """Running count, total stated bytes, the members with the largest size and the largest ratio (> 1 MiB), and
    whether the local headers so far come in file order without overlap (``in_order``; ``last_end``: where the
    last one's data end), as every common writer lays them out."""

    def __init__(self, concat: int) -> None:
        self.n, self.total, self.largest, self.steepest, self.concat = 0, 0, -1, -1, concat
        self._size, self._ratio = -1, -1.0
        self.in_order, self.last_end = True, 0

    def add(self, m: Member) -> None:
        self.n += 1
        self.total += m.size
        begin, end = _span(m, self.concat)
        self.in_order = self.in_order and begin >= self.last_end
        self.last_end = end
        if m.size > self._size:
            self.largest, self._size = m.entry, m.size
        ratio = m.size / max(m.compressed, 1)
        if m.size > (1 << 20) and ratio > self._ratio:
            self.steepest, self._ratio = m.entry, ratio


def _entry_at(fd: int, offset: int, source: str) -> Member:
    """The central-directory entry at file offset ``offset``, read back."""
    head = _pread(fd, _CENTRAL.size, offset, source, "central-directory entry")
    raw = head + _pread(fd, entry_length(head, 0) - _CENTRAL.size, offset + _CENTRAL.size, source,
                        "central-directory entry")
    return parse_entry(raw, 0, offset, source)[0]


def _no_overlap(fd: int, cd_start: int, cd_end: int, concat: int, source: str) -> None:
    """InputError naming a member whose local header and data (at least) reach the next member's header or the
    central directory (entries sharing data are the overlapping-entries zip bomb): every member's span
    (``_span``) from a second pass over the central directory, sorted by start."""
    starts, ends = array("q"), array("q")
    for m in iter_entries(fd, cd_start, cd_end, source):
        begin, end = _span(m, concat)
        starts.append(begin)
        ends.append(end)
    if not starts:
        return
    starts, ends = _np(starts, np.int64), _np(ends, np.int64)
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    nxt = np.append(s[1:], cd_start)
    bad = np.flatnonzero(e > nxt)
    if len(bad):
        k = int(bad[0])
        what = "the central directory" if k == len(s) - 1 else "the next member's local header"
        raise _bad(f"member's data (bytes {int(s[k])}..{int(e[k])}) overlap {what} at byte {int(nxt[k])}",
                   source, _member_at_local(fd, int(s[k]), source))


def _member_at_local(fd: int, offset: int, source: str) -> str:
    """The name in the local header at ``offset`` (for an error message)."""
    head = _pread(fd, _LOCAL.size, offset, source, "local header")
    n = struct.unpack_from("<H", head, 26)[0]
    return _pread(fd, n, offset + _LOCAL.size, source, "local header").decode("utf-8", "replace")


def _no_repeats(fd: int, hashes: np.ndarray, entries: np.ndarray, key, source: str) -> None:
    """InputError naming two members with the same key (hash runs are read back and their keys compared)."""
    same = np.flatnonzero(hashes[1:] == hashes[:-1])
    for k in same:
        a, b = _entry_at(fd, int(entries[k]), source), _entry_at(fd, int(entries[k + 1]), source)
        ka, kb = (a.name, b.name) if key is None else (key(a.name), key(b.name))
        if ka == kb:
            raise _bad(f"two members are named {ka!r} ({a.name!r} and {b.name!r})", source, b.name)


# --- looking up and reading --------------------------------------------------------------------------------------

@contextlib.contextmanager
def opened(index: ZipIndex, name: str | None = None) -> Iterator[int]:
    """A descriptor on the indexed archive (named ``name`` in errors), refused when the file is no longer the one
    indexed (size or modification time changed)."""
    fd, st = _open(index.path)
    try:
        if (st.st_size, st.st_mtime_ns) != (index.st_size, index.mtime_ns):
            raise _bad("the zip archive changed since it was indexed", name or index.path)
        yield fd
    finally:
        os.close(fd)


def find(fd: int, index: ZipIndex, key: str, key_of: Callable[[str], str | None] | None = None,
         name: str | None = None) -> Member | None:
    """The member whose key (``key_of(name)``, default the name) is ``key``, or None; ``fd``: ``opened``."""
    h = np.uint64(key_hash(key))
    lo = int(np.searchsorted(index.hashes, h, side="left"))
    hi = int(np.searchsorted(index.hashes, h, side="right"))
    for k in range(lo, hi):
        m = _entry_at(fd, int(index.entries[k]), name or index.path)
        if (m.name if key_of is None else key_of(m.name)) == key:
            return m
    return None


def check_limits(fd: int, index: ZipIndex, name: str | None = None) -> None:
    """Every member's stated size and ratio and their total against the limits in force, as ``Limits.check_zip``
    (from the largest and the steepest member the index recorded), before anything is decompressed."""
    source, limits = name or index.path, active_limits()
    for offset in {index.largest, index.steepest} - {-1}:
        m = _entry_at(fd, offset, source)
        limits.check_zip_member(m.name, m.size, m.compressed, source=source)
    limits.check_zip_total(index.total, source=source)


def read_member(fd: int, index: ZipIndex, m: Member, *, name: str | None = None) -> bytes:
    """The bytes of member ``m`` (``find``), its local header checked against its central entry, its stated size
    against the limits in force before inflating, inflation bounded by that size, its CRC-32
    checked; InputError naming the archive and the member otherwise (module docstring)."""
    source = name or index.path
    if m.flags & (FLAG_ENCRYPTED | FLAG_STRONG | FLAG_MASKED):
        raise _bad("the member is encrypted; encrypted members are not read", source, m.name)
    if m.method not in (STORED, DEFLATED):
        raise _bad(f"compression method {m.method} is not read (stored and deflate only)", source, m.name)
    active_limits().check_zip_member(m.name, m.size, m.compressed, source=source)
    start, zip64 = _local_header(fd, index, m, source)
    if start + m.compressed > index.cd_start:
        raise _bad("the member's data reach into the central directory", source, m.name)
    data = _stored(fd, start, m, source) if m.method == STORED else _inflate(fd, start, m, source)
    if zlib.crc32(data) != m.crc:
        raise _bad("CRC-32 of the member's bytes does not match its central entry", source, m.name)
    if m.flags & FLAG_DESCRIPTOR:
        _descriptor(fd, start + m.compressed, m, zip64, index.cd_start, source)
    return data


def _local_header(fd: int, index: ZipIndex, m: Member, source: str) -> tuple[int, bool]:
    """(offset of the member's data, whether its local header has a zip64 field); its name, method and (without a
    data descriptor) CRC and sizes must be the central entry's."""
    at = m.local + index.concat
    f = _LOCAL.unpack(_pread(fd, _LOCAL.size, at, source, "local header", m.name))
    if f[0] != SIG_LOCAL:
        raise _bad(f"no local header at byte {at}", source, m.name)
    flags, method, crc, csize, usize, n_name, n_extra = f[3], f[4], f[7], f[8], f[9], f[10], f[11]
    rest = _pread(fd, n_name + n_extra, at + _LOCAL.size, source, "local header", m.name)
    if rest[:n_name] != m.raw_name:
        raise _bad(f"local header names {rest[:n_name][:80]!r}, the central directory {m.raw_name[:80]!r}",
                   source, m.name)
    if method != m.method or (flags ^ m.flags) & (FLAG_ENCRYPTED | FLAG_DESCRIPTOR):
        raise _bad("local header's method or flags differ from the central directory's", source, m.name)
    wanted = (usize == FULL32, csize == FULL32)
    zip64 = any(wanted)
    if zip64:
        values = iter(_zip64_extra(rest[n_name:], (*wanted, False), source, m.name))
        usize, csize = (next(values) if w else v for w, v in zip(wanted, (usize, csize), strict=True))
    if not flags & FLAG_DESCRIPTOR and (crc, csize, usize) != (m.crc, m.compressed, m.size):
        raise _bad(f"local header states CRC {crc:08x}, {csize} compressed and {usize} bytes; the central "
                   f"directory {m.crc:08x}, {m.compressed} and {m.size}", source, m.name)
    return at + _LOCAL.size + n_name + n_extra, zip64


def _stored(fd: int, start: int, m: Member, source: str) -> bytes:
    if m.compressed != m.size:
        raise _bad(f"a stored member's compressed size {m.compressed} differs from its size {m.size}", source,
                   m.name)
    return _pread(fd, m.size, start, source, "member data", m.name)


def _inflate(fd: int, start: int, m: Member, source: str) -> bytes:
    """The member's deflate data inflated ``CHUNK`` bytes at a time, never past its stated size + 1 byte."""
    d, out, pos, left = zlib.decompressobj(-15), bytearray(), start, m.compressed
    try:
        while left > 0 and not d.eof:
            chunk = _pread(fd, min(CHUNK, left), pos, source, "member data", m.name)
            pos, left = pos + len(chunk), left - len(chunk)
            out += d.decompress(chunk, m.size - len(out) + 1)
            if len(out) > m.size:
                raise _bad(f"the member inflates past its stated size of {m.size} bytes", source, m.name)
    except zlib.error as exc:
        raise _bad(f"corrupt deflate data ({str(exc)[:80]})", source, m.name) from None
    if len(out) != m.size:
        raise _bad(f"the member inflates to {len(out)} bytes, its central entry states {m.size}", source, m.name)
    return bytes(out)


def _descriptor(fd: int, at: int, m: Member, zip64: bool, cd_start: int, source: str) -> None:
    """The data descriptor after the member's data (optional signature, CRC-32, sizes of 4 bytes, or 8 with zip64)
    must state the central entry's CRC and sizes."""
    width = 8 if zip64 else 4
    raw = _pread(fd, min(4 + 4 + 2 * width, max(cd_start - at, 0)), at, source, "data descriptor", m.name)
    if raw[:4] == SIG_DESCRIPTOR:
        raw = raw[4:]
    if len(raw) < 4 + 2 * width:
        raise _bad("the data descriptor is truncated", source, m.name)
    crc, csize, usize = struct.unpack_from("<L2Q" if zip64 else "<3L", raw)
    if (crc, csize, usize) != (m.crc, m.compressed, m.size):
        raise _bad(f"data descriptor states CRC {crc:08x}, {csize} compressed and {usize} bytes; the central "
                   f"directory {m.crc:08x}, {m.compressed} and {m.size}", source, m.name)
