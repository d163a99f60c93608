"""branchkeeper: lossless branch and worktree hygiene for repositories worked on by coding agents."""

__version__ = "0.1.0"
