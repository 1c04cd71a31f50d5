"""The web console: an operator's pages over the gate's services (docs/console.md)."""
