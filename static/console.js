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
  document.addEventListener("DOMContentLoaded", showSelectedNote);
  document.addEventListener("htmx:afterSettle", showSelectedNote);
})();
