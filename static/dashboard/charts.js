// Renders every <script type="application/json" data-chart> (a Plotly figure from
// dashboard/charts.py) into a chart beside it: on page load and in every fragment htmx swaps
// in. No inline script anywhere, so the Content-Security-Policy can forbid it.
//
// On a phone most of the cost of the person page is the browser compiling plotly.js and
// drawing six charts, so a chart is drawn only when it comes within a screen of the visible
// part of the page (IntersectionObserver), and plotly.js (named by this script's data-plotly)
// is run only when the first chart needs it. The space a chart will take is kept from the start, so the
// page does not jump when it is drawn.
(function () {
  "use strict";
  var plotlySrc = document.currentScript && document.currentScript.dataset.plotly;
  var waiting = [];
  var requested = false;

  function withPlotly(callback) {
    if (typeof Plotly !== "undefined") return callback();
    waiting.push(callback);
    if (requested || !plotlySrc) return;
    requested = true;
    var script = document.createElement("script");
    script.src = plotlySrc;
    script.onload = function () {
      var queue = waiting;
      waiting = [];
      queue.forEach(function (run) { run(); });
    };
    document.head.appendChild(script);
  }

  function adapt(layout, width) {
    // Text and grid follow the page's colours (light or dark theme) for contrast.
    var style = getComputedStyle(document.body);
    var ink = style.getPropertyValue("--ink").trim() || "#111";
    var rule = style.getPropertyValue("--rule").trim() || "#888";
    layout.font = Object.assign({}, layout.font, { color: ink });
    ["xaxis", "yaxis"].forEach(function (axis) {
      layout[axis] = Object.assign({ gridcolor: rule, linecolor: rule, zerolinecolor: rule }, layout[axis]);
    });
    // The title goes above the chart as page text (it wraps on a phone; Plotly's does not).
    delete layout.title;
    layout.margin = Object.assign({}, layout.margin, { t: 12 });
    if (width < 600) {
      // A phone: one legend entry a row below the plot (entries never run into each other),
      // fewer date ticks, smaller axis titles.
      layout.legend = Object.assign({}, layout.legend, {
        font: { size: 13 }, orientation: "h", entrywidthmode: "fraction", entrywidth: 1,
        y: -0.18, yanchor: "top", x: 0
      });
      layout.margin.l = Math.min(layout.margin.l || 56, 44);
      layout.margin.r = 8;
      if (layout.xaxis && layout.xaxis.type === "date") layout.xaxis.nticks = 4;
      ["xaxis", "yaxis"].forEach(function (axis) {
        if (layout[axis] && layout[axis].title) {
          layout[axis].title = Object.assign({}, layout[axis].title, { font: { size: 13 } });
        }
      });
      var entries = layout.showlegend === false ? 0 : (layout._entries || 0);
      layout.height = (layout.height || 340) + 22 * entries;
    }
    return layout;
  }

  function draw(target, figure, width) {
    var layout = adapt(figure.layout, width);
    delete layout._entries;
    Plotly.newPlot(target, figure.data, layout, {
      responsive: true, displayModeBar: false, displaylogo: false
    }).then(function () { target.style.minHeight = ""; });
  }

  var observer = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (!entry.isIntersecting) return;
      observer.unobserve(entry.target);
      entry.target._clara();
    });
  }, { rootMargin: "100% 0px" }) : null;

  function place(el) {
    var figure = JSON.parse(el.textContent);
    var title = (figure.layout.title && figure.layout.title.text) || "";
    var caption = document.createElement("p");
    caption.className = "chart-title";
    caption.textContent = title;
    var target = document.createElement("div");
    target.className = "chart";
    target.setAttribute("role", "img");
    target.setAttribute("aria-label", title || "chart");
    figure.layout._entries = figure.data.filter(function (t) { return t.showlegend !== false; }).length;
    // The space kept is guessed from the window (a panel is the window less ~70 px of margins
    // and padding), not measured: reading a width here forced a layout of the whole page once
    // per chart as the panels arrived (a long task on a phone). draw() measures, later.
    var narrow = window.innerWidth - 70 < 600;
    var entries = narrow && figure.layout.showlegend !== false ? figure.layout._entries : 0;
    target.style.minHeight = (figure.layout.height || 340) + 22 * entries + "px";
    el.after(caption, target);
    target._clara = function () {
      withPlotly(function () { draw(target, figure, el.parentElement.clientWidth); });
    };
    if (observer) watch(target);
    else target._clara();
  }

  // A chart is watched only once the page's panels have all arrived (no "Loading…" left): they
  // arrive in any order, and a chart whose panel came first sits near the top for a moment,
  // which fetched and ran plotly.js for a chart the page then pushed two screens down. A panel
  // that never arrives must not hold the charts back for ever: watched after 3 s all the same.
  var unwatched = [];
  function watch(target) {
    unwatched.push(target);
    flush(false);
  }
  function flush(anyway) {
    if (!anyway && document.querySelector(".loading")) return;
    unwatched.splice(0).forEach(function (target) { observer.observe(target); });
  }
  document.addEventListener("htmx:afterSettle", function () { flush(false); });
  setTimeout(function () { flush(true); }, 3000);

  function render(root) {
    root.querySelectorAll("script[type='application/json'][data-chart]").forEach(function (el) {
      if (el.dataset.rendered) return;
      el.dataset.rendered = "1";
      place(el);
    });
  }
  htmx.onLoad(render);
})();
