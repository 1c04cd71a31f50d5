CREATE INDEX ON :_Embedding(key)
