"""The workspace on disk: confined paths, walks, what .gitignore keeps out, binary sniffing."""
