"""Tools: the registry and its validation, the workspace confinement, and the catalogue."""
