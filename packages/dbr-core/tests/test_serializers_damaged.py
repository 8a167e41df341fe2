"""Loading damaged, truncated, oversized and foreign files with load_npz and load_hdf5.

Every failure must raise before the target changes (no half-loaded state) and
name the file and, where one is at fault, the member or key.
"""

import io
import struct
import zipfile

import numpy
import numpy.lib.format as npy_format
import pytest

from dbr.core.serializers import DeserializationError, load_hdf5, load_npz, save_hdf5, save_npz

try:
    import h5py
except ImportError:
    h5py = None

needs_h5py = pytest.mark.skipif(
    h5py is None, reason='h5py is not installed (pip install "dbr-core[hdf5]")'
)

# float64 noise does not compress, so a member holds many zip blocks: a byte
# flipped in its middle is met only after the header (and earlier members) were read.
N = 4000


class Holder:
    """A target whose serialize sets an array, a counter, then a later array (like a trainer)."""

    def __init__(self, seed, first=True, last=True):
        rng = numpy.random.default_rng(seed)
        self.first = rng.standard_normal(N) if first else None
        self.t = seed
        self.last = rng.standard_normal(N) if last else None

    def serialize(self, serializer):
        self.first = serializer("first", self.first)
        self.t = serializer("t", self.t)
        self.last = serializer("last", self.last)

    def state(self):
        return (
            None if self.first is None else self.first.copy(),
            self.t,
            None if self.last is None else self.last.copy(),
        )


def assert_unchanged(holder, state):
    first, t, last = state
    assert holder.t == t
    for now, before in ((holder.first, first), (holder.last, last)):
        if before is None:
            assert now is None
        else:
            numpy.testing.assert_array_equal(now, before)


def refused_load(load, path, target, **kwargs):
    """Assert that ``load(path, target)`` raises naming ``path`` and changes nothing; return it."""
    before = target.state()
    with pytest.raises(DeserializationError) as info:
        load(path, target, **kwargs)
    assert str(path) in str(info.value)
    assert_unchanged(target, before)
    return info.value


