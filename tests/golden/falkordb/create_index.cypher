CREATE INDEX FOR (n:`Person`) ON (n.`_key`)
