"""Mathematical functions: elementwise, reductions, linear algebra, special functions."""
