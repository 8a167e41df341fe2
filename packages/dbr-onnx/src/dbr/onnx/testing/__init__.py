"""Helpers for testing exports: example inputs, test cases on disk, and checks with ONNX Runtime.

- :mod:`~dbr.onnx.testing.input_generator`: deterministic example inputs
  (``increasing``, ``nonzero_increasing``, ``positive_increasing``);
- :mod:`~dbr.onnx.testing.get_test_data_set`: ``gen_test_data_set`` exports a
  model with :func:`dbr.onnx.export_testcase` under ``out/opset<N>/<name>``;
- :mod:`~dbr.onnx.testing.test_onnxruntime`: ``check_model_expect`` runs such
  a test case with ONNX Runtime and compares its outputs with the ones written.

These are onnx_chainer 7.8's ``onnx_chainer.testing`` modules, so that tests
written for onnx_chainer run on dbr.
"""

from dbr.onnx.testing import get_test_data_set, input_generator, test_onnxruntime

__all__ = ["get_test_data_set", "input_generator", "test_onnxruntime"]