def member_data_offset(path, member):
    """Where ``member``'s (compressed) data starts in the zip file at ``path``."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    with open(path, "rb") as f:
        f.seek(info.header_offset)
        local = f.read(30)
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    return info.header_offset + 30 + name_len + extra_len, info.compress_size


def flip_bytes(path, offset, count=8):
    data = bytearray(path.read_bytes())
    for i in range(offset, offset + count):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def raw_npz(path, members, compression=zipfile.ZIP_STORED):
    """Write an NPZ whose members are {name: (.npy header dict, payload bytes)}."""
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, (header, payload) in members.items():
            with archive.open(name + ".npy", "w") as member:
                npy_format.write_array_header_1_0(member, header)
                member.write(payload)


def f8_header(shape):
    return {"descr": "<f8", "fortran_order": False, "shape": shape}


# -- corrupt data behind a valid header: nothing is loaded --------------------


@pytest.mark.parametrize("compression", [True, False])
def test_npz_corrupt_later_member_changes_nothing(tmp_path, compression):
    path = tmp_path / "model.npz"
    save_npz(path, Holder(1), compression=compression)
    offset, size = member_data_offset(path, "last.npy")
    flip_bytes(path, offset + size // 2)
    target = Holder(2)
    error = refused_load(load_npz, path, target)
    message = str(error)
    assert "'last'" in message and "last.npy" in message
    assert "CRC" in message
    assert "nothing was loaded" in message
    assert error.unreadable and error.unreadable[0][0] == "last"


def test_npz_corrupt_member_into_uninitialized_target(tmp_path):
    path = tmp_path / "model.npz"
    save_npz(path, Holder(1))
    offset, size = member_data_offset(path, "last.npy")
    flip_bytes(path, offset + size // 2)
    target = Holder(2, first=False)
    before = target.state()
    with pytest.raises(DeserializationError, match="last.npy"):
        load_npz(path, target)
    assert_unchanged(target, before)


def test_npz_loads_after_the_checks(tmp_path):
    path = tmp_path / "model.npz"
    source = Holder(1)
    save_npz(path, source)
    target = Holder(2, first=False)
    load_npz(path, target)
    assert_unchanged(target, source.state())


def find_chunk(path, name):
    with h5py.File(path, "r") as f:
        info = f[name].id.get_chunk_info(0)
    return info.byte_offset, info.size


@needs_h5py
def test_hdf5_corrupt_gzip_chunk_changes_nothing(tmp_path):
    path = tmp_path / "model.h5"
    save_hdf5(path, Holder(1))
    offset, size = find_chunk(path, "last")
    flip_bytes(path, offset + size // 2, count=64)
    target = Holder(2)
    error = refused_load(load_hdf5, path, target)
    message = str(error)
    assert "'last'" in message
    assert "nothing was loaded" in message
    assert error.unreadable[0][0] == "last"


# -- declared sizes are checked before any data is read -----------------------


def test_npz_header_declaring_a_huge_array_is_refused(tmp_path):
    path = tmp_path / "huge.npz"
    shape = (2**30, 15)  # 120 GiB of float64
    raw_npz(path, {"first": (f8_header(shape), b"\0" * 16)})
    target = Holder(2, first=False, last=False)
    error = refused_load(load_npz, path, target, ignore_names=["t", "last"])
    message = str(error)
    assert "'first'" in message
    assert f"{2**30 * 15 * 8} bytes" in message and "16 bytes" in message


def test_npz_short_data_is_refused_before_reading(tmp_path):
    path = tmp_path / "short.npz"
    raw_npz(
        path,
        {
            "first": (f8_header((N,)), numpy.zeros(N).tobytes()),
            "t": ({"descr": "<i8", "fortran_order": False, "shape": ()}, b"\7" + b"\0" * 7),
            "last": (f8_header((N,)), numpy.zeros(N // 2).tobytes()),
        },
    )
    target = Holder(2)
    error = refused_load(load_npz, path, target)
    message = str(error)
    assert "'last'" in message
    assert f"{N * 8} bytes" in message and f"{N * 4} bytes" in message
    assert "EOF" not in message


def test_npz_directory_overstating_a_member_is_refused(tmp_path):
    # A stored member whose zip directory claims 1 GB while 16 bytes follow:
    # the .npy header agrees with the directory, the compressed size does not.
    path = tmp_path / "lying.npz"
    header = {"descr": "|u1", "fortran_order": False, "shape": (10**9 - 128,)}
    raw_npz(path, {"first": (header, b"\0" * 16)})
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("first.npy")
    assert info.file_size == 128 + 16
    local = info.header_offset
    central = data.rindex(b"PK\x01\x02")
    data[local + 22 : local + 26] = struct.pack("<I", 10**9)
    data[central + 24 : central + 28] = struct.pack("<I", 10**9)
    path.write_bytes(bytes(data))
    target = Holder(2, first=False, last=False)
    with pytest.raises(DeserializationError) as info:
        load_npz(path, target, ignore_names=["t", "last"])
    message = str(info.value)
    assert str(path) in message and "'first'" in message
    assert f"declares {10**9} bytes" in message and "holds 144 bytes" in message
    assert target.first is None


@needs_h5py
def test_hdf5_dataset_without_its_data_is_refused(tmp_path):
    # HDF5 answers never-written chunks with fill values: 128 GiB of them here.
    path = tmp_path / "hollow.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("first", shape=(2**34,), dtype="f8", chunks=(1024,))
    target = Holder(2, first=False, last=False)
    with pytest.raises(DeserializationError) as info:
        load_hdf5(path, target, ignore_names=["t", "last"])
    message = str(info.value)
    assert str(path) in message and "'first'" in message
    assert f"{2**34 * 8} bytes" in message
    assert target.first is None


# -- low-level failures name the file ------------------------------------------


TRUNCATED = [
    pytest.param(save_npz, load_npz, "model.npz", k, id=f"npz-{k}") for k in (0.0, 0.5, 0.9)
]
TRUNCATED += [
    pytest.param(save_hdf5, load_hdf5, "model.h5", k, marks=needs_h5py, id=f"hdf5-{k}")
    for k in (0.0, 0.5)
]


@pytest.mark.parametrize(("save", "load", "name", "keep"), TRUNCATED)
def test_truncated_file_names_the_file(tmp_path, save, load, name, keep):
    path = tmp_path / name
    save(path, Holder(1))
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    target = Holder(2)
    error = refused_load(load, path, target)
    assert load.__name__ in str(error)
    assert error.unreadable


def _write_text(path):
    path.write_text("hello, world\n")


# (write the file, its name, the loader given it, what the error must say)
FOREIGN = [
    pytest.param(_write_text, "notes.txt", load_npz, ["not an NPZ archive"], id="text-to-npz"),
    pytest.param(
        lambda path: save_hdf5(path, Holder(1)),
        "model.h5",
        load_npz,
        ["HDF5", "load_hdf5"],
        marks=needs_h5py,
        id="hdf5-to-npz",
    ),
    pytest.param(
        lambda path: save_npz(path, Holder(1)),
        "model.npz",
        load_hdf5,
        ["load_npz"],
        marks=needs_h5py,
        id="npz-to-hdf5",
    ),
]


@pytest.mark.parametrize(("write", "name", "load", "fragments"), FOREIGN)
def test_file_of_another_format_names_the_file_and_what_it_is(
    tmp_path, write, name, load, fragments
):
    path = tmp_path / name
    write(path)
    with pytest.raises(DeserializationError) as info:
        load(path, Holder(2))
    message = str(info.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message
    assert "pickle" not in message


def test_file_object_given_to_load_npz_is_read_from_its_position(tmp_path):
    buf = io.BytesIO()
    buf.write(b"prefix")
    save_npz(buf, Holder(1))
    buf.seek(len(b"prefix"))
    target = Holder(2)
    load_npz(buf, target)
    assert target.t == 1


@needs_h5py
def test_hdf5_self_referencing_link_names_file_and_key(tmp_path):
    path = tmp_path / "loop.h5"
    source = Holder(1)
    with h5py.File(path, "w") as f:
        f["first"] = source.first
        f["t"] = source.t
        f["last"] = h5py.SoftLink("/last")
    target = Holder(2)
    error = refused_load(load_hdf5, path, target)
    message = str(error)
    assert "'last'" in message and "link" in message


# -- HDF5 checksums: every dataset save_hdf5 writes is verified on load --------


class Counter:
    """A target holding what an update rule holds: a step count, a scalar, a 1-element array."""

    def __init__(self, t=0, scale=0.0, one=None):
        self.t = t
        self.scale = scale
        self.one = numpy.zeros(1) if one is None else one
        self.name = "abc"

    def serialize(self, serializer):
        self.t = serializer("t", self.t)
        self.scale = serializer("scale", self.scale)
        self.one = serializer("one", self.one)
        self.name = serializer("name", self.name)

    def state(self):
        return (self.t, self.scale, self.one.copy(), self.name)


def dataset_data_offset(path, name):
    """Where the (first chunk of) data of dataset ``name`` lies in the HDF5 file at ``path``."""
    with h5py.File(path, "r") as f:
        dsid = f[name].id
        if f[name].chunks is not None:
            return dsid.get_chunk_info(0).byte_offset
        return dsid.get_offset()


@needs_h5py
def test_hdf5_datasets_carry_checksums(tmp_path):
    path = tmp_path / "model.h5"
    save_hdf5(path, {"W": numpy.ones((3, 2)), "one": numpy.ones(1), "t": 3, "s": "abc"})
    with h5py.File(path, "r") as f:
        assert f["W"].fletcher32 and f["one"].fletcher32
        assert f["one"].compression is None
        # A scalar dataset cannot be chunked, so HDF5 cannot filter it: the digest covers it.
        assert not f["t"].fletcher32 and not f["s"].fletcher32
        for name in ("W", "one", "t", "s"):
            assert set(f[name].attrs) == {"dbr_crc32"}


@needs_h5py
@pytest.mark.parametrize("name", ["t", "scale", "one"])
def test_hdf5_flipped_byte_in_a_small_dataset_is_refused(tmp_path, name):
    # One flipped byte once loaded Adam's t as 210 instead of 3, silently.
    path = tmp_path / "model.h5"
    save_hdf5(path, Counter(t=3, scale=0.5, one=numpy.full(1, 2.0)))
    flip_bytes(path, dataset_data_offset(path, name), count=1)
    target = Counter()
    before = target.state()
    with pytest.raises(DeserializationError) as info:
        load_hdf5(path, target)
    message = str(info.value)
    assert str(path) in message and f"'{name}'" in message
    assert "checksum" in message or "digest" in message
    assert [key for key, _ in info.value.unreadable] == [name]
    assert target.state()[:2] == before[:2] and target.name == before[3]
    numpy.testing.assert_array_equal(target.one, before[2])


@needs_h5py
def test_hdf5_damaged_dtype_of_a_chunked_dataset_is_refused(tmp_path):
    # fletcher32 covers the chunks' bytes, not the datatype HDF5 reads them as: one
    # flipped bit there turned Adam's float32 state into uint32 values, silently.
    path = tmp_path / "model.h5"
    save_hdf5(path, Holder(1))
    with h5py.File(path, "a") as f:
        digest = f["last"].attrs["dbr_crc32"]
        same_bytes = f["last"][()].view(numpy.int64)
        del f["last"]
        f.create_dataset("last", data=same_bytes, compression=4, fletcher32=True)
        f["last"].attrs["dbr_crc32"] = digest
    target = Holder(2)
    error = refused_load(load_hdf5, path, target)
    assert "'last'" in str(error) and "checksum" in str(error)
    assert [key for key, _ in error.unreadable] == ["last"]


@needs_h5py
def test_hdf5_flipped_byte_in_a_stored_string_is_refused(tmp_path):
    path = tmp_path / "model.h5"
    save_hdf5(path, Counter(t=3, scale=0.5))
    data = bytearray(path.read_bytes())
    at = data.index(b"abc")
    data[at] = ord("x")
    path.write_bytes(bytes(data))
    target = Counter()
    with pytest.raises(DeserializationError, match="'name'"):
        load_hdf5(path, target)
    assert target.name == "abc" and target.t == 0


@needs_h5py
def test_hdf5_file_without_checksums_loads(tmp_path):
    # Chainer's save_hdf5 writes neither fletcher32 nor digests.
    path = tmp_path / "chainer.h5"
    with h5py.File(path, "w") as f:
        f["t"] = 3
        f["scale"] = 0.5
        f["one"] = numpy.full(1, 2.0)
        f.create_dataset("name", data="xyz", dtype=h5py.string_dtype())
    target = Counter()
    load_hdf5(path, target)
    assert (target.t, target.scale, target.one[0], target.name) == (3, 0.5, 2.0, "xyz")


# -- damaged HDF5 structure: a DeserializationError, never a bare h5py error --


@needs_h5py
@pytest.mark.parametrize("signature", [b"SNOD", b"TREE", b"HEAP"])
def test_hdf5_damaged_group_structure_names_the_file(tmp_path, signature):
    path = tmp_path / "model.h5"
    save_hdf5(path, Holder(1))
    data = bytearray(path.read_bytes())
    at = data.index(signature)
    data[at : at + 4] = b"XXXX"
    path.write_bytes(bytes(data))
    target = Holder(2)
    error = refused_load(load_hdf5, path, target)
    assert "load_hdf5" in str(error)
    assert error.unreadable


# -- npz member names that are not what they seem; HDF5 links to other files ---


def patch_member_name(path, placeholder, name):
    """Replace the member name ``placeholder`` by ``name`` (same length) in both zip headers."""
    assert len(placeholder) == len(name)
    data = path.read_bytes()
    assert data.count(placeholder) == 2
    path.write_bytes(data.replace(placeholder, name))


def duplicate_npz(path, names):
    """A stored NPZ: member ``names[i]`` holds Holder's ``first`` filled with ``i``."""
    with zipfile.ZipFile(path, "w") as archive:
        for i, name in enumerate(names):
            with archive.open(name, "w") as member:
                npy_format.write_array(member, numpy.full(N, float(i)))
        for key, value in (("t", numpy.asarray(7)), ("last", numpy.zeros(N))):
            with archive.open(key + ".npy", "w") as member:
                npy_format.write_array(member, value)


