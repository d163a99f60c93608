"""state layer: what branchkeeper persists under the common git dir and in git config."""
