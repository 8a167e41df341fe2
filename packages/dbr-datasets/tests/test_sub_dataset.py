import numpy
import pytest

from dbr.datasets.sub_dataset import (
    SubDataset,
    get_cross_validation_datasets,
    get_cross_validation_datasets_random,
    split_dataset,
    split_dataset_n,
    split_dataset_n_random,
    split_dataset_random,
)

BASE = [10, 11, 12, 13, 14]


def as_list(dataset):
    return [dataset[i] for i in range(len(dataset))]


class TestSubDataset:
    def test_interval(self):
        subset = SubDataset(BASE, 1, 4)
        assert len(subset) == 3
        assert as_list(subset) == [11, 12, 13]

    def test_negative_index_counts_from_finish(self):
        subset = SubDataset(BASE, 1, 4)
        assert subset[-1] == 13
        assert subset[-3] == 11
        assert subset.get_example(-1) == 13

    @pytest.mark.parametrize("index", [3, -4])
    def test_out_of_range(self, index):
        subset = SubDataset(BASE, 1, 4)
        with pytest.raises(IndexError):
            subset[index]
        with pytest.raises(IndexError, match="SubDataset: index"):
            subset.get_example(index)

    def test_order(self):
        subset = SubDataset(BASE, 1, 4, order=[4, 3, 2, 1, 0])
        assert as_list(subset) == [13, 12, 11]
        assert subset[-1] == 11

    def test_slices_and_lists(self):
        subset = SubDataset(BASE, 1, 5, order=numpy.array([4, 3, 2, 1, 0]))
        assert subset[::2] == [13, 11]
        assert subset[[0, -1]] == [13, 10]

    def test_empty_interval(self):
        subset = SubDataset(BASE, 2, 2)
        assert len(subset) == 0
        assert subset[:] == []
        with pytest.raises(IndexError):
            subset[0]

    @pytest.mark.parametrize("start, finish", [(-1, 3), (0, 6), (3, 2)])
    def test_overrun(self, start, finish):
        with pytest.raises(ValueError, match=r"SubDataset: expected 0 <= start <= finish"):
            SubDataset(BASE, start, finish)

    def test_order_length_mismatch(self):
        with pytest.raises(
            ValueError, match=r"length of the base dataset \(5\), got len\(order\) = 3"
        ):
            SubDataset(BASE, 0, 2, order=[0, 1, 2])

    def test_non_int_bounds(self):
        with pytest.raises(TypeError, match="start must be an int, got float"):
            SubDataset(BASE, 0.5, 2)


class TestSplitDataset:
    def test_split(self):
        first, second = split_dataset(BASE, 2)
        assert as_list(first) == [10, 11]
        assert as_list(second) == [12, 13, 14]

    def test_split_with_order(self):
        first, second = split_dataset(BASE, 3, order=[1, 3, 0, 4, 2])
        assert as_list(first) == [11, 13, 10]
        assert as_list(second) == [14, 12]

    @pytest.mark.parametrize("split_at", [0, 5])
    def test_split_at_the_ends(self, split_at):
        first, second = split_dataset(BASE, split_at)
        assert len(first) == split_at
        assert len(second) == 5 - split_at

    def test_empty_dataset(self):
        first, second = split_dataset([], 0)
        assert len(first) == len(second) == 0

    def test_numpy_integer_split_at(self):
        first, _ = split_dataset(BASE, numpy.int64(1))
        assert len(first) == 1

    def test_errors(self):
        with pytest.raises(ValueError, match="split_at must be non-negative, got -1"):
            split_dataset(BASE, -1)
        with pytest.raises(ValueError, match=r"split_at \(6\) exceeds the dataset size \(5\)"):
            split_dataset(BASE, 6)
        with pytest.raises(TypeError, match="split_at must be an int, got float"):
            split_dataset(BASE, 2.0)

    def test_random_split_is_a_partition_and_seeded(self):
        base = list(range(20))
        first, second = split_dataset_random(base, 7, seed=3)
        assert len(first) == 7
        assert len(second) == 13
        assert sorted(as_list(first) + as_list(second)) == base
        again, _ = split_dataset_random(base, 7, seed=3)
        assert as_list(again) == as_list(first)
        order = numpy.random.RandomState(3).permutation(20)
        assert as_list(first) == list(order[:7])