def test_npz_duplicate_member_names_are_refused(tmp_path):
    path = tmp_path / "dup.npz"
    with pytest.warns(UserWarning, match="Duplicate name"):
        duplicate_npz(path, ["first.npy", "first.npy"])
    error = refused_load(load_npz, path, Holder(2))
    message = str(error)
    assert "'first.npy'" in message and "2 members" in message


def test_npz_members_naming_one_key_two_ways_are_refused(tmp_path):
    path = tmp_path / "dup.npz"
    duplicate_npz(path, ["first.npy", "first"])
    error = refused_load(load_npz, path, Holder(2))
    message = str(error)
    assert "'first.npy'" in message and "'first'" in message


def test_npz_nul_making_a_duplicate_name_is_refused(tmp_path):
    path = tmp_path / "nul.npz"
    duplicate_npz(path, ["first.npy", "first.npyXevil"])
    patch_member_name(path, b"first.npyXevil", b"first.npy\0evil")
    error = refused_load(load_npz, path, Holder(2))
    assert "'first.npy\\x00evil'" in str(error)


def test_npz_nul_in_a_member_name_is_refused(tmp_path):
    path = tmp_path / "nul.npz"
    duplicate_npz(path, ["first.npyXevil"])
    patch_member_name(path, b"first.npyXevil", b"first.npy\0evil")
    error = refused_load(load_npz, path, Holder(2))
    assert "'first.npy\\x00evil'" in str(error) and "NUL" in str(error)


def external_link_file(path, other, link):
    """An HDF5 file for Holder whose ``last`` is reached through ``link`` into file ``other``."""
    with h5py.File(other, "w") as f:
        f["last"] = numpy.full(N, 5.0)
        f["group/last"] = numpy.full(N, 5.0)
    source = Holder(1)
    with h5py.File(path, "w") as f:
        f["first"] = source.first
        f["t"] = source.t
        if link == "dataset":
            f["last"] = h5py.ExternalLink(str(other), "/last")
        else:
            f["sub"] = h5py.ExternalLink(str(other), "/group")
            f["last"] = h5py.SoftLink("/sub/last")


@needs_h5py
@pytest.mark.parametrize("link", ["dataset", "soft-link-through-group"])
def test_hdf5_external_link_is_refused(tmp_path, link):
    path, other = tmp_path / "model.h5", tmp_path / "other.h5"
    external_link_file(path, other, link)
    error = refused_load(load_hdf5, path, Holder(2))
    message = str(error)
    assert "'last'" in message and "external link" in message and str(other) in message
