// Console: show only the note of the schema that is selected. Without this script
// every note stays visible, which is still correct.
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
  document.addEventListener("DOMContentLoaded", showSelectedNote);
  document.addEventListener("htmx:afterSettle", showSelectedNote);
})();
