// Building the page's elements: h(tag, attrs, ...children), one helper for every module that
// draws (views.js, models.js, jobs.js). An attribute that is undefined, null or false is left
// out; children are nodes or text, nested arrays flattened, null and undefined skipped.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) node.append(c);
  return node;
}
