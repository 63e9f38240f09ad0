"""Colour-blind-safe colours (Okabe & Ito, 2008) used by every figure."""
OKABE_ITO = {
    "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7", "grey": "#999999",
    "black": "#000000",
}
SEQUENCE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#999999"]

# op kinds and event kinds -> colour
KIND_COLORS = {
    "input": "#F0E442", "elementwise": "#56B4E9", "reduction": "#009E73", "contraction": "#E69F00",
    "data movement": "#CC79A7", "constant": "#DDDDDD", "composite": "#D55E00", "output": "#FFFFFF",
    "kernel": "#E69F00", "copy": "#56B4E9", "api": "#999999", "wait": "#DDDDDD", "launch": "#CC79A7",
}
