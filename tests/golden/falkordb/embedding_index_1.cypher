CREATE INDEX FOR (v:_Embedding) ON (v.key)
