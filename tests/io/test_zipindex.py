"""``io.zipindex``: a zip's members found through a compact index and read by seeking to their local headers.

The reference is Python's ``zipfile``: for random member sets (stored and deflated, zip64 local headers forced,
data descriptors from an unseekable writer, an archive comment, bytes prepended) every member's bytes are
``zipfile``'s. The hostile archives are made here from ``zipfile``'s output by patching the bytes the zip format
(PKWARE APPNOTE 6.3) places at fixed offsets: each is one ``InputError`` naming the archive and the member."""

from __future__ import annotations

import io
import os
import struct
import threading
import zipfile
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewcert.errors import InputError
from viewcert.io import zipindex as Z
from viewcert.io.database import cif_stem
from viewcert.limits import LimitError, Limits, using_limits

NAMES = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/\\"), min_size=1,
                max_size=12)


class _Unseekable(io.RawIOBase):
    """A write-only stream zipfile cannot seek: it writes data descriptors after each member."""

    def __init__(self, fh):
        self.fh = fh

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        return self.fh.write(b)


def _write(path: Path, members: list[tuple[str, bytes, int]], *, force_zip64: bool = False, seekable: bool = True,
           comment: bytes = b"", prefix: bytes = b"") -> None:
    with open(path, "wb") as fh:
        fh.write(prefix)
        target = fh if seekable else _Unseekable(fh)
        with zipfile.ZipFile(target, "w") as zf:
            for name, data, method in members:
                info = zipfile.ZipInfo(name)
                info.compress_type = method
                with zf.open(info, "w", force_zip64=force_zip64) as w:
                    w.write(data)
            zf.comment = comment


def _all_equal(path: Path, key=None, every: int = 1) -> int:
    """Every member of ``path`` is found through the index, and (every ``every``-th, the last too) read equal to
    zipfile's read; the number of members."""
    index = Z.build_index(str(path), key)
    with zipfile.ZipFile(path) as zf, Z.opened(index) as fd:
        infos = zf.infolist()
        for k, info in enumerate(infos):
            m = Z.find(fd, index, info.filename if key is None else key(info.filename), key)
            assert m is not None and m.name == info.filename
            if k % every == 0 or k == len(infos) - 1:
                assert Z.read_member(fd, index, m) == zf.read(info), info.filename
        assert Z.find(fd, index, "\x01 not a member") is None
    assert index.n_members == len(infos) and index.hashes.nbytes == 8 * len(infos)
    return len(infos)


@settings(max_examples=40, deadline=None)
@given(members=st.lists(st.tuples(st.lists(NAMES, min_size=1, max_size=3).map("/".join),
                                  st.binary(max_size=3000) | st.sampled_from([b"", b"ab" * 4000, bytes(70000)]),
                                  st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])),
                        max_size=12, unique_by=lambda m: m[0]),
       force_zip64=st.booleans(), seekable=st.booleans(), comment=st.sampled_from([b"", b"an archive comment, PK"]),
       prefix=st.sampled_from([b"", b"#!/bin/sh\nexit 0\n"]))
def test_every_member_is_zipfiles(tmp_path_factory, members, force_zip64, seekable, comment, prefix):
    path = tmp_path_factory.mktemp("z") / "a.zip"
    _write(path, members, force_zip64=force_zip64, seekable=seekable, comment=comment, prefix=prefix)
    assert _all_equal(path) == len(members)


def test_zip64_end_record_and_a_data_descriptor_are_read(tmp_path):
    """More than 65,535 members: zipfile writes the zip64 end record and locator; every member still equals
    zipfile's, the unseekable writer's members carry data descriptors (flag 0x08)."""
    path = tmp_path / "many.zip"
    n = 65_600
    with zipfile.ZipFile(path, "w") as zf:
        for k in range(n):
            zf.writestr(f"m/{k}.cif", f"{k}\n")
    raw = path.read_bytes()
    assert Z.SIG_EOCD64 in raw[-200:] and Z.SIG_LOC64 in raw[-200:]
    assert _all_equal(path, cif_stem, every=97) == n
    small = tmp_path / "dd.zip"
    _write(small, [("a", b"x" * 100, zipfile.ZIP_DEFLATED), ("b", b"y", zipfile.ZIP_STORED)], seekable=False,
           force_zip64=True)
    with zipfile.ZipFile(small) as zf:
        assert all(i.flag_bits & 0x08 for i in zf.infolist())
    assert _all_equal(small) == 2


