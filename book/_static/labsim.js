/* labsim book: mark tables that scroll sideways, so the stylesheet can show a cue (labsim.css).
   The book's markdown tables get the same frame as labsim's own. Offline, no dependencies. */
(function () {
  "use strict";
  function frames() {
    document.querySelectorAll(".bd-article .pst-scrollable-table-container").forEach(function (c) {
      if (!c.parentElement.classList.contains("labsim-scroll-frame")) {
        var f = document.createElement("div");
        f.className = "labsim-scroll-frame";
        c.parentNode.insertBefore(f, c);
        f.appendChild(c);
        // label each cell with its column's header, so that on a phone the row can become a card
        var t = c.querySelector("table");
        var heads = t ? [].map.call(t.querySelectorAll("thead th"), function (h) { return h.textContent.trim(); }) : [];
        if (heads.length >= 3) {
          f.classList.add("labsim-md-cards");
          t.querySelectorAll("tbody tr").forEach(function (r) {
            [].forEach.call(r.children, function (cell, k) {
              if (heads[k] && !cell.hasAttribute("data-label")) { cell.setAttribute("data-label", heads[k]); }
            });
          });
        }
      }
    });
    return document.querySelectorAll(".labsim-scroll-frame");
  }
  function update(f) {
    var s = f.querySelector(":scope > .labsim-scroll, :scope > .pst-scrollable-table-container");
    if (!s) { return; }
    var scrolls = s.scrollWidth > s.clientWidth + 1;
    f.classList.toggle("is-scrollable", scrolls);
    f.classList.toggle("at-start", s.scrollLeft <= 1);
    f.classList.toggle("at-end", s.scrollLeft + s.clientWidth >= s.scrollWidth - 1);
    f.style.setProperty("--labsim-scroll-top", s.offsetTop + "px");
    var first = s.querySelector("tbody tr:not(.labsim-note-row) > :first-child");
    var sticky = first && f.classList.contains("labsim-table") ? first.offsetWidth : 0;
    f.style.setProperty("--labsim-sticky-width", sticky + "px");
  }
  function all() { frames().forEach(update); }
  function init() {
    frames().forEach(function (f) {
      var s = f.querySelector(":scope > .labsim-scroll, :scope > .pst-scrollable-table-container");
      if (s) { s.addEventListener("scroll", function () { update(f); }, {passive: true}); }
      update(f);
    });
    // a graph drawing opens full size (a fixed layer over the page) and closes again
    document.querySelectorAll(".labsim-fullsize").forEach(function (b) {
      b.addEventListener("click", function () {
        var box = b.closest(".labsim-graph-box");
        var full = box.classList.toggle("labsim-full");
        b.textContent = full ? "✕ close" : "⤢ full size";
        document.body.style.overflow = full ? "hidden" : "";
      });
    });
    document.addEventListener("keydown", function (e) {
      var open = document.querySelector(".labsim-graph-box.labsim-full .labsim-fullsize");
      if (e.key === "Escape" && open) { open.click(); }
    });
    window.addEventListener("resize", all);
    if (document.fonts && document.fonts.ready) { document.fonts.ready.then(all); }
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", init); } else { init(); }
})();
