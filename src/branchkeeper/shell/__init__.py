"""shell layer: reading an agent's shell command into invocations (tree-sitter-bash)."""
