// After an in-page action (a button or form handled by htmx), put keyboard focus back on the
// item that was acted on, and say what happened in the page's aria-live region (#announce):
// without this, focus falls to the top of the page and a screen reader hears nothing.
// Also asks before a form marked data-confirm is sent. No inline script: the CSP forbids it.
(function () {
  "use strict";
  var USER_EVENTS = { submit: 1, click: 1, change: 1, keyup: 1, search: 1, input: 1 };
  var pending = null; // what the current user-started request acts on

  function announce(text) {
    var region = document.getElementById("announce");
    if (!region || !text) return;
    // Emptied first, so the same words twice ("Saved.", "Saved.") are read twice.
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 50);
  }

  function focusOn(el) {
    if (!el) return;
    if (!el.matches("a, button, input, select, textarea, [tabindex]")) {
      el.setAttribute("tabindex", "-1");
      el.setAttribute("data-focus-return", "");
    }
    el.focus({ preventScroll: false });
  }

  function byId(id) { return id ? document.getElementById(id) : null; }

  document.addEventListener("htmx:beforeRequest", function (evt) {
    var config = evt.detail.requestConfig || {};
    var trigger = config.triggeringEvent;
    if (!trigger || !USER_EVENTS[trigger.type]) { pending = null; return; }
    var elt = evt.detail.elt;
    var item = elt.closest("[data-item]") || elt.closest("[id]");
    var target = evt.detail.target;
    var labelled = elt.closest("[data-announce]");
    pending = {
      verb: (config.verb || "get").toLowerCase(),
      item: item ? item.id : null,
      target: target ? target.id : null,
      // The nearest ancestors that will outlive a removed item (e.g. a forgotten memory).
      outer: item && item.parentElement ? item.parentElement.closest("[id]") : null,
      words: labelled ? labelled.getAttribute("data-announce") : null,
    };
  });

  document.addEventListener("htmx:afterSettle", function (evt) {
    var done = pending;
    if (!done || evt.detail.elt === undefined) return;
    pending = null;
    var fresh = byId(done.item) || byId(done.target);
    if (fresh) {
      // A form that just opened: straight to its first field.
      var field = done.verb === "get" && fresh.querySelector("input:not([type=hidden]), select, textarea");
      focusOn(field || fresh);
    } else if (done.outer && document.contains(done.outer)) {
      focusOn(done.outer);
    } else {
      focusOn(document.querySelector("main h1"));
    }
    var said = fresh && fresh.querySelector("[data-announce-now]");
    var words = (said && said.getAttribute("data-announce-now")) || done.words;
    if (!words && done.verb !== "get") {
      var problem = fresh && fresh.querySelector("[role=alert]");
      words = problem ? "Not saved: " + problem.textContent.trim() : "Saved.";
    }
    announce(words);
  });

  document.addEventListener("htmx:responseError", function (evt) {
    pending = null;
    var status = evt.detail.xhr ? evt.detail.xhr.status : 0;
    var why = status === 403 ? "you are not allowed to do this"
      : status === 404 ? "it is no longer there"
      : "the dashboard could not do it";
    announce("Nothing was changed: " + why + ".");
  });
  document.addEventListener("htmx:sendError", function () {
    pending = null;
    announce("Nothing was changed: the dashboard could not be reached. Check the connection.");
  });

  // Plain (non-htmx) forms that need a second thought, e.g. taking someone off a care team.
  document.addEventListener("submit", function (evt) {
    var form = evt.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) evt.preventDefault();
  }, true);

  // A note's "Seen by: ..." follows its writer's choice of readers (a box or a radio button
  // carrying data-seen-by, the hint named by aria-controls).
  document.addEventListener("change", function (evt) {
    var input = evt.target;
    var text = input.getAttribute && input.getAttribute("data-seen-by");
    if (text === null || text === undefined) return;
    var hint = document.getElementById(input.getAttribute("aria-controls"));
    if (!hint) return;
    if (input.type === "checkbox" && !input.checked) text = input.getAttribute("data-seen-by-off");
    hint.textContent = text;
  });
})();
