"""Evaluation functions (not differentiable): accuracy, precision, recall, ..."""
