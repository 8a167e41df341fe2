import itertools

import numpy
import pytest

from dbr.datasets import TabularDataset, tabular


class Table(TabularDataset):
    """Columns ``keys`` of ``n`` rows: column ``k`` holds ``100 * k + row``; logs each read."""

    def __init__(self, n=6, keys=("a", "b", "c"), mode=tuple, arrays=False):
        self._n, self._keys, self._mode, self._arrays = n, keys, mode, arrays
        self.data = numpy.arange(len(keys))[:, None] * 100 + numpy.arange(n)
        self.reads = []

    def __len__(self):
        return self._n

    @property
    def keys(self):
        return self._keys

    @property
    def mode(self):
        return self._mode

    def get_examples(self, indices, key_indices):
        self.reads.append((indices, key_indices))
        data = self.data
        if indices is not None:
            data = data[:, indices]
        if key_indices is not None:
            data = data[list(key_indices)]
        return tuple(data) if self._arrays else tuple(list(column) for column in data)


def test_fetch_and_examples_follow_the_mode():
    assert Table(3).fetch() == ([0, 1, 2], [100, 101, 102], [200, 201, 202])
    assert Table(2, mode=dict).fetch() == {"a": [0, 1], "b": [100, 101], "c": [200, 201]}
    assert Table(2, keys=("a",), mode=None).fetch() == [0, 1]
    table = Table(4)
    assert table[1] == (1, 101, 201) and table[-1] == (3, 103, 203)
    assert table.reads[-1] == ([3], None)  # get_example reads one row
    assert Table(2, mode=dict)[1] == {"a": 1, "b": 101, "c": 201}
    assert list(Table(2, keys=("a",), mode=None)) == [0, 1]
    assert table[1:3] == [(1, 101, 201), (2, 102, 202)]
    with pytest.raises(IndexError):
        table[4]


def test_a_bad_mode_is_named():
    with pytest.raises(ValueError, match="mode must be tuple, dict or None, got <class 'list'>"):
        Table(mode=list).fetch()


def test_subclasses_must_implement_the_table():
    empty = TabularDataset()
    for read in (len, lambda d: d.keys, lambda d: d.mode, lambda d: d.get_examples(None, None)):
        with pytest.raises(NotImplementedError, match="TabularDataset must implement"):
            read(empty)


def test_convert_makes_arrays_of_columns():
    converted = Table(3).convert(Table(3).fetch())
    assert all(type(column) is numpy.ndarray for column in converted)
    numpy.testing.assert_array_equal(converted[1], [100, 101, 102])
    arrays = Table(3, arrays=True).fetch()
    assert Table(3).convert(arrays)[0] is arrays[0]  # an array is kept as it is
    assert Table().convert({"x": [1.5]})["x"].dtype == numpy.float64
    assert Table().convert([]).shape == (0,)


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        (slice(None), [0, 1, 2, 3, 4, 5]),
        (slice(4, None, -2), [4, 2, 0]),
        ([3, -1, numpy.int32(0)], [3, 5, 0]),
        (numpy.array([2, 2]), [2, 2]),
        ([False, True, False, True, False, False], [1, 3]),
        (numpy.arange(6) > 3, [4, 5]),
        ([False, 3, True], [0, 3, 1]),  # not all bools: ints
        ([], []),
    ],
)
def test_slice_rows(rows, expected):
    table = Table()
    view = table.slice[rows]
    assert isinstance(view, TabularDataset) and len(view) == len(expected)
    assert (view.keys, view.mode) == (table.keys, tuple)
    assert view.fetch()[0] == expected


@pytest.mark.parametrize(
    ("keys", "expected_keys", "mode"),
    [
        (("c", 0), ("c", "a"), tuple),
        ((-1,), ("c",), tuple),
        ((), (), tuple),
        ("b", ("b",), None),
        (1, ("b",), None),
    ],
)
def test_slice_keys(keys, expected_keys, mode):
    table = Table(3)
    view = table.slice[[2, 0], keys]
    assert (view.keys, view.mode) == (expected_keys, mode)
    expected = tuple([100 * "abc".index(key) + 2, 100 * "abc".index(key)] for key in expected_keys)
    assert view.get_examples(None, None) == expected
    assert table.reads[-1] == ([2, 0], tuple("abc".index(key) for key in expected_keys))


def test_slice_keys_of_a_dict_dataset_stay_a_dict():
    view = Table(2, mode=dict).slice[:, ("b",)]
    assert view.mode is dict and view[1] == {"b": 101}
    assert Table(2, keys=("a",), mode=None).slice[:, ("a",)].mode is tuple


