"""TextDataset: random access to the lines of one or more text files."""

import os
import threading
import weakref

from dbr.datasets.dataset_mixin import DatasetMixin


def _per_file(value, n, name):
    if value is None or isinstance(value, str):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise ValueError(
            f"TextDataset: {name} must be a str, None or one value per file ({n}), "
            f"got {len(value)} values"
        )
    return value


def _close_all(files):
    """Close every file, even when closing one fails; then raise the first failure."""
    failure = None
    for f in files:
        try:
            f.close()
        except Exception as e:
            failure = failure or e
    if failure is not None:
        raise failure


class TextDataset(DatasetMixin):
    """Dataset of the lines of text files, read on access.

    The constructor reads the files once to record where each line starts, so any
    line can then be read directly. Lines keep their line terminator, as
    :meth:`io.TextIOBase.readline` returns them. With one file (a path, or a list of one
    path) the ``i``-th example is its ``i``-th line; with several files, it is the tuple
    of the ``i``-th lines of all files, which must have the same number of lines. The
    files stay open until :meth:`close` or until the dataset is garbage collected. A
    pickled or forked dataset reopens the files in its own process and reuses the
    recorded line positions: the files must not change meanwhile.

    Args:
        paths (str or list of str): A path, or a list of paths; examples are of type
            ``str`` for one file, tuples of ``str`` for several.
        encoding (str or list of str): Encoding, as for :func:`open`; one per file or
            one for all.
        errors (str or list of str): Decoding error handling, as for :func:`open`.
        newline (str or list of str): Newline mode, as for :func:`open`.
        filter_func (callable): Called with one line per file (terminator included);
            lines for which it returns a false value are skipped.
    """

    def __init__(self, paths, encoding=None, errors=None, newline=None, filter_func=None):
        paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        if not paths:
            raise ValueError("TextDataset: paths must name at least one text file, got none")
        n = len(paths)
        self._paths = paths
        self._encoding = _per_file(encoding, n, "encoding")
        self._errors = _per_file(errors, n, "errors")
        self._newline = _per_file(newline, n, "newline")
        self._lock = threading.Lock()
        try:
            self._open()
            self._starts, self._lines = self._index_lines(filter_func)
        except BaseException:
            self.close()
            raise

    def _index_lines(self, filter_func):
        starts = [[] for _ in self._fps]
        lines = []
        number = 0
        while True:
            positions = [f.tell() for f in self._fps]
            texts = [f.readline() for f in self._fps]
            ended = [not text for text in texts]
            if any(ended):
                if not all(ended):
                    done = [str(p) for p, e in zip(self._paths, ended) if e]
                    raise ValueError(
                        f"TextDataset: the files must have the same number of lines, but "
                        f"{done} end after {number} lines while the others go on"
                    )
                break
            for start, position in zip(starts, positions):
                start.append(position)
            if filter_func is None or filter_func(*texts):
                lines.append(number)
            number += 1
        return starts, (range(number) if filter_func is None else lines)

    def _open(self):
        self._fps = []
        self._finalizer = weakref.finalize(self, _close_all, self._fps)
        for path, encoding, errors, newline in zip(
            self._paths, self._encoding, self._errors, self._newline
        ):
            self._fps.append(
                open(path, encoding=encoding, errors=errors, newline=newline)  # noqa: SIM115
            )
        self._pid = os.getpid()

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("_fps", "_finalizer", "_lock", "_pid"):
            del state[name]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()
        self._open()

    def close(self):
        """Close the files; the dataset can no longer be read afterwards.

        Every file is closed even when closing one of them fails; the first failure
        is raised afterwards.
        """
        self._finalizer()

    def __len__(self):
        """Return the number of (unfiltered) lines."""
        return len(self._lines)

    def get_example(self, i):
        """Return the ``i``-th line (the tuple of ``i``-th lines for several files)."""
        number = self._lines[i]
        with self._lock:
            if self._pid != os.getpid():
                # A forked child shares the parent's file offsets; reopen to seek safely.
                self._finalizer()
                self._open()
            texts = []
            for f, starts in zip(self._fps, self._starts):
                f.seek(starts[number])
                texts.append(f.readline())
        return texts[0] if len(texts) == 1 else tuple(texts)
