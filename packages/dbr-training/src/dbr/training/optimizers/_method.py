"""The base of the optimizers whose constructor arguments are their hyperparameters."""

import inspect

from dbr.training import optimizer


class HyperparameterMethod(optimizer.GradientMethod):
    """A :class:`~dbr.training.optimizer.GradientMethod` built from its hyperparameters.

    A subclass's ``__init__`` names the hyperparameters and their defaults and
    passes them on as keywords, which are set on :attr:`hyperparam`; each
    parameter of that ``__init__`` also becomes a
    :class:`~dbr.training.optimizer.HyperparameterProxy` attribute of the class
    (``optimizer.lr`` reads and writes ``optimizer.hyperparam.lr``). Its
    update rules are instances of the subclass's ``_rule_class``.
    """

    _rule_class = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        names = list(inspect.signature(cls.__init__).parameters)[1:]
        for name in names:
            current = inspect.getattr_static(cls, name, None)
            if not isinstance(current, optimizer.HyperparameterProxy):
                setattr(cls, name, optimizer.HyperparameterProxy(name))

    def __init__(self, **hyperparameters):
        super().__init__()
        for name, value in hyperparameters.items():
            setattr(self.hyperparam, name, value)

    def create_update_rule(self):
        """Return an update rule (of ``_rule_class``) reading this optimizer's hyperparameters."""
        return self._rule_class(self.hyperparam)
