import pickle

import pytest

from dbr.datasets.text_dataset import TextDataset


@pytest.fixture
def text_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("first\n\nthird line\nlast without newline", encoding="utf-8")
    return str(path)


@pytest.fixture
def dataset(text_file):
    dataset = TextDataset(text_file)
    yield dataset
    dataset.close()


def test_lines_keep_their_terminator(dataset):
    assert len(dataset) == 4
    assert dataset[0] == "first\n"
    assert dataset[1] == "\n"
    assert dataset[2] == "third line\n"
    assert dataset[3] == "last without newline"


def test_random_access_in_any_order(dataset):
    assert dataset[[3, 0, 2, 0]] == ["last without newline", "first\n", "third line\n", "first\n"]
    assert dataset[-1] == "last without newline"
    assert dataset[1:3] == ["\n", "third line\n"]


@pytest.mark.parametrize("index", [4, -5])
def test_out_of_range(dataset, index):
    with pytest.raises(IndexError, match="TextDataset: index"):
        dataset[index]


def test_empty_file(tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("")
    dataset = TextDataset(str(path))
    try:
        assert len(dataset) == 0
        assert dataset[:] == []
        with pytest.raises(IndexError):
            dataset[0]
    finally:
        dataset.close()


def test_several_files_give_tuples(tmp_path):
    (tmp_path / "en.txt").write_text("one\ntwo\nthree\n")
    (tmp_path / "fr.txt").write_text("un\ndeux\ntrois\n")
    dataset = TextDataset([str(tmp_path / "en.txt"), str(tmp_path / "fr.txt")])
    try:
        assert len(dataset) == 3
        assert dataset[1] == ("two\n", "deux\n")
        assert dataset[-1] == ("three\n", "trois\n")
    finally:
        dataset.close()


def test_a_list_of_one_path_gives_strings(text_file):
    # As Chainer: one file gives bare lines, however its path is given.
    dataset = TextDataset([text_file])
    try:
        assert dataset[0] == "first\n"
        assert dataset[[3, 0]] == ["last without newline", "first\n"]
    finally:
        dataset.close()


def test_close_closes_every_file_when_one_fails(text_file):
    dataset = TextDataset([text_file, text_file, text_file])
    first, middle, last = dataset._fps
    dataset._fps[1] = None  # closing it fails
    with pytest.raises(AttributeError):
        dataset.close()
    assert first.closed and last.closed
    middle.close()


def test_filter_func_receives_one_line_per_file(tmp_path):
    (tmp_path / "a.txt").write_text("keep\ndrop\nkeep too\n")
    (tmp_path / "b.txt").write_text("1\n2\n3\n")
    seen = []

    def keep(a, b):
        seen.append((a, b))
        return a.startswith("keep")

    dataset = TextDataset([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], filter_func=keep)
    try:
        assert seen == [("keep\n", "1\n"), ("drop\n", "2\n"), ("keep too\n", "3\n")]
        assert len(dataset) == 2
        assert dataset[1] == ("keep too\n", "3\n")
    finally:
        dataset.close()


def test_mismatched_line_counts(tmp_path):
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    (tmp_path / "b.txt").write_text("1\n2\n")
    with pytest.raises(ValueError, match=r"same number of lines, but \[.*b.txt'\] end after 2"):
        TextDataset([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")])


def test_encoding_errors_newline_per_file(tmp_path):
    (tmp_path / "latin.txt").write_bytes("caf\xe9\r\nna\xefve\r\n".encode("latin-1"))
    (tmp_path / "utf.txt").write_bytes("café\r\nnaïve\r\n".encode())
    dataset = TextDataset(
        [str(tmp_path / "latin.txt"), str(tmp_path / "utf.txt")],
        encoding=["latin-1", "utf-8"],
        newline=["", None],
    )
    try:
        assert dataset[1] == ("na\xefve\r\n", "naïve\n")
    finally:
        dataset.close()
    bad = TextDataset(str(tmp_path / "latin.txt"), encoding="utf-8", errors="replace")
    try:
        assert bad[0] == "caf\ufffd\n"
    finally:
        bad.close()


def test_option_lengths_must_match(tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ValueError, match=r"encoding must be .* one value per file \(1\), got 2"):
        TextDataset([str(tmp_path / "a.txt")], encoding=["utf-8", "utf-8"])


def test_no_paths():
    with pytest.raises(ValueError, match="at least one text file"):
        TextDataset([])


def test_pickle_reuses_positions(dataset):
    clone = pickle.loads(pickle.dumps(dataset))
    try:
        assert clone[:] == dataset[:]
    finally:
        clone.close()


def test_forked_children_read_their_own_copy(tmp_path, forked_readers):
    lines = [f"line {i}\n" for i in range(200)]
    path = tmp_path / "many.txt"
    path.write_text("".join(lines))
    dataset = TextDataset(str(path))
    try:
        forked_readers(dataset, lines)
    finally:
        dataset.close()
