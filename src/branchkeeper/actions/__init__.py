"""actions layer."""
