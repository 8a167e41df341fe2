"""DeviceResident: objects that move to a device through device_resident_accept."""

import numpy
import pytest

from dbr.core import Chain, ChainList, Link, Parameter, backend
from dbr.core.device_resident import DeviceResident, DeviceResidentsVisitor


class _Table(DeviceResident):
    def __init__(self, values):
        super().__init__()
        self.values = values

    def device_resident_accept(self, visitor):
        super().device_resident_accept(visitor)
        self.values = visitor.visit_array(self.values)


class _Recorder(DeviceResidentsVisitor):
    def __init__(self):
        self.seen = []

    def visit_device_resident(self, device_resident):
        self.seen.append(("resident", device_resident))

    def visit_array(self, arr):
        self.seen.append(("array", arr.shape))
        return arr

    def visit_variable(self, param):
        self.seen.append(("variable", param.name))


def test_to_device_sends_declared_arrays_and_records_the_device():
    class _Device(backend.CpuDevice):
        sent = []

        def send(self, arrays):
            self.sent.append(arrays)
            return arrays.copy()

    target = _Device()
    values = numpy.arange(3.0)
    table = _Table(values)
    assert table.device is backend.cpu and table.xp is numpy
    assert table.to_device(target) is table
    assert table.device is target
    assert target.sent == [values]
    assert table.values is not values and (table.values == values).all()


def test_deprecated_transfers_warn():
    table = _Table(numpy.zeros(2))
    with pytest.warns(DeprecationWarning, match=r"_Table.to_cpu is deprecated.*'@numpy'"):
        assert table.to_cpu() is table
    assert table.device is backend.cpu


def test_base_visitor_methods_raise():
    visitor = DeviceResidentsVisitor()
    for call in (
        lambda: visitor.visit_device_resident(None),
        lambda: visitor.visit_array(numpy.zeros(1)),
        lambda: visitor.visit_variable(None),
    ):
        with pytest.raises(NotImplementedError, match="DeviceResidentsVisitor.visit_"):
            call()


def test_link_is_a_device_resident_visiting_params_persistents_and_children():
    child = Link()
    with child.init_scope():
        child.W = Parameter(numpy.zeros((2, 3), numpy.float32))
    child.add_persistent("mean", numpy.zeros(4))
    child.add_persistent("count", 3)
    chain = Chain()
    with chain.init_scope():
        chain.c = child
    chain_list = ChainList(chain)
    assert isinstance(chain_list, DeviceResident)
    recorder = _Recorder()
    chain_list.device_resident_accept(recorder)
    assert recorder.seen == [
        ("resident", chain_list),
        ("resident", chain),
        ("resident", child),
        ("variable", "W"),
        ("array", (4,)),
    ]
