"""The one table component (labsim.support.tables): SI display, exact values kept, notes, cards."""
from __future__ import annotations

import re

from labsim.support.tables import Table, fmt_si, html_table, markdown_table


def test_fmt_si():
    assert fmt_si(8_623_493_120, "FLOP") == "8.62 GFLOP"
    assert fmt_si(33.6e6, "B") == "33.6 MB"
    assert fmt_si(42.4e-6, "s") == "42.4 µs"
    assert fmt_si(512, "B") == "512 B"
    assert fmt_si(999_970, "B") == "1 MB"
    assert fmt_si(0, "B") == "0 B"
    assert fmt_si("n/a", "B") == "n/a"
    assert fmt_si(float("inf"), "s") == "∞"


def test_html_table_keeps_exact_values_and_labels_cells():
    h = html_table([{"kernel": "k0", "FLOPs": 8_623_493_120, "bytes": 4096}], "cap", units={"FLOPs": "FLOP"})
    assert ">8.62 GFLOP<" in h and 'title="8,623,493,120"' in h and 'data-value="8623493120"' in h
    assert ">4,096<" in h  # no unit asked: the exact integer
    assert 'data-label="FLOPs"' in h and 'scope="row"' in h
    assert "tabular-nums" in h and "padding:4px 8px" in h
    assert 'class="labsim-table labsim-scroll-frame"' in h  # three columns: no phone cards
    assert "labsim-cards" in html_table([{"a": 1, "b": 2, "c": 3, "d": 4}])


def test_note_column_becomes_a_footnote_row():
    h = html_table([{"function": "f", "FLOPs": 1, "why": "because"}, {"function": "g", "FLOPs": 2, "why": ""}],
                   notes=["why"])
    assert h.count('class="labsim-note-row"') == 1 and 'colspan="2"' in h
    assert "<th scope=\"col\" class=\"text\"" in h and ">why</th>" not in h


def test_table_text_view_is_unchanged():
    rows = [{"a": 1234, "b": "x"}]
    t = Table(rows, "c", units={"a": "B"})
    assert repr(t) == markdown_table(rows) == "| a | b |\n|---|---|\n| 1,234 | x |"
    assert re.search(r">1.23 kB<", t._repr_html_())
