// One facet of FacetSearch as checkboxes: a click toggles its category; the count stands at
// the right. Labels arrive as "category (count)".

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "cnb-checklist";
  el.appendChild(root);

  function draw() {
    root.innerHTML = "";
    const chosen = new Set(model.get("value"));
    for (const [label, value] of model.get("options")) {
      const found = /^(.*) \(([\d,]+)\)$/.exec(label);
      const line = document.createElement("label");
      line.className = "cnb-option";
      line.dataset.value = value;
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = chosen.has(value);
      box.addEventListener("change", () => {
        const now = model.get("value").filter((v) => v !== value);
        if (box.checked) now.push(value);
        model.set("value", now);
        model.save_changes();
      });
      const name = document.createElement("span");
      name.className = "cnb-option-name";
      name.textContent = found ? found[1] : label;
      name.title = name.textContent;
      const count = document.createElement("span");
      count.className = "cnb-option-count";
      count.textContent = found ? found[2] : "";
      line.append(box, name, count);
      root.appendChild(line);
    }
  }

  model.on("change:options", draw);
  model.on("change:value", draw);
  draw();
}

export default { render };
