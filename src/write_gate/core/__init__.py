"""The pure core: the vocabulary of a write (requests, names, values, identity, the registry snapshot),
the decisions that check one, and (in `cypher/`) the statement text it compiles to. No I/O here.
"""