# --- hostile archives ----------------------------------------------------------------------------------------------

def _plain(path: Path, members=(("by_id/a.CIF", b"A" * 40, zipfile.ZIP_STORED),
                               ("by_id/b.CIF", b"B" * 40, zipfile.ZIP_STORED))) -> bytearray:
    _write(path, list(members))
    return bytearray(path.read_bytes())


def _central(raw: bytearray, name: bytes) -> int:
    """Offset of the central-directory entry of ``name`` (its name's last occurrence, 46 bytes in)."""
    return raw.rfind(name) - 46


def _local(raw: bytearray, name: bytes) -> int:
    return raw.find(name) - 30


def _read(path: Path, name: str, limits: Limits | None = None) -> bytes:
    index = Z.build_index(str(path))
    with Z.opened(index) as fd:
        m = Z.find(fd, index, name)
        with using_limits(limits or Limits()):
            return Z.read_member(fd, index, m)


def test_a_truncated_central_directory_is_one_error(tmp_path):
    path = tmp_path / "t.zip"
    raw = _plain(path)
    cd = _central(raw, b"by_id/b.CIF")
    path.write_bytes(raw[:cd + 20])  # cut inside the last entry: no end record
    with pytest.raises(InputError, match=r"t.zip: not a readable zip archive \(no end-of-central-directory"):
        Z.build_index(str(path))
    eocd = raw.rfind(Z.SIG_EOCD)
    path.write_bytes(raw[:cd + 20] + raw[eocd:])  # the end record kept: it states more bytes than are there
    with pytest.raises(InputError, match="t.zip: not a readable zip archive|central directory is truncated"):
        Z.build_index(str(path))
    size_at = eocd + 12
    struct.pack_into("<L", raw, size_at, struct.unpack_from("<L", raw, size_at)[0] - 10)  # ends inside an entry
    raw[size_at - 12 + 16:size_at - 12 + 20] = struct.pack("<L", struct.unpack_from("<L", raw, eocd + 16)[0] + 10)
    path.write_bytes(raw)
    with pytest.raises(InputError, match=r"t.zip.*(truncated|bad central-directory entry)"):
        Z.build_index(str(path))


def test_overlapping_entries_are_refused_naming_a_member(tmp_path):
    """Two central entries sharing one local header (the overlapping-entries zip bomb)."""
    path = tmp_path / "o.zip"
    raw = _plain(path)
    struct.pack_into("<L", raw, _central(raw, b"by_id/b.CIF") + 42, _local(raw, b"by_id/a.CIF"))
    path.write_bytes(raw)
    with pytest.raises(InputError, match=r"file .*o.zip, field by_id/a.CIF: member's data .* overlap"):
        Z.build_index(str(path))


def test_a_central_directory_out_of_file_order_is_read_when_nothing_overlaps(tmp_path):
    """The order check's fallback (every span sorted, from a second pass): b's entry listed before a's."""
    path = tmp_path / "s.zip"
    raw = _plain(path)
    a, b = _central(raw, b"by_id/a.CIF"), _central(raw, b"by_id/b.CIF")
    end = raw.rfind(Z.SIG_EOCD)
    path.write_bytes(raw[:a] + raw[b:end] + raw[a:b] + raw[end:])
    assert _all_equal(path) == 2


def test_a_member_claiming_a_huge_size_is_refused_before_inflating(tmp_path):
    path = tmp_path / "h.zip"
    raw = _plain(path, [("a.cif", b"x" * 4000, zipfile.ZIP_DEFLATED)])
    for at in (_local(raw, b"a.cif") + 22, _central(raw, b"a.cif") + 24):
        struct.pack_into("<L", raw, at, 3 << 30)  # 3 GiB stated in both headers
    path.write_bytes(raw)
    with pytest.raises(LimitError, match="max_zip_member_bytes"):
        _read(path, "a.cif")
    index = Z.build_index(str(path))
    with Z.opened(index) as fd, pytest.raises(LimitError, match="max_zip_member_bytes"):
        Z.check_limits(fd, index)


