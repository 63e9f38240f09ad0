"""The support floor, below everything: preset lookup, plain HTML/Markdown tables, words for numbers (no plotting)."""
