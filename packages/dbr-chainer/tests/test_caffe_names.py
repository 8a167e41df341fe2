"""Chainer's Caffe modules resolve to dbr.links.caffe's objects."""

import dbr.links.caffe
from dbr.chainer.exporters import caffe as exporters_caffe
from dbr.chainer.links import caffe as links_caffe
from dbr.chainer.links.caffe.caffe_function import CaffeFunction


def test_caffe_function_and_export_are_dbrs():
    assert links_caffe.CaffeFunction is dbr.links.caffe.CaffeFunction
    assert CaffeFunction is dbr.links.caffe.CaffeFunction
    assert exporters_caffe.export is dbr.links.caffe.export


def test_exporters_is_a_chainer_submodule():
    import dbr.chainer as chainer

    assert chainer.exporters.caffe is exporters_caffe
