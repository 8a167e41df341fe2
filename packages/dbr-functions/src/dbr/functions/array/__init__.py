"""Array manipulation functions: concat, split, stack, pad, where, ..."""
