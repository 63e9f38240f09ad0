"""Models built on the floors below: ``llm`` (transformer accounting and traceable layers) and
``counting`` (FLOPs by kind, BLAS levels, the cost of backprop)."""