@pytest.mark.parametrize(
    ("rows", "keys", "error", "message"),
    [
        ([6], None, IndexError, "row 6 is out of range for a dataset of length 6"),
        ([-7], None, IndexError, "row -7 is out of range"),
        ([True] * 5, None, ValueError, "one entry per row, 6, got 5"),
        ([1.5], None, TypeError, "rows must be ints or bools, got 1.5"),
        (3, None, TypeError, "rows must be a slice, or a list"),
        (slice(None), 3, IndexError, "key position 3 is out of range for the 3 keys"),
        (slice(None), ("d",), KeyError, "no key 'd' among"),
    ],
)
def test_slice_errors(rows, keys, error, message):
    with pytest.raises(error, match=message):
        Table().slice[rows, keys] if keys is not None else Table().slice[rows]


def test_slice_needs_one_or_two_indices():
    with pytest.raises(IndexError, match=r"expected slice\[rows\] or slice\[rows, keys\]"):
        Table().slice[1, 2, 3]


def test_views_of_views_read_only_what_is_asked():
    table = Table(10)
    view = table.slice[::-2, ("c", "a")].slice[[1, 2], 1]
    assert view.fetch() == [7, 5]
    assert table.reads == [([7, 5], (0,))]
    table.reads.clear()
    assert table.slice[2:9].slice[::3].fetch()[0] == [2, 5, 8]
    assert table.reads == [(slice(2, 9, 3), None)]  # two slices make one


def test_slices_of_slices_match_numpy():
    rng = numpy.random.default_rng(0)
    bounds = [None, 0, 1, 3, 7, -1, -4, 12]
    steps = [None, 1, 2, 3, -1, -2, -5]

    def random_slice():
        return slice(rng.choice(bounds), rng.choice(bounds), rng.choice(steps))

    table = Table(9, arrays=True)
    for _ in range(300):
        outer, inner = random_slice(), random_slice()
        got = table.slice[outer].slice[inner].fetch()[0]
        numpy.testing.assert_array_equal(got, table.data[0][outer][inner])


def test_astuple_and_asdict():
    table = Table(2, keys=("a",), mode=None)
    assert table.astuple()[1] == (1,) and table.astuple().mode is tuple
    assert table.asdict().fetch() == {"a": [0, 1]}
    assert Table(2).asdict().keys == ("a", "b", "c")


def test_concat_stacks_rows_asking_each_dataset_for_its_own():
    first, second = Table(10), Table(5)
    second.data += 10
    view = first.concat(second)
    assert (len(view), view.keys, view.mode) == (15, first.keys, tuple)
    assert view.get_examples([3, 12, 1, 14], (1,)) == ([103, 112, 101, 114],)
    assert first.reads[-1] == ([3, 1], (1,)) and second.reads[-1] == ([2, 4], (1,))
    assert view.get_examples(slice(13, 6, -2), None)[0] == [13, 11, 9, 7]
    assert first.reads[-1] == (slice(9, 6, -2), None)
    assert second.reads[-1] == (slice(3, None, -2), None)
    assert view.get_examples(slice(12, 6, -2), None)[0] == [12, 10, 8]
    assert first.reads[-1] == (slice(8, 6, -2), None)
    assert view.fetch()[0] == list(range(15))


def test_concat_matches_numpy_for_any_slice():
    parts = [Table(4, arrays=True), Table(0, arrays=True), Table(3, arrays=True)]
    for k, part in enumerate(parts):
        part.data += 10 * k
    view = parts[0].concat(*parts[1:])
    expected = numpy.concatenate([part.data[0] for part in parts])
    choices = ([None, 0, 2, 5, -1], [None, 1, 4, -2], [1, 2, -1, -3])
    for start, stop, step in itertools.product(*choices):
        rows = slice(start, stop, step)
        got = view.get_examples(rows, (0,))[0]
        numpy.testing.assert_array_equal(numpy.asarray(got, dtype=int), expected[rows])


def test_concat_returns_a_single_datasets_block_as_it_is():
    first, second = Table(3, arrays=True), Table(3, arrays=True)
    assert type(first.concat(second).get_examples([0, 2], None)[0]) is numpy.ndarray
    assert type(first.concat(second).get_examples([0, 4], None)[0]) is list
    assert first.concat(second).get_examples([], None) == ([], [], [])


def test_concat_errors():
    with pytest.raises(ValueError, match=r"must have the keys \('a', 'b', 'c'\), got \('b', 'a'"):
        Table().concat(Table(keys=("b", "a", "c")))
    with pytest.raises(IndexError, match="row 12 is out of range for a dataset of length 12"):
        Table().concat(Table()).get_examples([12], None)


def test_join_puts_columns_side_by_side():
    left, right = Table(3, keys=("a",), mode=None), Table(3, keys=("d", "e"), mode=dict)
    view = left.join(right)
    assert (view.keys, view.mode) == (("a", "d", "e"), dict)
    assert view[2] == {"a": 2, "d": 2, "e": 102}
    assert view.get_examples([1], (2, 0, 2)) == ([101], [1], [101])
    assert left.reads[-1] == ([1], (0,)) and right.reads[-1] == ([1], (1,))
    right.reads.clear()
    view.get_examples(None, (0,))
    assert right.reads == []  # no column of it asked for
    assert left.join(Table(3, keys=("b",), mode=None)).mode is tuple


