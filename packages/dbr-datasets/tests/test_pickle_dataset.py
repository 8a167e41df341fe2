import io
import multiprocessing
import os
import pickle
from pathlib import Path

import numpy
import pytest

from dbr.datasets.pickle_dataset import (
    PickleDataset,
    PickleDatasetWriter,
    _FileReader,
    open_pickle_dataset,
    open_pickle_dataset_writer,
)

EXAMPLES = [(1, 2.0, "hello"), {"x": [1, 2]}, None, "last"]


@pytest.fixture
def path(tmp_path):
    path = tmp_path / "data.pkl"
    with open_pickle_dataset_writer(str(path)) as writer:
        for example in EXAMPLES:
            writer.write(example)
    return str(path)


def test_round_trip(path):
    with open_pickle_dataset(path) as dataset:
        assert len(dataset) == 4
        assert [dataset[i] for i in range(4)] == EXAMPLES
        assert dataset[-1] == "last"
        assert dataset[[2, 0]] == [None, (1, 2.0, "hello")]
        assert dataset[1:3] == EXAMPLES[1:3]
        with pytest.raises(IndexError, match="PickleDataset: index 4"):
            dataset[4]


def test_numpy_arrays(tmp_path):
    path = tmp_path / "arrays.pkl"
    arrays = [numpy.arange(i, dtype=numpy.float32) for i in range(3)]
    with open_pickle_dataset_writer(path, protocol=2) as writer:
        for array in arrays:
            writer.write(array)
    with open_pickle_dataset(path) as dataset:
        for i, array in enumerate(arrays):
            numpy.testing.assert_array_equal(dataset[i], array)


def test_empty_dataset(tmp_path):
    path = tmp_path / "empty.pkl"
    open_pickle_dataset_writer(path).close()
    with open_pickle_dataset(path) as dataset:
        assert len(dataset) == 0
        assert dataset[:] == []


def test_in_memory_reader_and_writer():
    buffer = io.BytesIO()
    writer = PickleDatasetWriter(buffer)
    writer.write("a")
    writer.write("b")
    writer.flush()
    dataset = PickleDataset(io.BytesIO(buffer.getvalue()))
    assert dataset[:] == ["a", "b"]
    # A reader without a file name is pickled itself: a BytesIO with its contents.
    assert pickle.loads(pickle.dumps(dataset))[:] == ["a", "b"]


def test_unpicklable_unnamed_reader_is_an_error():
    class Unnamed(io.BytesIO):
        def __reduce__(self):
            raise TypeError("cannot pickle Unnamed")

    with pytest.raises(TypeError, match="cannot pickle Unnamed"):
        pickle.dumps(PickleDataset(Unnamed(pickle.dumps(1))))


def test_reader_after_fork_hook_runs_in_the_child():
    context = multiprocessing.get_context("fork")
    caller = context.Value("i", 0, lock=False)  # shared memory: the pid that called the hook

    class Reader(io.BytesIO):
        def after_fork(self):
            caller.value = os.getpid()

    dataset = PickleDataset(Reader(pickle.dumps("x")))
    child = context.Process()
    child.start()
    child.join(timeout=60)
    assert caller.value == child.pid
    assert dataset[0] == "x"


def test_file_reader_reopens_after_fork_and_pickles_by_path(path):
    reader = _FileReader(path)
    inherited = reader._file
    reader.after_fork()
    assert inherited.closed and not reader.closed
    clone = pickle.loads(pickle.dumps(reader))
    assert pickle.load(clone) == EXAMPLES[0] and clone._file is not reader._file
    reader.close()
    clone.close()


def test_writer_closes_its_file():
    buffer = io.BytesIO()
    with PickleDatasetWriter(buffer) as writer:
        writer.write(1)
    assert buffer.closed


def test_write_is_atomic(tmp_path, path):
    before = Path(path).read_bytes()
    writer = open_pickle_dataset_writer(path)
    writer.write("new")
    writer.flush()
    assert Path(path).read_bytes() == before
    writer.close()
    with open_pickle_dataset(path) as dataset:
        assert dataset[:] == ["new"]
    assert sorted(os.listdir(tmp_path)) == ["data.pkl"]


def test_exception_in_with_block_leaves_the_file_untouched(tmp_path, path):
    before = Path(path).read_bytes()
    with pytest.raises(RuntimeError), open_pickle_dataset_writer(path) as writer:
        writer.write("partial")
        raise RuntimeError("interrupted")
    assert Path(path).read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.pkl"]


def test_unseekable_reader():
    class Stream(io.RawIOBase):
        def seekable(self):
            return False

    with pytest.raises(ValueError, match="PickleDataset: reader must support random access"):
        PickleDataset(Stream())


def test_truncated_file_is_an_error(tmp_path, path):
    data = Path(path).read_bytes()
    broken = tmp_path / "broken.pkl"
    broken.write_bytes(data[:-3])
    with pytest.raises(pickle.UnpicklingError):
        open_pickle_dataset(broken)


def test_pickle_reopens_by_name(path):
    with open_pickle_dataset(path) as dataset:
        clone = pickle.loads(pickle.dumps(dataset))
        with clone:
            assert clone[:] == EXAMPLES


def test_forked_children_read_their_own_copy(tmp_path, forked_readers):
    path = tmp_path / "many.pkl"
    examples = [("example", i, "x" * (i % 7)) for i in range(200)]
    with open_pickle_dataset_writer(path) as writer:
        for example in examples:
            writer.write(example)
    with open_pickle_dataset(path) as dataset:
        forked_readers(dataset, examples)