def test_a_zip_bomb_ratio_is_refused_and_inflation_is_bounded(tmp_path):
    path = tmp_path / "b.zip"
    _plain(path, [("z.cif", bytes(4 << 20), zipfile.ZIP_DEFLATED)])  # 4 MiB of zeros: about 1,000-fold
    with pytest.raises(LimitError, match="max_zip_ratio"):
        _read(path, "z.cif")
    index = Z.build_index(str(path))
    with Z.opened(index) as fd, pytest.raises(LimitError, match="max_zip_ratio"):
        Z.check_limits(fd, index)
    assert len(_read(path, "z.cif", Limits(max_zip_ratio=1e6))) == 4 << 20
    raw = bytearray(path.read_bytes())  # the member states 1,000 bytes: inflation stops at 1,001
    for at in (_local(raw, b"z.cif") + 22, _central(raw, b"z.cif") + 24):
        struct.pack_into("<L", raw, at, 1000)
    path.write_bytes(raw)
    with pytest.raises(InputError, match="field z.cif: the member inflates past its stated size of 1000 bytes"):
        _read(path, "z.cif")


def test_names_with_dotdot_or_nul_are_only_ids(tmp_path):
    path = tmp_path / "n.zip"
    raw = _plain(path, [("../../evil.cif", b"E", zipfile.ZIP_STORED), ("aXb.cif", b"N", zipfile.ZIP_STORED),
                        ("/abs/c.CIF", b"C", zipfile.ZIP_STORED)])
    for at in (raw.find(b"aXb"), raw.rfind(b"aXb")):
        raw[at + 1] = 0
    path.write_bytes(raw)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    index = Z.build_index(str(path), cif_stem)
    with Z.opened(index) as fd:
        got = {k: Z.read_member(fd, index, Z.find(fd, index, k, cif_stem)) for k in ("evil", "a\x00b", "c")}
        assert Z.find(fd, index, "a", cif_stem) is None  # zipfile would cut the name at its NUL
    assert got == {"evil": b"E", "a\x00b": b"N", "c": b"C"}
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def _refused(path: Path, raw: bytearray, name: str, message: str) -> None:
    path.write_bytes(raw)
    with pytest.raises(InputError, match=rf"file .*{path.name}, field {name}: {message}"):
        _read(path, name)


def test_other_methods_encryption_and_header_disagreements_are_refused(tmp_path):
    path = tmp_path / "x.zip"
    _plain(path, [("b.cif", b"bz" * 100, zipfile.ZIP_BZIP2)])
    _refused(path, bytearray(path.read_bytes()), "b.cif", "compression method 12 is not read")
    raw = _plain(path)
    for at in (_local(raw, b"by_id/a.CIF") + 6, _central(raw, b"by_id/a.CIF") + 8):
        raw[at] |= 1
    _refused(path, raw, "by_id/a.CIF", "the member is encrypted")
    raw = _plain(path)
    raw[raw.find(b"by_id/a.CIF") + 6] = ord("Z")  # the local header's name
    _refused(path, raw, "by_id/a.CIF", "local header names b'by_id/Z.CIF'")
    raw = _plain(path)
    struct.pack_into("<L", raw, _local(raw, b"by_id/a.CIF") + 18, 39)  # local compressed size
    _refused(path, raw, "by_id/a.CIF", "local header states CRC .*, 39 compressed")
    raw = _plain(path)
    raw[_local(raw, b"by_id/a.CIF") + 30 + 11] ^= 0xFF  # a data byte
    _refused(path, raw, "by_id/a.CIF", "CRC-32 of the member's bytes does not match")


def test_a_data_descriptor_that_disagrees_is_refused(tmp_path):
    path = tmp_path / "d.zip"
    _write(path, [("a.cif", b"A" * 50, zipfile.ZIP_STORED), ("b.cif", b"B", zipfile.ZIP_STORED)], seekable=False)
    raw = bytearray(path.read_bytes())
    at = raw.find(Z.SIG_DESCRIPTOR)
    assert at == _local(raw, b"a.cif") + 30 + 5 + 50
    struct.pack_into("<L", raw, at + 4, zlib.crc32(b"A" * 50) ^ 1)
    _refused(path, raw, "a.cif", "data descriptor states CRC")


