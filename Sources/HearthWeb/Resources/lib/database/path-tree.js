// A mutable tree of values by path, for facts about locations (which are complete, …).

/// Values at paths; a node without a value or children is pruned.
export class PathTree {
  constructor() {
    this.value = undefined;
    this.children = new Map();
  }

  /// The subtree at `segments`, or null.
  subtree(segments) {
    let tree = this;
    for (const segment of segments) {
      tree = tree.children.get(segment);
      if (!tree) return null;
    }
    return tree;
  }

  get(segments) { return this.subtree(segments)?.value; }

  set(segments, value) {
    let tree = this;
    for (const segment of segments) {
      let child = tree.children.get(segment);
      if (!child) {
        child = new PathTree();
        tree.children.set(segment, child);
      }
      tree = child;
    }
    tree.value = value;
  }

  /// Removes the value at `segments` (and, with `subtree`, everything below it).
  delete(segments, subtree = false) {
    const trail = [this];
    for (const segment of segments) {
      const child = trail[trail.length - 1].children.get(segment);
      if (!child) return;
      trail.push(child);
    }
    const target = trail[trail.length - 1];
    target.value = undefined;
    if (subtree) target.children = new Map();
    for (let index = segments.length; index > 0; index -= 1) {
      const node = trail[index];
      if (node.value !== undefined || node.children.size > 0) break;
      trail[index - 1].children.delete(segments[index - 1]);
    }
  }

  /// The first value found from the root down to `segments`, as { path, value }, or null.
  findAbove(segments) {
    let tree = this;
    if (tree.value !== undefined) return { path: [], value: tree.value };
    for (let index = 0; index < segments.length; index += 1) {
      tree = tree.children.get(segments[index]);
      if (!tree) return null;
      if (tree.value !== undefined) return { path: segments.slice(0, index + 1), value: tree.value };
    }
    return null;
  }

  /// Calls `visit(path, value)` for every value at or below `segments`.
  forEachBelow(segments, visit) {
    const start = this.subtree(segments);
    if (!start) return;
    const walk = (tree, path) => {
      if (tree.value !== undefined) visit(path, tree.value);
      for (const [key, child] of tree.children) walk(child, [...path, key]);
    };
    walk(start, segments);
  }
}
