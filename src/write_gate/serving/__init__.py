"""The process: settings, logs, the decision log, and the assembly of engine, registry and gate."""
