// Small behaviours of every page, with no inline script (the Content-Security-Policy forbids them).
"use strict";
document.querySelectorAll("select.autosubmit").forEach(function (select) {
  select.addEventListener("change", function () { select.form.submit(); });
});

// The session's CSRF token, for a script's POSTs (forms carry it as a field).
window.writeGateCsrf = function () {
  var meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
};