def test_join_errors():
    with pytest.raises(ValueError, match="every dataset must have 6 rows, got 5"):
        Table().join(Table(5, keys=("d",)))
    with pytest.raises(ValueError, match=r"unique among the datasets, got \['a'\]"):
        Table().join(Table(keys=("a", "d")))
    with pytest.raises(IndexError, match="key position 4 is out of range for 4 keys"):
        Table().join(Table(keys=("d",))).get_examples(None, (4,))


@pytest.mark.parametrize("batch", [False, True])
def test_transform_calls_with_the_mode_of_the_dataset(batch):
    def total(a, b, c):
        return {"sum": a + b + c, "a": a}

    view = (Table(3, mode=dict, arrays=True).transform_batch if batch else Table(3).transform)(
        ("sum", "a"), total
    )
    assert (view.keys, view.mode) == (("sum", "a"), dict)
    assert list(view.get_examples([2, 0], None)[0]) == [306, 300]
    assert view[1] == {"sum": 303, "a": 1}
    unary = Table(3, keys=("a",), mode=None).transform("twice", lambda a: 2 * a)
    assert (unary.keys, unary.mode, unary.fetch()) == (("twice",), None, [0, 2, 4])


def test_transform_learns_its_mode_at_the_first_read():
    calls = []

    def pair(a, b, c):
        calls.append(a)
        return a, -a

    view = Table(3).transform(("x", "y"), pair)
    assert view.mode is tuple and calls == [0]
    assert view.get_examples(slice(1, None), (1,)) == ([-1, -2],)


def test_transform_must_keep_its_return_type_and_width():
    answers = iter([(1,), 1])
    view = Table().transform("x", lambda a, b, c: next(answers))
    view.get_examples([0], None)
    with pytest.raises(ValueError, match="must not change its return type; it gave tuple"):
        view.get_examples([0], None)
    with pytest.raises(ValueError, match=r"must return 2 columns, one per key of \('x', 'y'\)"):
        Table().transform(("x", "y"), lambda a, b, c: (a, b, c)).fetch()
    with pytest.raises(KeyError, match=r"without the keys \['y'\]"):
        Table().transform(("x", "y"), lambda a, b, c: {"x": a}).fetch()
    with pytest.raises(TypeError, match="transform: the function must be callable, got int"):
        Table().transform("x", 3)


def test_transform_batch_must_keep_the_number_of_rows():
    view = Table(4).transform_batch("x", lambda a, b, c: a[:2])
    with pytest.raises(ValueError, match=r"rows, 3; it returned columns of lengths \[2\]"):
        view.get_examples(slice(1, None), None)


def test_with_converter_replaces_convert():
    table = Table(2, mode=dict).with_converter(lambda a, b, c: (a, c))
    assert table.convert(table.fetch()) == ([0, 1], [200, 201])
    unary = Table(2, keys=("a",), mode=None).with_converter(len)
    assert unary.convert(unary.fetch()) == 2
    assert Table().with_converter(len).concat(Table()).convert([1, 2, 3]) == 3  # the first's
    with pytest.raises(TypeError, match="converter must be callable, got str"):
        Table().with_converter("no")


def test_from_data():
    array, values = numpy.arange(5), [4, 3, 2, 1, 0]
    single = tabular.from_data(array)
    assert single.mode is None and single.slice[[1, 3]].fetch().tolist() == [1, 3]
    twice = tabular.from_data((array, array))  # unnamed columns get unique keys
    assert len(set(twice.keys)) == 2 and single.keys[0] not in twice.keys
    pair = tabular.from_data((("x", array), values))
    assert pair.mode is tuple and pair.keys[0] == "x" and pair[1] == (1, 3)
    table = tabular.from_data({"x": values, ("y", "z"): lambda i: (i, -i)})
    assert table.mode is dict and table[4] == {"x": 0, "y": 4, "z": -4}
    assert tabular.from_data(("s", lambda i: i * i), size=4).fetch() == [0, 1, 4, 9]
    pq = tabular.from_data((("p", "q"), lambda i: {"p": i, "q": 0}), size=2)
    assert pq[1] == {"p": 1, "q": 0}


def test_from_data_errors():
    with pytest.raises(ValueError, match="a function needs its key"):
        tabular.from_data(lambda i: i, size=3)
    with pytest.raises(ValueError, match="size must be given"):
        tabular.from_data({"a": lambda i: i})
    with pytest.raises(TypeError, match="must be a list, an array or a function, got set"):
        tabular.from_data({1, 2})


def test_delegate_dataset_reads_its_dataset():
    class Named(tabular.DelegateDataset):
        def __init__(self):
            super().__init__(tabular.from_data((("i", [5, 6]), ("name", self.name))))

        def name(self, i):
            return f"row {i}"

    dataset = Named()
    assert (len(dataset), dataset.keys, dataset.mode) == (2, ("i", "name"), tuple)
    assert dataset[1] == (6, "row 1")
    assert dataset.slice[:, "name"].fetch() == ["row 0", "row 1"]
