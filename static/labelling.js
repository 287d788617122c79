// Labelling: one-key verdicts and row navigation, and conflict messages swapped in.
// Without this script every button and link still works by mouse or Tab + Enter.
(function () {
  "use strict";

  var VERDICT_KEYS = { c: "c", i: "i", u: "u", d: "d", h: "h" };  // h: still needed ("hold")
  var NEXT_KEYS = { n: true, j: true, ArrowRight: true };
  var PREVIOUS_KEYS = { p: true, k: true, ArrowLeft: true };

  function typing(target) {
    if (!target) return false;
    var tag = target.tagName;
    return tag === "TEXTAREA" || tag === "INPUT" || tag === "SELECT" || target.isContentEditable;
  }

  function busy(labeller) {
    var form = labeller.querySelector("form.verdict-form");
    return form && form.classList.contains("htmx-request");
  }

  // htmx wires up a swapped-in row a moment after showing it (on settle). A key pressed
  // in between would submit the form the plain way; it is held until the row is ready.
  var pending = null;

  function ready(labeller) {
    return labeller.dataset.ready === "1";
  }

  function click(selector) {
    var element = document.querySelector(selector);
    if (element) element.click();
    return Boolean(element);
  }

  document.addEventListener("keydown", function (event) {
    var labeller = document.getElementById("labeller");
    if (!labeller || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    if (busy(labeller)) return;  // a save is on its way: one key, one verdict
    if (!known(event.key)) return;
    if (!ready(labeller)) {
      pending = event.key;
      event.preventDefault();
      return;
    }
    if (act(labeller, event.key)) event.preventDefault();
  });

  function known(key) {
    return Boolean(VERDICT_KEYS[key] || NEXT_KEYS[key] || PREVIOUS_KEYS[key] || key === "e");
  }

  function act(labeller, key) {
    var handled = false;
    if (VERDICT_KEYS[key]) {
      handled = click('#labeller button[data-key="' + VERDICT_KEYS[key] + '"]');
    } else if (NEXT_KEYS[key]) {
      handled = click('#labeller a[rel="next"]');
    } else if (PREVIOUS_KEYS[key]) {
      handled = click('#labeller a[rel="prev"]');
    } else if (key === "e") {
      var note = labeller.querySelector("textarea");
      if (note) { note.focus(); handled = true; }
    }
    return handled;
  }

  document.addEventListener("htmx:load", function (event) {
    var labeller = document.getElementById("labeller");
    if (!labeller || !(event.target === labeller || event.target.contains(labeller))) return;
    labeller.dataset.ready = "1";
    if (pending !== null) {
      var key = pending;
      pending = null;
      act(labeller, key);
    }
  });

  // A stale tab gets 409 with the conflict message in the labeller: show it.
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr.status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });
})();
