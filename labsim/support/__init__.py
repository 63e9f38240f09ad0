"""The support floor, below everything: preset lookup and plain HTML/Markdown tables (no plotting)."""