class TestSplitDatasetN:
    def test_equal_parts_and_remainder_dropped(self):
        parts = split_dataset_n(list(range(7)), 3)
        assert [as_list(p) for p in parts] == [[0, 1], [2, 3], [4, 5]]

    def test_order(self):
        parts = split_dataset_n(list(range(4)), 2, order=[3, 2, 1, 0])
        assert [as_list(p) for p in parts] == [[3, 2], [1, 0]]

    def test_more_parts_than_examples(self):
        parts = split_dataset_n([1, 2], 3)
        assert [len(p) for p in parts] == [0, 0, 0]

    def test_random_parts_are_disjoint_and_seeded(self):
        base = list(range(10))
        parts = split_dataset_n_random(base, 3, seed=0)
        flat = [x for p in parts for x in as_list(p)]
        assert [len(p) for p in parts] == [3, 3, 3]
        assert len(set(flat)) == 9
        again = split_dataset_n_random(base, 3, seed=0)
        assert [as_list(p) for p in again] == [as_list(p) for p in parts]

    @pytest.mark.parametrize("function", [split_dataset_n, split_dataset_n_random])
    def test_n_must_be_positive(self, function):
        with pytest.raises(ValueError, match=f"{function.__name__}: n must be positive, got 0"):
            function(BASE, 0)


class TestCrossValidation:
    @pytest.mark.parametrize("n, n_folds", [(10, 3), (7, 7), (9, 2), (3, 5), (0, 2)])
    def test_folds_partition_the_dataset(self, n, n_folds):
        base = list(range(n))
        splits = get_cross_validation_datasets(base, n_folds)
        assert len(splits) == n_folds
        tests = [as_list(test) for _, test in splits]
        assert sorted(x for t in tests for x in t) == base
        sizes = [len(t) for t in tests]
        assert max(sizes) - min(sizes) <= 1
        for train, test in splits:
            assert sorted(as_list(train) + as_list(test)) == base

    def test_fold_contents_follow_order(self):
        splits = get_cross_validation_datasets(list(range(5)), 2, order=[4, 3, 2, 1, 0])
        # Folds are cut from the end of the order, the larger fold first.
        assert [as_list(test) for _, test in splits] == [[2, 1, 0], [4, 3]]
        assert [as_list(train) for train, _ in splits] == [[4, 3], [2, 1, 0]]

    def test_order_is_copied(self):
        order = [0, 1, 2, 3]
        get_cross_validation_datasets(list(range(4)), 2, order=order)
        assert order == [0, 1, 2, 3]

    def test_random_is_seeded(self):
        base = list(range(11))
        a = get_cross_validation_datasets_random(base, 4, seed=5)
        b = get_cross_validation_datasets_random(base, 4, seed=5)
        assert [as_list(t) for _, t in a] == [as_list(t) for _, t in b]
        assert sorted(x for _, t in a for x in as_list(t)) == base

    def test_deprecated_n_fold(self):
        with pytest.warns(DeprecationWarning, match="n_fold is deprecated"):
            splits = get_cross_validation_datasets(list(range(4)), n_fold=2)
        assert len(splits) == 2

    def test_argument_errors(self):
        with pytest.raises(TypeError, match="missing required argument n_folds"):
            get_cross_validation_datasets(BASE)
        with pytest.raises(TypeError, match="not both"):
            get_cross_validation_datasets(BASE, 2, n_fold=2)
        with pytest.raises(TypeError, match=r"unexpected keyword arguments \['folds'\]"):
            get_cross_validation_datasets(BASE, 2, folds=2)
        with pytest.raises(ValueError, match="n_folds must be positive, got 0"):
            get_cross_validation_datasets(BASE, 0)
        with pytest.raises(ValueError, match=r"got len\(order\) = 2"):
            get_cross_validation_datasets(BASE, 2, order=[0, 1])
