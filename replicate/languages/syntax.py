"""Where a tree-sitter parse of any grammar went wrong."""

from __future__ import annotations

from tree_sitter import Tree


def first_error_line(tree: Tree) -> int | None:
    """1-based line of the first ERROR or MISSING node, or None when the tree is clean."""
    if not tree.root_node.has_error:
        return None
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        stack.extend(reversed([child for child in node.children if child.has_error]))
    return tree.root_node.start_point[0] + 1
