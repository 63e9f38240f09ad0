"""The machines: what runs a compiled program and how long it takes. ``events`` (one trace type for
every timeline), ``roofline`` (the cost model), ``runtime`` (host ⇄ device), ``simt`` (a GPU that runs
the kernel IR warp by warp with real values: occupancy, divergence, schedulers, coalescing),
``systolic`` (a cycle-level systolic array: weight-, output- and input-stationary). Reads the compiler,
the hardware presets and the core; records events, never draws them."""
