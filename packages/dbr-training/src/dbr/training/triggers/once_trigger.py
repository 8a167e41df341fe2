"""OnceTrigger: fire once, at the first call (and optionally once more after a resume)."""

from dbr.training.triggers.interval_trigger import _load_optional


class OnceTrigger:
    """Trigger that fires at its first call only.

    Args:
        call_on_resume (bool): also fire at the first call after the trainer
            was resumed from a snapshot (the saved state says it already
            fired; a new trigger given ``call_on_resume=True`` fires once more).
    """

    def __init__(self, call_on_resume=False):
        self._flag_first = True
        self._flag_resumed = bool(call_on_resume)

    @property
    def finished(self):
        """Whether the trigger will never fire again (bool).

        The trainer does not call the ``initialize`` of an extension whose
        trigger is finished.
        """
        return not (self._flag_first or self._flag_resumed)

    def __call__(self, trainer):
        """Return True at the first call (and the first after a resume with ``call_on_resume``)."""
        fire = self._flag_first or self._flag_resumed
        self._flag_first = False
        self._flag_resumed = False
        return fire

    def serialize(self, serializer):
        """Save or load whether the first call has happened (key ``_flag_first``).

        A file without the key (Chainer's older layout) loads with a
        :class:`UserWarning` and counts the first call as done.
        """
        flag_first = _load_optional(
            self,
            serializer,
            "_flag_first",
            self._flag_first,
            "the trigger assumes its first call happened before the snapshot",
        )
        if not getattr(serializer, "dry_run", False):
            self._flag_first = bool(flag_first)
