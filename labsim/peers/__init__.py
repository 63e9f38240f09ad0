"""Parity with peer tools: XLA's ``cost_analysis`` and PyTorch's ``FlopCounterMode`` (``parity``)."""
