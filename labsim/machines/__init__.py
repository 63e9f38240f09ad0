"""The machines: what runs a compiled program and how long it takes. ``events`` (one trace type for
every timeline), ``roofline`` (the cost model), ``runtime`` (host ⇄ device). Reads the compiler,
the hardware presets and the core; records events, never draws them."""
