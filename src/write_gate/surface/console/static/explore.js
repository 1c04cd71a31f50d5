// The explore page's neighbourhood: the node and the relations touching it, drawn by Cytoscape.js (vendored at a
// pinned version, static/vendor.json). Clicking a neighbour explores it.
"use strict";
(function () {
  var box = document.getElementById("graph");
  if (!box) { return; }
  fetch(box.dataset.src, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
    .then(function (response) { return response.json(); })
    .then(function (graph) {
      // The layout starts from fixed places (the centre in the middle, the others evenly round it), so the same
      // neighbourhood is drawn the same way every time: from one shared place, cose spread them at random, and one
      // drawing in ten or so put a label on another.
      var around = graph.nodes.filter(function (n) { return !n.centre; }).length || 1, placed = 0;
      var elements = graph.nodes.map(function (n) {
        var angle = n.centre ? 0 : 2 * Math.PI * (placed++) / around + Math.PI / 4;
        var radius = n.centre ? 0 : 200;
        return { data: { id: n.id, label: n.id + (n.type ? "\n" + n.type : ""), centre: n.centre ? 1 : 0 },
          position: { x: radius * Math.cos(angle), y: radius * Math.sin(angle) } };
      }).concat(graph.edges.map(function (e) {
        return { data: { id: e.id, source: e.source, target: e.target, label: e.type } };
      }));
      var cy = cytoscape({
        container: box,
        elements: elements,
        // Labels take room in the layout (nodeDimensionsIncludeLabels) and edges are long enough for their own
        // label between the nodes' labels; each label sits on a background so a line under it does not cross it.
        layout: { name: "cose", animate: false, randomize: false, padding: 40, nodeDimensionsIncludeLabels: true,
          idealEdgeLength: function () { return 180; }, nodeRepulsion: function () { return 1000000; } },
        style: [
          { selector: "node", style: { "background-color": "#2457c5", "label": "data(label)", "color": "#1d2330",
            "font-size": 11, "text-wrap": "wrap", "text-valign": "bottom", "text-margin-y": 4, "width": 22, "height": 22,
            "text-background-color": "#fff", "text-background-opacity": 0.9, "text-background-padding": 2 } },
          { selector: "node[centre = 1]", style: { "background-color": "#b45309", "width": 32, "height": 32 } },
          { selector: "edge", style: { "curve-style": "bezier", "target-arrow-shape": "triangle", "width": 1.5,
            "line-color": "#9aa4b5", "target-arrow-color": "#9aa4b5", "label": "data(label)", "font-size": 9,
            "text-rotation": "autorotate", "color": "#6b7280", "text-background-color": "#fff",
            "text-background-opacity": 0.9, "text-background-padding": 2 } }
        ]
      });
      box.dataset.nodes = String(cy.nodes().length);
      box.dataset.edges = String(cy.edges().length);
      box.dataset.ready = "true";
      cy.on("tap", "node", function (event) {
        var id = event.target.id();
        if (!event.target.data("centre")) { window.location.href = box.dataset.explore + encodeURIComponent(id); }
      });
      window.writeGateGraph = cy;
    })
    .catch(function (error) { box.textContent = "The neighbourhood could not be drawn: " + error.message; });
})();
