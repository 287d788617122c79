// Console: show only the note of the schema that is selected (without this script every
// note stays visible, which is still correct); recompile when "Changed turns only" is
// ticked; fold the form away once a result is shown.
(function () {
  "use strict";

  function showSelectedNote() {
    var select = document.getElementById("id_entity_schema");
    var notes = document.querySelectorAll("#schema-notes li[data-schema]");
    if (!select) return;
    notes.forEach(function (note) {
      note.hidden = note.dataset.schema !== select.value;
    });
  }

  document.addEventListener("change", function (event) {
    if (event.target && event.target.id === "id_entity_schema") showSelectedNote();
  });
  // "Changed turns only" recompiles through the Compile button (htmx swaps the result),
  // but only once there is a result to fold; without this script the next Compile does it.
  document.addEventListener("change", function (event) {
    if (!event.target || event.target.id !== "id_changed_only") return;
    if (!document.querySelector("#result .diff")) return;
    var button = document.querySelector("#compile-form button.primary");
    if (button) button.click();
  });
  // A compile's result folds the transcript and options away, so the result starts
  // under the Compile button; a refused compile leaves them open to be fixed. Without
  // this script the page the server renders already comes folded.
  document.addEventListener("htmx:afterSettle", function () {
    var compose = document.getElementById("compose");
    if (compose && document.querySelector("#result .diff")) compose.open = false;
  });
  document.addEventListener("DOMContentLoaded", showSelectedNote);
  document.addEventListener("htmx:afterSettle", showSelectedNote);
})();
