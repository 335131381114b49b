"""What the structure tests of the layer (test_layer_structure.py) and the host
(test_host_structure.py) share: finding a cycle in a graph of folders or areas."""

from __future__ import annotations

from collections.abc import Iterable


def find_cycle(edges: Iterable[tuple[str, str]]) -> list[str] | None:
    """A cycle of folders, as a path that starts and ends at the same folder, or None."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None
