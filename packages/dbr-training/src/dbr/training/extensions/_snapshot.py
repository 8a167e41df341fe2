"""snapshot and snapshot_object: saving the trainer (or any object) during training."""

import contextlib
import os
import re
import string
import warnings

from dbr.core.serializers import DeserializationError, DictionarySerializer, load_npz, save_npz
from dbr.training.extension import Extension
from dbr.training.extensions import snapshot_writers

_SNAPSHOT_PRIORITY = -100


def _template_pattern(template):
    """A regex matching the file names that ``template.format(...)`` can produce."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if field is not None:
            parts.append(".+")
    return re.compile("".join(parts), re.DOTALL)


def _natural_key(name):
    return [(0, int(s), "") if s.isdigit() else (1, 0, s) for s in re.split(r"(\d+)", name)]


def _find_snapshot_files(template, outdir):
    """``(mtime, name)`` of each regular file in ``outdir`` matching ``template``, oldest first.

    Files are ordered by modification time; snapshots written within the
    file system's timestamp resolution are ordered by name, numbers compared
    numerically (``snapshot_iter_9`` before ``snapshot_iter_10``). A name
    matches when ``template.format(...)`` could have produced it (each
    replacement field matches any non-empty text). Temporary directories of
    unfinished writes are not regular files and never match; a missing
    ``outdir`` has no snapshots.
    """
    if not os.path.isdir(outdir):
        return []
    pattern = _template_pattern(template)
    found = []
    with os.scandir(outdir) as entries:
        for entry in entries:
            if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                stat = entry.stat(follow_symlinks=False)
                found.append(
                    (stat.st_mtime_ns, _natural_key(entry.name), stat.st_mtime, entry.name)
                )
    return [(mtime, name) for _, _, mtime, name in sorted(found)]


def _snapshot_files(template, outdir):
    """The names of :func:`_find_snapshot_files`, oldest first."""
    return [name for _, name in _find_snapshot_files(template, outdir)]


def _find_latest_snapshot(template, outdir):
    """The name of the newest snapshot in ``outdir`` matching ``template``, or None."""
    names = _snapshot_files(template, outdir)
    return names[-1] if names else None


def _find_stale_snapshots(template, outdir, n_retains):
    """Yield the names of the snapshots in ``outdir`` older than the ``n_retains`` newest.

    Oldest first; nothing when ``n_retains`` is not positive (no cleanup).
    """
    if n_retains <= 0:
        return
    yield from _snapshot_files(template, outdir)[:-n_retains]


def _load_snapshot(path, target):
    """Load ``path`` into ``target``: None if loaded, the DeserializationError if it is damaged.

    A file that does not match the target raises: an older snapshot of the
    same run would not match either.
    """
    try:
        load_npz(path, target)
    except DeserializationError as e:
        if not e.unreadable:
            raise
        return e
    return None


def _autoload(template, outdir, target):
    """Load the newest complete snapshot; warn naming each damaged newer one it skipped."""
    damaged = []
    for name in reversed(_snapshot_files(template, outdir)):
        path = os.path.join(outdir, name)
        error = _load_snapshot(path, target)
        if error is None:
            if damaged:
                skipped = "; ".join(f"{p!r} ({_first_reason(e)})" for p, e in damaged)
                warnings.warn(
                    f"snapshot: the newest snapshot cannot be read (truncated or corrupt): "
                    f"{skipped}; loaded the previous complete snapshot {path!r} instead",
                    RuntimeWarning,
                    stacklevel=3,
                )
            return
        damaged.append((path, error))
    if damaged:
        lines = [
            f"snapshot: cannot load a snapshot from {outdir!r}: every snapshot is truncated "
            f"or corrupt; nothing was loaded."
        ]
        lines.extend(f"  {p!r}: {_first_reason(e)}" for p, e in damaged)
        raise DeserializationError(
            "\n".join(lines),
            file=damaged[0][0],
            unreadable=[item for _, e in damaged for item in e.unreadable],
        ) from damaged[0][1]


def _first_reason(error):
    key, reason = error.unreadable[0]
    return reason if key is None else f"{key!r}: {reason}"


def _always_true():
    return True


class _Snapshot(Extension):
    """Trainer extension saving a serialized object; made by :func:`snapshot`.

    See :func:`snapshot` for the arguments. Default trigger ``(1, 'epoch')``,
    priority -100 (after the other extensions of the same iteration, so that
    the snapshot holds their state, e.g. the LogReport's log).
    """

    trigger = 1, "epoch"
    priority = _SNAPSHOT_PRIORITY

    def __init__(
        self,
        target=None,
        condition=None,
        writer=None,
        filename="snapshot_iter_{.updater.iteration}",
        snapshot_on_error=False,
        n_retains=-1,
        autoload=False,
    ):
        who = "snapshot"
        if condition is None:
            condition = _always_true
        if not callable(condition):
            raise TypeError(
                f"{who}: condition must be a callable taking no arguments, got {condition!r}"
            )
        if writer is None:
            writer = snapshot_writers.SimpleWriter()
        if not callable(writer):
            raise TypeError(f"{who}: writer must be callable, got {writer!r}")
        if not (isinstance(filename, str) or callable(filename)):
            raise TypeError(
                f"{who}: filename must be a str template or a callable, got {filename!r} "
                f"({type(filename).__name__})"
            )
        if isinstance(n_retains, bool) or not isinstance(n_retains, int):
            raise TypeError(
                f"{who}: n_retains must be an int, got {n_retains!r} ({type(n_retains).__name__})"
            )
        if autoload and not isinstance(filename, str):
            raise ValueError(
                f"{who}: autoload needs filename to be a str template to find the "
                f"snapshots by, got {filename!r}"
            )
        if target is not None and not hasattr(target, "serialize"):
            raise TypeError(
                f"{who}: target must have a serialize(serializer) method, got "
                f"{type(target).__name__}"
            )
        self._target = target
        self.filename = filename
        self.condition = condition
        self.writer = writer
        self._snapshot_on_error = bool(snapshot_on_error)
        self.n_retains = n_retains
        self.autoload = bool(autoload)
        self._cleanup_registered = False

    def initialize(self, trainer):
        """Load the newest snapshot (``autoload``) and set up the ``n_retains`` cleanup.

        With ``autoload``, the newest regular file in ``trainer.out`` whose
        name matches the filename template is loaded into the target (the
        trainer by default) with :func:`dbr.core.serializers.load_npz`;
        nothing happens when there is none. If that file is damaged
        (truncated or corrupt), the newest complete one before it is loaded
        instead, with a RuntimeWarning naming both; if every one is damaged,
        a :class:`~dbr.core.serializers.DeserializationError` names them all.
        A load that fails leaves the target untouched.
        """
        target = trainer if self._target is None else self._target
        outdir = trainer.out
        if self.autoload:
            _autoload(self.filename, outdir, target)
        if (
            self.n_retains > 0
            and isinstance(self.filename, str)
            and hasattr(self.writer, "_add_cleanup_hook")
            and not self._cleanup_registered
        ):
            template, n_retains = self.filename, self.n_retains

            def cleanup():
                for name in list(_find_stale_snapshots(template, outdir, n_retains)):
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(os.path.join(outdir, name))

            self.writer._add_cleanup_hook(cleanup)
            self._cleanup_registered = True

    def on_error(self, trainer, exc, tb):
        """Take a snapshot when ``snapshot_on_error`` is set."""
        if self._snapshot_on_error:
            self._make_snapshot(trainer)

    def __call__(self, trainer):
        """Take a snapshot if ``condition()`` returns True."""
        if self.condition():
            self._make_snapshot(trainer)

    def _make_snapshot(self, trainer):
        target = trainer if self._target is None else self._target
        serializer = DictionarySerializer()
        serializer.save(target)
        filename = self.filename
        filename = filename(trainer) if callable(filename) else filename.format(trainer)
        self.writer(filename, trainer.out, serializer.target)

    def finalize(self):
        """Finalize the writer (waits for a save still running)."""
        finalize = getattr(self.writer, "finalize", None)
        if finalize is not None:
            finalize()


def snapshot(
    savefun=None,
    filename="snapshot_iter_{.updater.iteration}",
    *,
    target=None,
    condition=None,
    writer=None,
    snapshot_on_error=False,
    n_retains=-1,
    autoload=False,
):
    """Return a trainer extension that saves the trainer (or ``target``) as a snapshot.

    The target is serialized into a dictionary of arrays (a copy, taken when
    the extension runs) and saved by the writer as ``trainer.out/<name>``,
    where ``<name>`` is ``filename.format(trainer)``. Saving is atomic: the
    file appears complete under its name or not at all. Trigger ``(1,
    'epoch')`` and priority -100 by default. A trainer snapshot is loaded
    with ``load_npz(path, trainer)`` (or ``autoload=True``) to resume.

    Args:
        savefun (callable): ``savefun(path, target_dict)``; default
            :func:`dbr.core.serializers.save_npz`. Not together with
            ``writer``.
        filename (str or callable): file name template, formatted with the
            trainer (``'snapshot_iter_{.updater.iteration}'``), or a callable
            taking the trainer and returning the name.
        target: the object to save (with ``serialize``); the trainer if None.
        condition (callable): called without arguments at each trigger; the
            snapshot is taken only if it returns True. Always by default.
        writer (callable): a snapshot writer (see
            :mod:`dbr.training.extensions.snapshot_writers`); a
            :class:`SimpleWriter` with ``savefun`` by default.
        snapshot_on_error (bool): also take a snapshot when training raises.
        n_retains (int): if positive, keep only the ``n_retains`` newest files
            matching the template (str templates with a built-in writer).
        autoload (bool): in ``initialize``, load the newest snapshot matching
            the template from ``trainer.out`` into the target, if there is one
            (a damaged newest one is skipped, with a warning, for the newest
            complete one).

    Returns:
        the snapshot extension.

    Raises:
        TypeError: both ``savefun`` and ``writer`` given, or an argument of the
            wrong type.
    """
    if savefun is not None and writer is not None:
        raise TypeError("snapshot: savefun and writer cannot be given together")
    if writer is None:
        writer = snapshot_writers.SimpleWriter(savefun=save_npz if savefun is None else savefun)
    return _Snapshot(
        target=target,
        condition=condition,
        writer=writer,
        filename=filename,
        snapshot_on_error=snapshot_on_error,
        n_retains=n_retains,
        autoload=autoload,
    )


def snapshot_object(target, filename, savefun=None, **kwargs):
    """Return a trainer extension that saves ``target`` (e.g. a model) as a snapshot.

    Args:
        target: the object to save (it must have ``serialize``).
        filename (str or callable): file name template formatted with the
            trainer, e.g. ``'model_iter_{.updater.iteration}'``.
        savefun (callable): see :func:`snapshot`.
        kwargs: the keyword-only arguments of :func:`snapshot` (``condition``,
            ``writer``, ``snapshot_on_error``, ``n_retains``, ``autoload``).

    Returns:
        the snapshot extension.
    """
    if "target" in kwargs:
        raise TypeError("snapshot_object: target is given positionally; do not pass it again")
    unknown = set(kwargs) - {"condition", "writer", "snapshot_on_error", "n_retains", "autoload"}
    if unknown:
        raise TypeError(f"snapshot_object: unexpected keyword arguments {sorted(unknown)}")
    if target is None:
        raise TypeError("snapshot_object: target must be an object with serialize, got None")
    return snapshot(target=target, filename=filename, savefun=savefun, **kwargs)
