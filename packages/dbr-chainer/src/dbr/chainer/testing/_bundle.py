"""Class generation shared by ``parameterize``, ``inject_backend_tests`` and ``fix_random``.

A generating decorator does not return a class: it defines one subclass per
variant in the decorated class's module and returns a :class:`CaseBundle`
listing them, so the module's name for the original class is bound to an
object pytest does not collect. Stacked generating decorators expand every
class of the bundle they receive and remove those classes from the module.
"""

import collections
import inspect
import sys

Case = collections.namedtuple("Case", ("klass", "module_name", "class_name"))
Case.__doc__ = (
    """One test class: generated ones carry the module and name they are registered under."""
)


class CaseBundle:
    """The test classes one generating decorator produced (``cases``: a list of :class:`Case`)."""

    def __init__(self, cases):
        self.cases = list(cases)

    def __repr__(self):
        names = ", ".join(c.klass.__name__ for c in self.cases)
        return f"<generated test classes: {names}>"


def as_cases(target):
    """The :class:`Case` list of a bundle, or a one-element list for a bare class."""
    if isinstance(target, CaseBundle):
        return target.cases
    if not isinstance(target, type):
        raise TypeError(f"expected a test class or generated test classes, got {target!r}")
    return [Case(target, None, None)]


def make_decorator(variants):
    """Return a class decorator expanding each class into the classes ``variants(cls)`` describes.

    ``variants(base)`` yields ``(name, members, wrap)``: the new class's name,
    extra class attributes, and a function mapping each ``test_*`` method of
    ``base`` to its replacement (None hides the test in that class).
    """

    def decorate(target):
        generated = []
        for klass, module_name, class_name in as_cases(target):
            if module_name is None:
                module_name = klass.__module__
            else:
                delattr(sys.modules[module_name], class_name)
            module = sys.modules[module_name]
            for name, members, wrap in variants(klass):
                generated.append(_define(klass, module, name, members, wrap))
        return CaseBundle(generated)

    return decorate


def _define(base, module, name, members, wrap):
    namespace = dict(members)
    for attr, method in inspect.getmembers(base, inspect.isfunction):
        if attr.startswith("test_"):
            namespace[attr] = wrap(method)
    cls = type(name, (base,), namespace)
    cls.__module__ = module.__name__
    cls.__qualname__ = name
    setattr(module, name, cls)
    return Case(cls, module.__name__, name)
