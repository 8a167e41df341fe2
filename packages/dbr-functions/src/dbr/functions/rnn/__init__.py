"""Recurrent functions: lstm cells and the n-step RNN family."""
