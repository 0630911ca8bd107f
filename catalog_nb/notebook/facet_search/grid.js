// The results grid of FacetSearch: a table that fits its cell (it scrolls inside itself when
// wider), headers that sort, rows that open the details, collections that fold partitions.
// Cells arrive as HTML the Python side escaped; this file only lays them out.

function render({ model, el }) {
  const open = new Set();
  const root = document.createElement("div");
  root.className = "cnb-grid";
  el.appendChild(root);

  function sortOf(column) {
    const current = model.get("sort");
    const field = current.replace(/^-/, "");
    if (field !== column.sort) return column.numeric ? "-" + column.sort : column.sort;
    return current.startsWith("-") ? field : "-" + field;
  }

  function row(cells, depth, parent) {
    const tr = document.createElement("tr");
    const key = cells.key;
    tr.dataset.key = key;
    if (key && key === model.get("value")) tr.classList.add("cnb-selected");
    const children = cells.children || [];
    for (const column of model.get("columns")) {
      const td = document.createElement("td");
      if (column.numeric) td.classList.add("cnb-num");
      td.dataset.column = column.name;
      let inner = cells[column.name] ?? "";
      if (column.name === "name") {
        if (children.length) {
          const mark = open.has(parent) ? "▾" : "▸";
          inner = `<span class="cnb-fold">${mark}</span> ${inner}` +
            ` <small class="cnb-count">${children.length.toLocaleString()} partitions</small>`;
        }
        if (depth) td.classList.add("cnb-child");
      }
      td.innerHTML = inner;
      tr.appendChild(td);
    }
    tr.addEventListener("click", () => {
      if (children.length && !key) {
        open.has(parent) ? open.delete(parent) : open.add(parent);
        draw();
        return;
      }
      if (children.length) open.add(parent);
      model.set("value", key);
      model.save_changes();
    });
    return tr;
  }

  function draw() {
    root.innerHTML = "";
    const message = model.get("message");
    if (message) {
      const note = document.createElement("div");
      note.className = "cnb-message";
      note.textContent = message;
      root.appendChild(note);
    }
    const rows = model.get("rows");
    if (!rows.length) return;
    const scroller = document.createElement("div");
    scroller.className = "cnb-scroll";
    const table = document.createElement("table");
    const head = document.createElement("tr");
    const current = model.get("sort");
    for (const column of model.get("columns")) {
      const th = document.createElement("th");
      th.textContent = column.label;
      th.dataset.column = column.name;
      if (column.numeric) th.classList.add("cnb-num");
      if (column.sort) {
        th.classList.add("cnb-sortable");
        th.title = "sort by " + column.label.toLowerCase();
        if (current.replace(/^-/, "") === column.sort) {
          th.textContent += current.startsWith("-") ? " ▼" : " ▲";
          th.classList.add("cnb-sorted");
        }
        th.addEventListener("click", () => {
          model.set("sort", sortOf(column));
          model.save_changes();
        });
      }
      head.appendChild(th);
    }
    const thead = document.createElement("thead");
    thead.appendChild(head);
    const body = document.createElement("tbody");
    rows.forEach((cells, index) => {
      const id = cells.key || "group-" + index;
      body.appendChild(row(cells, 0, id));
      // Folded partitions stay in the page (hidden), so a key is always findable.
      for (const child of cells.children || []) {
        const tr = row(child, 1, id);
        tr.hidden = !open.has(id);
        body.appendChild(tr);
      }
    });
    table.append(thead, body);
    scroller.appendChild(table);
    root.appendChild(scroller);
  }

  for (const name of ["rows", "columns", "sort", "value", "message"]) {
    model.on("change:" + name, draw);
  }
  draw();
}

export default { render };
