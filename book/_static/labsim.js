/* labsim book: mark tables that scroll sideways, so the stylesheet can show a cue (labsim.css).
   The book's markdown tables get the same frame as labsim's own. Offline, no dependencies.
   Also small repairs of the theme (sphinx-book-theme 1.3 on pydata-sphinx-theme 0.17): the navigation
   buttons, the light-only colour scheme, and accessible names (see accessibility() below). */
(function () {
  "use strict";
  // The words this script writes, in the page's language (the Korean edition: <html lang="ko">)
  var WORDS = (document.documentElement.lang || "").indexOf("ko") === 0 ?
    {nav: "사이트 탐색", toc: "이 쪽의 내용", whole: "⊖ 그림 전체", readable: "⊕ 읽기 좋은 크기"} :
    {nav: "Site navigation", toc: "Contents of this page", whole: "⊖ whole drawing", readable: "⊕ readable size"};
  // The site is designed for light mode only (_config.yml sets default_mode: light and labsim.css hides
  // the theme switcher): forget a mode stored earlier (by this site's former switcher, or by another site
  // of this theme on the same origin, as project pages on one host share it).
  try { localStorage.removeItem("mode"); localStorage.removeItem("theme"); } catch (e) { /* private mode */ }
  document.documentElement.dataset.mode = "light";
  document.documentElement.dataset.theme = "light";
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
    // a region that scrolls sideways can be reached and scrolled from the keyboard (WCAG 2.1.1)
    if (scrolls) {
      s.setAttribute("tabindex", "0");
      if (!s.hasAttribute("role")) { s.setAttribute("role", "region"); }
      if (!s.hasAttribute("aria-label") && !s.hasAttribute("aria-labelledby")) {
        var cap = f.querySelector(".labsim-table-caption, caption");
        var what = f.classList.contains("labsim-graph-frame") ? "Drawing" : "Table";
        var text = cap ? cap.textContent.trim() : "";
        s.setAttribute("aria-label", what + (text ? ": " + text : "") + " (scrolls sideways)");
      }
    } else if (s.getAttribute("tabindex") === "0") {
      s.removeAttribute("tabindex");
    }
    // A table wider than the text column may take the room of the "On this page" column on a wide
    // screen (labsim-fit.css), as figures do. Measured against the frame's parent, whose width the
    // break-out does not change, so the class never flips back and forth.
    if (!f.classList.contains("labsim-graph-frame") && f.parentElement) {
      f.classList.toggle("labsim-breakout", s.scrollWidth > f.parentElement.clientWidth + 1);
    }
    // a drawing that scrolls sideways offers its whole, zoomed out (labsim.css: .labsim-graph-whole)
    var gbox = f.classList.contains("labsim-graph-frame") && f.closest(".labsim-graph-box");
    if (gbox) { gbox.classList.toggle("labsim-can-zoom", scrolls || gbox.classList.contains("labsim-whole")); }
    f.classList.toggle("at-start", s.scrollLeft <= 1);
    f.classList.toggle("at-end", s.scrollLeft + s.clientWidth >= s.scrollWidth - 1);
    f.style.setProperty("--labsim-scroll-top", s.offsetTop + "px");
    var first = s.querySelector("tbody tr:not(.labsim-note-row) > :first-child");
    var sticky = first && f.classList.contains("labsim-table") ? first.offsetWidth : 0;
    f.style.setProperty("--labsim-sticky-width", sticky + "px");
  }
  function all() { frames().forEach(update); }

  // The theme's scripts bind the sidebar buttons to the first .primary-toggle / .secondary-toggle of the
  // page, the copy in the header that sphinx-book-theme hides. The visible copies (article header)
  // forward their click to it: the site navigation opens (a drawer on a phone, the sidebar shown or
  // hidden on a wide screen), and so does the page's contents.
  function navigation() {
    ["primary-toggle", "secondary-toggle"].forEach(function (name) {
      var copies = document.querySelectorAll("." + name);
      var first = copies[0];
      [].slice.call(copies, 1).forEach(function (b) {
        b.addEventListener("click", function (e) {
          e.preventDefault();
          e.stopPropagation();
          first.click();
        });
      });
      var label = name === "primary-toggle" ? WORDS.nav : WORDS.toc;
      [].forEach.call(copies, function (b) {
        if (!b.hasAttribute("aria-label")) { b.setAttribute("aria-label", label); }
      });
    });
  }

  // Accessible names: a control whose visible text is not part of its name (the theme's search field
  // "Search… Ctrl+K" named "Search", the code toggles "Show code cell source" named "Toggle hidden
  // content") is named by its text (WCAG 2.5.3). The bibliography's entries are list items of its list.
  function accessibility() {
    document.querySelectorAll("button[aria-label], summary[aria-label], a[aria-label]").forEach(function (el) {
      if (el.closest(".labsim-figure")) { return; }
      var text = el.textContent.replace(/\s+/g, " ").trim();
      var name = el.getAttribute("aria-label").trim().toLowerCase();
      if (text && name.indexOf(text.toLowerCase()) < 0) { el.removeAttribute("aria-label"); }
    });
    document.querySelectorAll('[role="list"] > [role="doc-biblioentry"]').forEach(function (el) {
      el.setAttribute("role", "listitem");
    });
  }

  function init() {
    navigation();
    accessibility();
    frames().forEach(function (f) {
      var s = f.querySelector(":scope > .labsim-scroll, :scope > .pst-scrollable-table-container");
      if (s) { s.addEventListener("scroll", function () { update(f); }, {passive: true}); }
      update(f);
    });
    // a drawing too wide for the page at readable labels scrolls sideways (the pan); one button zooms
    // it out to the page's width, the whole drawing at once, and back to readable labels (the zoom)
    document.querySelectorAll(".labsim-graph-box").forEach(function (box) {
      var frame = box.querySelector(".labsim-graph-frame");
      if (!frame || box.querySelector(".labsim-graph-whole")) { return; }
      var tools = document.createElement("div");
      tools.className = "labsim-graph-tools";
      var b = document.createElement("button");
      b.type = "button";
      b.className = "labsim-graph-whole";
      b.setAttribute("aria-pressed", "false");
      b.textContent = WORDS.whole;
      b.addEventListener("click", function () {
        var whole = box.classList.toggle("labsim-whole");
        b.setAttribute("aria-pressed", whole ? "true" : "false");
        b.textContent = whole ? WORDS.readable : WORDS.whole;
        update(frame);
      });
      tools.appendChild(b);
      var full = box.querySelector(":scope > .labsim-fullsize");
      if (full) { tools.appendChild(full); }
      box.insertBefore(tools, frame);
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
