"""Statement builders: pure functions from validated names to Cypher text plus parameters,
one module per family of statements.
"""
