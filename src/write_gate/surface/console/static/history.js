// The history page's live list: asks the console for changes after the page's cursor every data-poll-ms, and puts
// each new one at the top. Nothing is asked while no history page is open.
"use strict";
(function () {
  var table = document.getElementById("changes");
  if (!table || !table.dataset.cursor) { return; }
  var cursor = table.dataset.cursor;
  var every = Number(table.dataset.pollMs) || 2000;
  var query = table.dataset.query || "";
  var body = table.tBodies[0];

  function cell(row, text) {
    var td = document.createElement("td");
    td.textContent = text;
    row.appendChild(td);
    return td;
  }

  // Values come as the server renders them (before_text, after_text), so a live row reads as it will after a reload.
  function show(change) {
    if (body.querySelector('tr[data-change-id="' + CSS.escape(change.change_id) + '"]')) { return; }
    var row = document.createElement("tr");
    row.dataset.changeId = change.change_id;
    row.className = "fresh";
    var time = document.createElement("time");
    time.textContent = change.at;
    cell(row, "").appendChild(time);
    cell(row, change.agent || "");
    cell(row, change.op);
    cell(row, change.subject_text);
    var props = cell(row, "");
    change.properties.forEach(function (p) {
      var line = document.createElement("div");
      var name = document.createElement("code");
      name.textContent = p.property;
      line.appendChild(name);
      line.appendChild(document.createTextNode(": " + p.before_text + " → " + p.after_text));
      props.appendChild(line);
    });
    body.insertBefore(row, body.firstChild);
  }

  function poll() {
    fetch("api/changes?cursor=" + encodeURIComponent(cursor) + query, {
      headers: { "Accept": "application/json" }, credentials: "same-origin"
    }).then(function (response) {
      if (!response.ok) { throw new Error(String(response.status)); }
      return response.json();
    }).then(function (answer) {
      answer.changes.forEach(show);
      cursor = answer.next_cursor;
      table.dataset.cursor = cursor;
    }).catch(function (error) {
      document.getElementById("live-state").textContent = "Live updates stopped: " + error.message + ". Reload the page.";
      cursor = null;
    }).then(function () {
      if (cursor) { window.setTimeout(poll, every); }
    });
  }
  window.setTimeout(poll, every);
})();