def test_two_members_with_one_key_are_refused(tmp_path):
    path = tmp_path / "r.zip"
    _plain(path, [("x/a.cif", b"1", zipfile.ZIP_STORED), ("y/a.CIF", b"2", zipfile.ZIP_STORED)])
    with pytest.raises(InputError, match=r"field y/a.CIF: two members are named 'a' \('x/a.cif' and 'y/a.CIF'\)"):
        Z.build_index(str(path), cif_stem)
    assert _all_equal(path) == 2  # by full name they are two


def test_a_changed_archive_and_a_fifo_are_refused_without_waiting(tmp_path):
    path = tmp_path / "c.zip"
    _plain(path)
    index = Z.build_index(str(path))
    with open(path, "ab") as fh:
        fh.write(b"more")
    with pytest.raises(InputError, match="changed since it was indexed"), Z.opened(index):
        pass
    fifo = tmp_path / "f.zip"
    os.mkfifo(fifo)
    box: dict = {}
    t = threading.Thread(target=_catch, args=(box, fifo), daemon=True)
    t.start()
    t.join(20)
    assert not t.is_alive(), "build_index waited on a FIFO"
    assert "f.zip: the zip archive is not a regular file" in str(box.get("error"))


def _catch(box: dict, fifo: Path) -> None:
    try:
        Z.build_index(str(fifo))
    except InputError as exc:
        box["error"] = exc


# --- through the GNoME reader --------------------------------------------------------------------------------------

def _gnome(tmp_path: Path, raw_patch=None) -> Path:
    """A GNoME-layout folder (two rows, two CIFs stored), its zip bytes passed through ``raw_patch``."""
    import csv

    folder = tmp_path / "gnome"
    folder.mkdir()
    with open(folder / "stable_materials_summary.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["MaterialId", "Crystal System", "Space Group Number", "Point Group"])
        w.writerows([["a", "cubic", 221, "m-3m"], ["b", "cubic", 221, "m-3m"]])
    cif = (b"data_Po\n_cell_length_a 3.35\n_cell_length_b 3.35\n_cell_length_c 3.35\n_cell_angle_alpha 90\n"
           b"_cell_angle_beta 90\n_cell_angle_gamma 90\n_symmetry_space_group_name_H-M 'P 1'\nloop_\n"
           b"_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n"
           b"Po1 Po 0 0 0\n")
    raw = _plain(folder / "by_id.zip", [("by_id/a.CIF", cif, zipfile.ZIP_STORED),
                                        ("by_id/b.CIF", cif, zipfile.ZIP_STORED)])
    (folder / "by_id.zip").write_bytes(raw_patch(raw) if raw_patch else raw)
    return folder


def test_a_bad_member_is_an_item_error_naming_the_zip_and_member(tmp_path):
    from viewcert.certify.inputs import load_input

    def flip(raw: bytearray) -> bytearray:
        raw[_local(raw, b"by_id/b.CIF") + 30 + 11 + 5] ^= 0xFF  # a byte of b's data
        return raw
    items = load_input(f"gnome:{_gnome(tmp_path, flip)}").items
    assert items[0].read().formula == "Po"
    with pytest.raises(InputError) as err:
        items[1].read()
    assert str(err.value) == ("file by_id.zip!by_id/b.CIF, field member: cannot read the member (CRC-32 of the "
                              "member's bytes does not match its central entry)")


def test_a_malformed_archive_is_one_line_exit_2(tmp_path):
    from typer.testing import CliRunner

    from viewcert.cli import app

    def overlap(raw: bytearray) -> bytearray:
        struct.pack_into("<L", raw, _central(raw, b"by_id/b.CIF") + 42, _local(raw, b"by_id/a.CIF"))
        return raw
    folder = _gnome(tmp_path, overlap)
    res = CliRunner().invoke(app, ["certify", f"gnome:{folder}", "--out", str(tmp_path / "out"), "--workers", "1"])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception  # never a traceback
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "by_id.zip, field by_id/a.CIF: member's data" in lines[0], res.output
