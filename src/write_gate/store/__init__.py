"""The registry's store: `:Schema` nodes on the graph, the schema files that fill them, and migrations."""
